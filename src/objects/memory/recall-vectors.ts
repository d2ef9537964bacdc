// Recall by meaning (memory.recall.embedding_model): the messages' vectors beside their text in the resource's
// recall index, the nearest by cosine similarity found by brute force (every vector of the resource is read:
// see docs/guides/memory.md for where that stops scaling), and the fusion of the word and meaning rankings.
import type { RecallHit } from "../../protocol/memory";

/** Reciprocal rank fusion's constant: how much the top ranks dominate. */
const RRF_K = 60;
/** The snippet of a hit found by meaning only (no matched words to centre on). */
const SNIPPET_CHARS = 160;

/** A vector as its stored bytes (float32). */
export function vectorBlob(vector: readonly number[]): ArrayBuffer {
  return new Float32Array(vector).buffer;
}

function cosine(a: Float32Array, b: Float32Array): number {
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    dot += a[i]! * b[i]!;
    na += a[i]! * a[i]!;
    nb += b[i]! * b[i]!;
  }
  return na > 0 && nb > 0 ? dot / Math.sqrt(na * nb) : 0;
}

/**
 * The `limit` messages nearest to `vector` of those `where` (a condition on the entries, with its bound `values`)
 * admits; vectors of another length, from another model, are passed over.
 */
export function nearest(sql: SqlStorage, vector: readonly number[], limit: number, { where, values }: { where: string; values: string[] }): RecallHit[] {
  const q = new Float32Array(vector);
  const scored: { hit: RecallHit; similarity: number }[] = [];
  const rows = sql.exec<Omit<RecallHit, "snippet" | "score"> & { text: string; vector: ArrayBuffer }>(
    `SELECT session_id, turn_id, role, at, text, vector FROM recall_entries WHERE vector IS NOT NULL AND ${where}`,
    ...values,
  );
  for (const { vector: bytes, text, ...row } of rows) {
    const v = new Float32Array(bytes);
    if (v.length !== q.length) continue;
    const snippet = text.length > SNIPPET_CHARS ? `${text.slice(0, SNIPPET_CHARS)}…` : text;
    scored.push({ hit: { ...row, snippet, score: 0 }, similarity: cosine(q, v) });
  }
  scored.sort((a, b) => b.similarity - a.similarity);
  return scored.slice(0, limit).map((s) => s.hit);
}

/** The word and meaning rankings fused (reciprocal rank fusion); a hit's score is minus its fused score, so lower is better. */
export function fuse(byWords: RecallHit[], byMeaning: RecallHit[], limit: number): RecallHit[] {
  const fused = new Map<string, { hit: RecallHit; score: number }>();
  for (const list of [byWords, byMeaning]) {
    list.forEach((hit, rank) => {
      const key = `${hit.turn_id}:${hit.role}`;
      const entry = fused.get(key) ?? { hit, score: 0 };
      entry.score += 1 / (RRF_K + rank + 1);
      fused.set(key, entry);
    });
  }
  return [...fused.values()]
    .sort((a, b) => b.score - a.score)
    .slice(0, limit)
    .map(({ hit, score }) => ({ ...hit, score: -score }));
}
