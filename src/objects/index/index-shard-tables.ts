// The session index and usage tables in one index shard's SQLite (index-shard.ts): each session object upserts
// its own row and its usage days (so a retried write converges), and erasing a session removes its row.
import { readableMetadata } from "../../protocol/metadata";
import { type SessionListQuery, type SessionSummary, USAGE_COLUMNS, type UsageDay, type UsageQuery, type UsageRow } from "../../protocol/session-list";
import { where } from "../sql-where";

const SUMMARY_COLUMNS = [
  "session_id",
  "agent",
  "agent_version",
  "owner",
  "metadata",
  "created_at",
  "last_activity",
  "status",
  "turns",
  "input_tokens",
  "output_tokens",
  "cost_usd",
  "unpriced_model_calls",
  "log_events",
  "stored_bytes",
] as const;

/** Upserts the row and usage days; a write older than the stored row (a late one, overtaken by a retry) changes nothing. */
export function upsertSession(sql: SqlStorage, row: SessionSummary, days: UsageDay[], openedAgent: string): void {
  const stored = sql.exec<{ log_events: number }>("SELECT log_events FROM session_index WHERE session_id = ?", row.session_id).toArray()[0];
  if (stored && stored.log_events > row.log_events) return;
  const values = SUMMARY_COLUMNS.map((c) => (c === "metadata" ? JSON.stringify(row.metadata) : row[c]));
  const columns = [...SUMMARY_COLUMNS, "opened_agent"];
  sql.exec(`INSERT OR REPLACE INTO session_index (${columns.join(", ")}) VALUES (${columns.map(() => "?").join(", ")})`, ...values, openedAgent);
  for (const d of days) {
    sql.exec(
      `INSERT OR REPLACE INTO usage_days (session_id, day, agent, agent_version, owner, ${USAGE_COLUMNS.join(", ")}) VALUES (?, ?, ?, ?, ?, ${USAGE_COLUMNS.map(() => "?").join(", ")})`,
      row.session_id,
      d.day,
      row.agent,
      row.agent_version,
      row.owner,
      ...USAGE_COLUMNS.map((c) => d[c]),
    );
  }
}

/** Removes the session's row; its usage stays in the totals without its id or owner; a tombstone keeps the id. */
export function eraseSession(sql: SqlStorage, sessionId: string, anonymousId: string, now: number): void {
  sql.exec("DELETE FROM session_index WHERE session_id = ?", sessionId);
  sql.exec("UPDATE usage_days SET session_id = ?, owner = NULL WHERE session_id = ?", anonymousId, sessionId);
  sql.exec("INSERT OR IGNORE INTO erased_sessions (session_id, erased_at) VALUES (?, ?)", sessionId, now);
}

/** Whether a session of this shard runs or was opened with agent `name`. */
export function hasAgentSessions(sql: SqlStorage, name: string): boolean {
  return sql.exec("SELECT 1 FROM session_index WHERE agent = ? OR opened_agent = ? LIMIT 1", name, name).toArray().length > 0;
}

export function isErased(sql: SqlStorage, sessionId: string): boolean {
  return sql.exec("SELECT 1 FROM erased_sessions WHERE session_id = ?", sessionId).toArray().length > 0;
}

export function getSession(sql: SqlStorage, sessionId: string): SessionSummary | null {
  const row = sql.exec<Record<string, SqlStorageValue>>(`SELECT * FROM session_index WHERE session_id = ?`, sessionId).toArray()[0];
  return row ? toSummary(row) : null;
}

/** A row as the API shows it: `opened_agent` only filters agent-bound tokens' listings. */
function toSummary({ opened_agent: _, ...row }: Record<string, SqlStorageValue>): SessionSummary {
  return { ...(row as unknown as SessionSummary), metadata: readableMetadata(JSON.parse(String(row.metadata)) as Record<string, unknown>) };
}

