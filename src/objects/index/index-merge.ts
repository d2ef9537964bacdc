// Merging the answers of the session index's shards (src/objects/index/index-shards.ts) into the answer one index
// would give. Pages: every shard answers the same predicate and keyset position with its own first `limit`
// rows, newest first; the first `limit` rows of all of them are the first `limit` of their union, because
// each of those rows is among the first `limit` of its own shard. Usage: sums per key, added up.
import { type SessionSummary, USAGE_COLUMNS, type UsageRow } from "../../protocol/session-list";

/** SQLite's order of the index, descending: created_at, then session_id (ASCII ids compare alike in both). */
function newerFirst(a: SessionSummary, b: SessionSummary): number {
  if (a.created_at !== b.created_at) return b.created_at - a.created_at;
  return a.session_id < b.session_id ? 1 : a.session_id > b.session_id ? -1 : 0;
}

/** The first `limit` rows of the shards' pages (each already cut at `limit`), newest first. */
export function mergePages(pages: SessionSummary[][], limit: number): SessionSummary[] {
  return pages.flat().sort(newerFirst).slice(0, limit);
}

/**
 * Adds up the shards' rows per key, ordered by key as SQLite orders it (null first). Costs are rounded to
 * 1e-9 USD so that the total does not depend on how the rows were split between shards (float addition is
 * not associative).
 */
export function mergeUsage(shards: UsageRow[][]): UsageRow[] {
  const byKey = new Map<string | null, UsageRow>();
  for (const row of shards.flat()) {
    const into = byKey.get(row.key);
    if (!into) byKey.set(row.key, { ...row });
    else for (const c of USAGE_COLUMNS) into[c] += row[c];
  }
  const rows = [...byKey.values()].sort((a, b) => (a.key === b.key ? 0 : a.key === null ? -1 : b.key === null ? 1 : a.key < b.key ? -1 : 1));
  for (const r of rows) r.cost_usd = Math.round(r.cost_usd * 1e9) / 1e9;
  return rows;
}
