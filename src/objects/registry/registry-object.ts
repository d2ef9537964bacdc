// The deployment's agent registry: one Durable Object holding validated AgentConfigs by name. Request paths
// read it through agent-cache.ts; the session index lives in its own shards (index-shards.ts).
import { DurableObject } from "cloudflare:workers";
import type { Env } from "../../env";
import type { AgentConfig } from "../../protocol/agent-config";
import type { AgentRouting } from "../../protocol/agent-versions";
import type { CodeToolInput, CodeToolVersion } from "../../protocol/code-tools";
import type { QuotaDefinition, QuotaSpec } from "../../protocol/quotas";
import { hasIndexRows, moveIndexBatch } from "../index/index-move";
import { agentInUse } from "../index/index-shards";
import { migrate, REGISTRY_MIGRATIONS } from "../migrate";
import { dropRouting, routing } from "./agent-labels";
import { contentHash, eraseVersions, fillMissingHashes, latestVersion, recordVersion } from "./agent-versions";
import { type AgentVersionsRpc, versionsRpc } from "./agent-versions-rpc";
import { CodeToolTable } from "./code-tool-table";
import { maxConcurrentCases } from "./eval-leases";
import { type EvalsRpc, evalsRpc } from "./evals-rpc";
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
      await fillMissingHashes(ctx.storage.sql);
      if (hasIndexRows(ctx.storage.sql)) await ctx.storage.setAlarm(Date.now());
    });
  }

  /** Stores a validated config as `by`; `created` tells whether the name was new, `version` what it runs now. */
  async put(config: AgentConfig, by: string | null = null): Promise<{ created: boolean; config: AgentConfig; version: number; new_version: boolean }> {
    const sql = this.ctx.storage.sql;
    const hash = await contentHash(sql, config);
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
    const { version, created } = recordVersion(sql, config, hash, by, now);
    return { created: !existed, config, version, new_version: created };
  }

  /** The config of `name` now, with what opening a session by its name needs (versions, labels, traffic). */
  async current(name: string): Promise<{ config: AgentConfig; routing: AgentRouting } | null> {
    const config = await this.get(name);
    const found = config && routing(this.ctx.storage.sql, name);
    return found ? { config, routing: found } : null;
  }

  /** Reads and moves of versions, labels and traffic (agent-versions-rpc.ts). */
  async versions(op: keyof AgentVersionsRpc, args: unknown[]): Promise<unknown> {
    return (versionsRpc(this.ctx.storage.sql)[op] as (...a: unknown[]) => unknown)(...args);
  }

  /** Datasets and the eval runs' index (evals-rpc.ts). */
  async evals(op: keyof EvalsRpc, args: unknown[]): Promise<unknown> {
    const ports = { cap: maxConcurrentCases(this.env), wake: (runIds: string[]) => this.wakeRuns(runIds) };
    return (evalsRpc(this.ctx.storage.sql, ports)[op] as (...a: unknown[]) => unknown)(...args);
  }

  /** Tells eval runs that wait that a lease is free for them (not awaited: a lost wake is caught by their watchdog). */
  private wakeRuns(runIds: string[]): void {
    for (const id of runIds) {
      const run = this.env.EVAL_RUNS.get(this.env.EVAL_RUNS.idFromName(id));
      this.ctx.waitUntil(run.wake().catch((err: unknown) => console.error(`waking eval run ${id} failed`, err)));
    }
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
    dropRouting(this.ctx.storage.sql, name);
    if (cursor.rowsWritten === 0) return false;
    await this.sessionsGone([name]);
    return true;
  }

  /**
   * Sessions of these agents were erased: a deleted agent's versions go once no session in the index runs it or
   * was opened with it (until then they stay readable by number for those sessions).
   */
  async sessionsGone(names: string[]): Promise<void> {
    const sql = this.ctx.storage.sql;
    const deleted = (name: string) => sql.exec("SELECT 1 FROM agents WHERE name = ?", name).toArray().length === 0;
    for (const name of names) {
      if (!deleted(name) || !latestVersion(sql, name)) continue;
      if (await agentInUse(this.env, name)) continue;
      // Asked again after the wait: the name may have been created again meanwhile.
      if (deleted(name)) eraseVersions(sql, name);
    }
  }

  /** Code tools (code-tool-table.ts): a PUT stores a new version when anything changed. */
  async putCodeTool(name: string, input: CodeToolInput): Promise<{ created: boolean; tool: CodeToolVersion }> {
    return this.codeTools().put(name, input);
  }

  /** A code tool's latest version, or the one asked for. */
  async codeTool(name: string, version?: number): Promise<CodeToolVersion | null> {
    return version === undefined ? this.codeTools().latest(name) : this.codeTools().version(name, version);
  }

  async listCodeTools(): Promise<CodeToolVersion[]> {
    return this.codeTools().list();
  }

  /** The latest versions of the named code tools that exist (a turn's, or an agent's being saved). */
  async codeToolsNamed(names: string[]): Promise<CodeToolVersion[]> {
    const table = this.codeTools();
    return names.flatMap((n) => table.latest(n) ?? []);
  }

  async removeCodeTool(name: string): Promise<boolean> {
    return this.codeTools().remove(name);
  }

  private codeTools(): CodeToolTable {
    return new CodeToolTable(this.ctx.storage.sql);
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