/** Newest first, one page past the keyset position. */
export function listSessions(sql: SqlStorage, q: SessionListQuery): SessionSummary[] {
  const w = where();
  if (q.agent !== undefined) w.add("agent = ?", q.agent);
  // A row written before opened_agent was kept names its current agent only.
  if (q.opened_agent !== undefined) w.add("coalesce(opened_agent, agent) = ?", q.opened_agent);
  if (q.agent_version !== undefined) w.add("agent_version = ?", q.agent_version);
  if (q.status !== undefined) w.add("status = ?", q.status);
  if (q.owner !== undefined) w.add("owner = ?", q.owner);
  if (q.created_after !== undefined) w.add("created_at > ?", q.created_after);
  if (q.active_after !== undefined) w.add("last_activity > ?", q.active_after);
  // Metadata values are compared as text, as they arrive in the query string. A row SQLite cannot parse (stored
  // before metadata was bounded at write time, nested past its 1,000 levels) matches no metadata filter:
  // json_extract would fail the whole listing.
  for (const [key, value] of q.metadata) w.add("CASE WHEN json_valid(metadata) THEN CAST(json_extract(metadata, ?) AS TEXT) = ? END", `$."${key}"`, value);
  if (q.before) w.add("(created_at < ? OR (created_at = ? AND session_id < ?))", q.before[0], q.before[0], q.before[1]);
  const sqlText = `SELECT * FROM session_index ${w.sql()} ORDER BY created_at DESC, session_id DESC LIMIT ?`;
  return sql
    .exec<Record<string, SqlStorageValue>>(sqlText, ...w.args, q.limit)
    .toArray()
    .map(toSummary);
}

/** The bytes the files of the indexed sessions (of `q.agent`, `q.owner` when given) take now: erased ones are not indexed. */
export function storedBytes(sql: SqlStorage, q: Pick<UsageQuery, "agent" | "owner">): number {
  const w = where();
  for (const k of ["agent", "owner"] as const) if (q[k] !== undefined) w.add(`${k} = ?`, q[k]);
  return sql.exec<{ n: number }>(`SELECT coalesce(sum(stored_bytes), 0) AS n FROM session_index ${w.sql()}`, ...w.args).one().n;
}

export function usageTotals(sql: SqlStorage, q: UsageQuery): UsageRow[] {
  const w = where(["day >= ?", q.from], ["day <= ?", q.to]);
  for (const k of ["agent", "owner"] as const) if (q[k] !== undefined) w.add(`${k} = ?`, q[k]);
  const sums = USAGE_COLUMNS.map((c) => `sum(${c}) AS ${c}`).join(", ");
  // A version's key is `agent@version` (null: sessions of no version).
  const key = q.group_by === "version" ? "agent || '@' || agent_version" : q.group_by;
  return sql.exec<UsageRow>(`SELECT ${key} AS key, ${sums} FROM usage_days ${w.sql()} GROUP BY key ORDER BY key`, ...w.args).toArray();
}

/** The index's tables, as whole rows: what moves when the index moves (from the registry, or to more shards). */
export const INDEX_TABLES = ["session_index", "usage_days", "erased_sessions"] as const;
export type IndexRows = Record<(typeof INDEX_TABLES)[number], Record<string, SqlStorageValue>[]>;

/** Up to `limit` rows of each table, removed from this storage (the caller has stored them elsewhere first). */
export function takeRows(sql: SqlStorage, limit: number): IndexRows {
  const out = {} as IndexRows;
  for (const t of INDEX_TABLES) out[t] = sql.exec<Record<string, SqlStorageValue>>(`SELECT rowid AS _rowid, * FROM ${t} LIMIT ?`, limit).toArray();
  return out;
}

export function deleteRows(sql: SqlStorage, rows: IndexRows): void {
  for (const t of INDEX_TABLES) for (const r of rows[t]) sql.exec(`DELETE FROM ${t} WHERE rowid = ?`, r._rowid ?? null);
}

/** Stores moved rows; a row already here (written since by the session itself) is newer and stays. */
export function importRows(sql: SqlStorage, rows: IndexRows): void {
  for (const t of INDEX_TABLES) {
    for (const { _rowid, ...r } of rows[t]) {
      const cols = Object.keys(r);
      sql.exec(`INSERT OR IGNORE INTO ${t} (${cols.join(", ")}) VALUES (${cols.map(() => "?").join(", ")})`, ...Object.values(r));
    }
  }
}
