// Recall by meaning (memory.recall.embedding_model): the messages' vectors beside their text in the resource's
// recall index (float32 bytes), compared by cosine similarity when the candidates of the in-memory index
// (recall-meaning.ts) are re-ranked, and the fusion of the word and meaning rankings.
import type { RecallHit } from "../../protocol/memory";

/** Reciprocal rank fusion's constant: how much the top ranks dominate. */
const RRF_K = 60;
/** The snippet of a hit found by meaning only (no matched words to centre on). */
const SNIPPET_CHARS = 160;

/** A vector as its stored bytes (float32). */
export function vectorBlob(vector: readonly number[]): ArrayBuffer {
  return new Float32Array(vector).buffer;
}

export function snippetOf(text: string): string {
  return text.length > SNIPPET_CHARS ? `${text.slice(0, SNIPPET_CHARS)}…` : text;
}

/** The dot product of `a` with `b`'s direction: ranks the `b`s by their cosine with `a` (whose own norm is the same for all). */
export function towards(a: Float32Array, b: Float32Array): number {
  if (a.length !== b.length) return Number.NEGATIVE_INFINITY;
  let dot = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    dot += a[i]! * b[i]!;
    nb += b[i]! * b[i]!;
  }
  return nb > 0 ? dot / Math.sqrt(nb) : 0;
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
