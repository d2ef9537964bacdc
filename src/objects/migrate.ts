// Applies numbered SQL migrations in order, all pending ones in one transaction, and records the schema version.
// The SQL files are text modules (sql.d.ts), also in a tenant's program that imports the runtime as a package.
/// <reference path="../sql.d.ts" />
import eval0001 from "../../migrations/eval/0001_init.sql";
import eval0002 from "../../migrations/eval/0002_cancel.sql";
import quota0001 from "../../migrations/quota/0001_init.sql";
import registry0001 from "../../migrations/registry/0001_init.sql";
import registry0002 from "../../migrations/registry/0002_session_index.sql";
import registry0003 from "../../migrations/registry/0003_cached_tokens.sql";
import registry0004 from "../../migrations/registry/0004_stored_bytes.sql";
import registry0005 from "../../migrations/registry/0005_opened_agent.sql";
import registry0006 from "../../migrations/registry/0006_code_tools.sql";
import registry0007 from "../../migrations/registry/0007_agent_versions.sql";
import registry0008 from "../../migrations/registry/0008_agent_version_index.sql";
import registry0009 from "../../migrations/registry/0009_quotas.sql";
import registry0010 from "../../migrations/registry/0010_datasets_evals.sql";
import registry0011 from "../../migrations/registry/0011_eval_leases_scores.sql";
import registry0012 from "../../migrations/registry/0012_eval_lease_waits.sql";
import registry0013 from "../../migrations/registry/0013_erased_agent_versions.sql";
import resource0001 from "../../migrations/resource/0001_init.sql";
import resource0002 from "../../migrations/resource/0002_recall_vectors.sql";
import session0001 from "../../migrations/session/0001_init.sql";
import session0002 from "../../migrations/session/0002_turn_messages.sql";
import session0003 from "../../migrations/session/0003_governance.sql";
import session0004 from "../../migrations/session/0004_signals.sql";
import session0005 from "../../migrations/session/0005_usage_days.sql";
import session0006 from "../../migrations/session/0006_schedules.sql";
import session0007 from "../../migrations/session/0007_subscriptions.sql";
import session0008 from "../../migrations/session/0008_replay.sql";
import session0009 from "../../migrations/session/0009_cached_tokens.sql";
import session0010 from "../../migrations/session/0010_human_input.sql";
import session0011 from "../../migrations/session/0011_resource.sql";
import session0012 from "../../migrations/session/0012_quorum.sql";
import session0013 from "../../migrations/session/0013_inbox_files.sql";
import session0014 from "../../migrations/session/0014_files.sql";
import session0015 from "../../migrations/session/0015_derived_sessions.sql";
import session0016 from "../../migrations/session/0016_turn_settings.sql";

export interface Migration {
  version: number;
  sql: string;
}

export const SESSION_MIGRATIONS: Migration[] = [
  { version: 1, sql: session0001 },
  { version: 2, sql: session0002 },
  { version: 3, sql: session0003 },
  { version: 4, sql: session0004 },
  { version: 5, sql: session0005 },
  { version: 6, sql: session0006 },
  { version: 7, sql: session0007 },
  { version: 8, sql: session0008 },
  { version: 9, sql: session0009 },
  { version: 10, sql: session0010 },
  { version: 11, sql: session0011 },
  { version: 12, sql: session0012 },
  { version: 13, sql: session0013 },
  { version: 14, sql: session0014 },
  { version: 15, sql: session0015 },
  { version: 16, sql: session0016 },
];
export const REGISTRY_MIGRATIONS: Migration[] = [
  { version: 1, sql: registry0001 },
  { version: 2, sql: registry0002 },
  { version: 3, sql: registry0003 },
  { version: 4, sql: registry0006 },
  { version: 5, sql: registry0007 },
  { version: 6, sql: registry0009 },
  { version: 7, sql: registry0010 },
  { version: 8, sql: registry0011 },
  { version: 9, sql: registry0012 },
  { version: 10, sql: registry0013 },
];
/** A shard of the session index holds the tables the registry held before the index was sharded. */
export const INDEX_MIGRATIONS: Migration[] = [
  { version: 1, sql: registry0002 },
  { version: 2, sql: registry0003 },
  { version: 3, sql: registry0004 },
  { version: 4, sql: registry0005 },
  { version: 5, sql: registry0008 },
];
/** An eval run's state (src/objects/evals/). */
export const EVAL_MIGRATIONS: Migration[] = [
  { version: 1, sql: eval0001 },
  { version: 2, sql: eval0002 },
];
/** A quota subject's state (src/objects/quota/). */
export const QUOTA_MIGRATIONS: Migration[] = [{ version: 1, sql: quota0001 }];
export const RESOURCE_MIGRATIONS: Migration[] = [
  { version: 1, sql: resource0001 },
  { version: 2, sql: resource0002 },
];

/** Whether this object's storage was ever initialized (a fresh object reads nothing and writes nothing). */
export function isInitialized(storage: DurableObjectStorage): boolean {
  return storage.sql.exec("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_version'").toArray().length > 0;
}

/** A capability's own tables: its name and its steps, in order (step n is version n of its schema). */
export interface TableMigrations {
  name: string;
  steps: readonly string[];
}

/**
 * Applies the migrations newer than the stored version in one transaction (a schema is never left half way,
 * and a new object writes its whole schema in one commit), then each capability's own steps newer than the
 * version stored under its name, and returns the schema version after migrating.
 */
export function migrate(storage: DurableObjectStorage, migrations: Migration[], owned: readonly TableMigrations[] = []): number {
  const sql = storage.sql;
  return storage.transactionSync(() => {
    sql.exec("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)");
    let current = sql.exec<{ version: number | null }>("SELECT max(version) AS version FROM schema_version").one().version ?? 0;
    for (const m of migrations) {
      if (m.version <= current) continue;
      sql.exec(m.sql);
      sql.exec("INSERT INTO schema_version (version) VALUES (?)", m.version);
      current = m.version;
    }
    if (owned.length > 0) migrateOwned(sql, owned);
    return current;
  });
}

/** Each capability's tables migrate on their own (capability_schema keeps a version per name), so adding one touches no shared list. */
function migrateOwned(sql: SqlStorage, owned: readonly TableMigrations[]): void {
  sql.exec("CREATE TABLE IF NOT EXISTS capability_schema (name TEXT PRIMARY KEY, version INTEGER NOT NULL)");
  for (const { name, steps } of owned) {
    const at = sql.exec<{ version: number }>("SELECT version FROM capability_schema WHERE name = ?", name).toArray()[0]?.version ?? 0;
    for (const step of steps.slice(at)) sql.exec(step);
    if (steps.length > at) sql.exec("INSERT OR REPLACE INTO capability_schema (name, version) VALUES (?, ?)", name, steps.length);
  }
}
