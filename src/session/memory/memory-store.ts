// The memory_* tools' key-value store, one table of the session object.
import type { ToolContext } from "../../engine/tools/types";

export function sqlMemory(sql: SqlStorage): ToolContext["memory"] {
  return {
    get: (key) => sql.exec<{ value: string }>("SELECT value FROM memory WHERE key = ?", key).toArray()[0]?.value ?? null,
    set: (key, value) => {
      sql.exec("INSERT OR REPLACE INTO memory (key, value, updated_at) VALUES (?, ?, ?)", key, value, Date.now());
    },
    list: (prefix, limit) =>
      sql
        .exec<{ key: string; bytes: number }>(
          "SELECT key, length(CAST(value AS BLOB)) AS bytes FROM memory WHERE substr(key, 1, length(?)) = ? ORDER BY key LIMIT ?",
          prefix,
          prefix,
          limit,
        )
        .toArray(),
  };
}
