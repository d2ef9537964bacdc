// The deployment's agent registry: one Durable Object holding validated AgentConfigs by name, and the
// deployment's session index and usage totals (session-index.ts).
import { DurableObject } from "cloudflare:workers";
import type { Env } from "../env";
import type { AgentConfig } from "../protocol/agent-config";
import type { SessionListQuery, SessionSummary, UsageDay, UsageQuery, UsageRow } from "../protocol/session-index";
import { randomId } from "../runtime/ids";
import { migrate, REGISTRY_MIGRATIONS } from "./migrate";
import { eraseSession, getSession, isErased, listSessions, upsertSession, usageTotals } from "./session-index";

/** The deployment's single registry object. */
export function registry(env: Pick<Env, "REGISTRY">) {
  return env.REGISTRY.get(env.REGISTRY.idFromName("registry"));
}

export class RegistryObject extends DurableObject<Env> {
  /** Test hook (TEST_HOOKS=1 only): index writes that fail before they land. */
  private failingIndexWrites = 0;
  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    void ctx.blockConcurrencyWhile(async () => {
      migrate(ctx.storage, REGISTRY_MIGRATIONS);
    });
  }

  /** Stores a validated config; `created` tells whether the name was new. */
  async put(config: AgentConfig): Promise<{ created: boolean; config: AgentConfig }> {
    const sql = this.ctx.storage.sql;
    const now = Date.now();
    const existed = sql.exec("SELECT 1 FROM agents WHERE name = ?", config.name).toArray().length > 0;
    sql.exec(
      `INSERT INTO agents (name, config, created_at, updated_at) VALUES (?, ?, ?, ?)
       ON CONFLICT (name) DO UPDATE SET config = excluded.config, updated_at = excluded.updated_at`,
      config.name,
      JSON.stringify(config),
      now,
      now,
    );
    return { created: !existed, config };
  }

  async get(name: string): Promise<AgentConfig | null> {
    const row = this.ctx.storage.sql.exec<{ config: string }>("SELECT config FROM agents WHERE name = ?", name).toArray()[0];
    return row ? (JSON.parse(row.config) as AgentConfig) : null;
  }

  async list(): Promise<AgentConfig[]> {
    return this.ctx.storage.sql
      .exec<{ config: string }>("SELECT config FROM agents ORDER BY name")
      .toArray()
      .map((r) => JSON.parse(r.config) as AgentConfig);
  }

  async names(): Promise<string[]> {
    return this.ctx.storage.sql
      .exec<{ name: string }>("SELECT name FROM agents ORDER BY name")
      .toArray()
      .map((r) => r.name);
  }

  async remove(name: string): Promise<boolean> {
    const cursor = this.ctx.storage.sql.exec("DELETE FROM agents WHERE name = ?", name);
    return cursor.rowsWritten > 0;
  }

  // ---- The session index ----

  async indexSession(row: SessionSummary, days: UsageDay[]): Promise<void> {
    if (this.failingIndexWrites > 0) {
      this.failingIndexWrites -= 1;
      throw new Error("index write failed (test hook)");
    }
    // A session erased meanwhile (a late write from its last turn) is not indexed again.
    if (isErased(this.ctx.storage.sql, row.session_id)) return;
    this.ctx.storage.transactionSync(() => upsertSession(this.ctx.storage.sql, row, days));
  }

  async eraseFromIndex(sessionId: string): Promise<void> {
    this.ctx.storage.transactionSync(() => eraseSession(this.ctx.storage.sql, sessionId, randomId("era"), Date.now()));
  }

  async isErased(sessionId: string): Promise<boolean> {
    return isErased(this.ctx.storage.sql, sessionId);
  }

  async indexedSession(sessionId: string): Promise<SessionSummary | null> {
    return getSession(this.ctx.storage.sql, sessionId);
  }

  async listSessions(query: SessionListQuery): Promise<SessionSummary[]> {
    return listSessions(this.ctx.storage.sql, query);
  }

  async usage(query: UsageQuery): Promise<UsageRow[]> {
    return usageTotals(this.ctx.storage.sql, query);
  }

  /** Test hook: the next `n` index writes fail. Refused unless the deployment sets TEST_HOOKS=1. */
  async failIndexWrites(n: number): Promise<void> {
    if (this.env.TEST_HOOKS !== "1") throw new Error("test hooks are off");
    this.failingIndexWrites = n;
  }
}
