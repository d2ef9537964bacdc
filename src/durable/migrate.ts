// Applies numbered SQL migrations in order, each in its own transaction, and records the schema version.
import registry0001 from "../../migrations/registry/0001_init.sql";
import session0001 from "../../migrations/session/0001_init.sql";

export interface Migration {
  version: number;
  sql: string;
}

export const SESSION_MIGRATIONS: Migration[] = [{ version: 1, sql: session0001 }];
export const REGISTRY_MIGRATIONS: Migration[] = [{ version: 1, sql: registry0001 }];

/** Returns the schema version after migrating. */
export function migrate(storage: DurableObjectStorage, migrations: Migration[]): number {
  const sql = storage.sql;
  sql.exec("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)");
  const row = sql.exec<{ version: number }>("SELECT max(version) AS version FROM schema_version").one();
  let current = row.version ?? 0;
  for (const m of migrations) {
    if (m.version <= current) continue;
    storage.transactionSync(() => {
      sql.exec(m.sql);
      sql.exec("INSERT INTO schema_version (version) VALUES (?)", m.version);
    });
    current = m.version;
  }
  return current;
}
