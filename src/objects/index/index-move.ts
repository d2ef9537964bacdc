// Moving index rows to the shards they belong in: the registry's index from before sharding (and, the same
// way, a shard set of another count, see docs/scale.md). Rows are stored in their shard before they are
// deleted here, so a move cut short repeats a batch and loses nothing.
import type { Env } from "../../env";
import { deleteRows, INDEX_TABLES, type IndexRows, takeRows } from "./index-shard-tables";
import { type IndexLayout, indexLayout, shardAt, shardOf } from "./index-shards";

const BATCH = 500;

export function hasIndexRows(sql: SqlStorage): boolean {
  return INDEX_TABLES.some((t) => sql.exec(`SELECT 1 FROM ${t} LIMIT 1`).toArray().length > 0);
}

/** Moves one batch; true when there may be more. */
export async function moveIndexBatch(storage: DurableObjectStorage, env: Env, layout: IndexLayout = indexLayout(env)): Promise<boolean> {
  const rows = takeRows(storage.sql, BATCH);
  const parts = new Map<number, IndexRows>();
  for (const t of INDEX_TABLES) {
    for (const r of rows[t]) {
      const i = shardOf(String(r.session_id), layout.shards);
      if (!parts.has(i)) parts.set(i, { session_index: [], usage_days: [], erased_sessions: [] });
      parts.get(i)![t].push(r);
    }
  }
  if (parts.size === 0) return false;
  await Promise.all([...parts].map(([i, part]) => shardAt(env, layout, i).importRows(part)));
  storage.transactionSync(() => deleteRows(storage.sql, rows));
  return true;
}
