// The deployment's agent registry: one Durable Object holding validated AgentConfigs by name. Request paths
// read it through agent-cache.ts; the session index lives in its own shards (index-shards.ts).
import { DurableObject } from "cloudflare:workers";
import type { Env } from "../../env";
import type { AgentConfig } from "../../protocol/agent-config";
import type { QuotaDefinition, QuotaSpec } from "../../protocol/quotas";
import { hasIndexRows, moveIndexBatch } from "../index/index-move";
import { migrate, REGISTRY_MIGRATIONS } from "../migrate";
import { QuotaTable } from "./quota-table";

/** The deployment's single registry object. */
export function registry(env: Pick<Env, "REGISTRY">) {
  return env.REGISTRY.get(env.REGISTRY.idFromName("registry"));
}

export class RegistryObject extends DurableObject<Env> {
  /** Reads of each config since the object started (for the test of the agent cache). */
  private readonly reads = new Map<string, number>();
  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    void ctx.blockConcurrencyWhile(async () => {
      migrate(ctx.storage, REGISTRY_MIGRATIONS);
      if (hasIndexRows(ctx.storage.sql)) await ctx.storage.setAlarm(Date.now());
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
    this.reads.set(name, (this.reads.get(name) ?? 0) + 1);
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

  /** Quota definitions (quota-table.ts). */
  async putQuota(id: string, spec: QuotaSpec): Promise<{ created: boolean; quota: QuotaDefinition }> {
    return new QuotaTable(this.ctx.storage.sql).put(id, spec, Date.now());
  }

  async quotas(): Promise<QuotaDefinition[]> {
    return new QuotaTable(this.ctx.storage.sql).list();
  }

  async removeQuota(id: string): Promise<boolean> {
    return new QuotaTable(this.ctx.storage.sql).remove(id);
  }

  /** Index rows from before the index was sharded move to their shards, a batch per alarm. */
  override async alarm(): Promise<void> {
    if (await moveIndexBatch(this.ctx.storage, this.env)) await this.ctx.storage.setAlarm(Date.now() + 100);
  }

  /** Test hook: how many times `get` read this agent's config. */
  async readsOf(name: string): Promise<number> {
    if (this.env.TEST_HOOKS !== "1") throw new Error("test hooks are off");
    return this.reads.get(name) ?? 0;
  }
}
