// The recall index of one resource (in its memory object's SQLite): the user and assistant messages of its
// sessions' ended turns, searched with FTS5 and ranked by bm25.
import type { RecallEntry, RecallHit } from "../../protocol/memory";
import type { MeaningIndex, WrittenRow } from "./recall-meaning";
import { fuse, vectorBlob } from "./recall-vectors";

/** The longest query, and the most words of it searched. */
const MAX_QUERY_WORDS = 32;
/** A word held by more than this share of the messages is too common to search for (and by more than MIN_COMMON). */
const COMMON_SHARE = 0.05;
const MIN_COMMON = 50;

/**
 * Writes the entries (an entry written again replaces itself, so a retried write converges); returns the rowids
 * replaced and the rows added, for the in-memory index of meaning to follow.
 */
export function indexEntries(sql: SqlStorage, entries: RecallEntry[]): { removed: number[]; added: WrittenRow[] } {
  const removed: number[] = [];
  const added: WrittenRow[] = [];
  for (const e of entries) {
    const id = `${e.turn_id}:${e.role}`;
    // Through DELETE and INSERT, so the FTS triggers see the old text leave and the new one come.
    for (const r of sql.exec<{ rowid: number }>("DELETE FROM recall_entries WHERE id = ? RETURNING rowid", id)) removed.push(r.rowid);
    const { rowid } = sql
      .exec<{ rowid: number }>(
        "INSERT INTO recall_entries (id, session_id, turn_id, role, at, text, vector) VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING rowid",
        id,
        e.session_id,
        e.turn_id,
        e.role,
        e.at,
        e.text,
        e.vector ? vectorBlob(e.vector) : null,
      )
      .one();
    added.push({ rowid, session_id: e.session_id, vector: e.vector });
  }
  return { removed, added };
}

/**
 * The words of a free-text query as an FTS5 expression: each word quoted (so no text is read as FTS syntax),
 * any of them matching; bm25 ranks the entries that match more, and rarer, words first. Words that more than
 * COMMON_SHARE of the messages hold ("the", "is") are left out unless every word is (then the rarest is kept):
 * they barely change the ranking, and each one would have every message holding it scored. Null when it has no word.
 */
export function ftsQuery(sql: SqlStorage, query: string): string | null {
  const words = [
    ...new Set(
      query
        .toLowerCase()
        .match(/[\p{L}\p{N}_]+/gu)
        ?.slice(0, MAX_QUERY_WORDS) ?? [],
    ),
  ];
  if (words.length === 0) return null;
  // The largest rowid bounds the number of messages without counting them.
  const total = sql.exec<{ n: number | null }>("SELECT max(rowid) AS n FROM recall_entries").one().n ?? 0;
  const docs = new Map(
    sql
      .exec<{ term: string; doc: number }>(`SELECT term, doc FROM recall_vocab WHERE term IN (${words.map(() => "?").join(", ")})`, ...words)
      .toArray()
      .map((r) => [r.term, r.doc]),
  );
  const held = (w: string) => docs.get(w) ?? 0;
  let kept = words.filter((w) => held(w) <= Math.max(MIN_COMMON, total * COMMON_SHARE));
  if (kept.length === 0) kept = [words.reduce((a, b) => (held(b) < held(a) ? b : a))];
  return kept.map((w) => `"${w}"`).join(" OR ");
}

/**
 * Which sessions' messages a search reads: `except` leaves out one (a turn's own session, already in its history);
 * `within` reads only those (the sessions a token reaches).
 */
export type SearchScope = { except?: string; within?: readonly string[] };

/** The scope as SQL: a condition on `session_id` (of `table`) and its bound values. */
function scopeClause(table: string, scope: SearchScope): { where: string; values: string[] } {
  const within = scope.within ? ` AND ${table}session_id IN (SELECT value FROM json_each(?))` : "";
  return { where: `${table}session_id != ?${within}`, values: [scope.except ?? "", ...(scope.within ? [JSON.stringify(scope.within)] : [])] };
}

/**
 * The best `limit` matches in `scope`; `vector`: the query's embedding, ranking by words and meaning together
 * (by words only while `meaning`'s index is being built).
 */
export function searchEntries(sql: SqlStorage, meaning: MeaningIndex, query: string, limit: number, scope: SearchScope = {}, vector?: number[]): RecallHit[] {
  const near = vector ? searchMeaning(meaning, vector, limit, scope) : null;
  return fused(byWords(sql, query, near ? limit * 2 : limit, scope), near, limit);
}

/**
 * The two rankings `searchEntries` fuses, asked apart (automatic recall searches by words while the query is
 * being embedded): by words, `limit` deep for a result of `limit` by words only, twice that for fusion.
 */
export function byWords(sql: SqlStorage, query: string, limit: number, scope: SearchScope = {}): RecallHit[] {
  if (scope.within?.length === 0) return [];
  return wordsRanking(sql, query, limit, scope);
}

/** By meaning, twice `limit` deep (for fusion); null while the index is being built (the result is by words only). */
export function searchMeaning(meaning: MeaningIndex, vector: number[], limit: number, scope: SearchScope = {}): RecallHit[] | null {
  if (scope.within?.length === 0) return [];
  return meaning.nearest(vector, limit * 2, { ...scope, ...scopeClause("", scope) });
}

/** The result of `limit` from the two rankings: by words alone when there is none by meaning. */
export function fused(words: RecallHit[], near: RecallHit[] | null, limit: number): RecallHit[] {
  // Each ranking deeper than the result, so a message second in both can beat one first in only one.
  return near ? fuse(words, near, limit) : words.slice(0, limit);
}

function wordsRanking(sql: SqlStorage, query: string, limit: number, scope: SearchScope): RecallHit[] {
  const match = ftsQuery(sql, query);
  if (match === null) return [];
  const { where, values } = scopeClause("e.", scope);
  return sql
    .exec<RecallHit>(
      `SELECT e.session_id, e.turn_id, e.role, e.at, snippet(recall_fts, 0, '', '', '…', 24) AS snippet, bm25(recall_fts) AS score
       FROM recall_fts JOIN recall_entries e ON e.rowid = recall_fts.rowid
       WHERE recall_fts MATCH ? AND ${where} ORDER BY score LIMIT ?`,
      match,
      ...values,
      limit,
    )
    .toArray();
}

export function forgetSession(sql: SqlStorage, sessionId: string): void {
  sql.exec("DELETE FROM recall_entries WHERE session_id = ?", sessionId);
}
