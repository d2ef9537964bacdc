// The query's side of recall by meaning's sign codes (src/engine/memory/sign-codes.ts): a table of its numbers'
// sums by byte of a code, so a code's dot product with the query is four lookups a word, and the selection of
// the largest estimates.

/**
 * For each byte of a code, the sums of the query's numbers over its 256 bit patterns; the last entry is the sum
 * of all the query's numbers.
 */
export function queryTable(vector: ArrayLike<number>): Float32Array {
  const bytes = Math.ceil(vector.length / 32) * 4;
  const table = new Float32Array(bytes * 256 + 1);
  for (let b = 0; b < bytes; b++) {
    for (let x = 1, o = b * 256; x < 256; x++) {
      const low = x & -x;
      table[o + x] = table[o + (x ^ low)]! + (vector[b * 8 + 31 - Math.clz32(low)] ?? 0);
    }
  }
  let sum = 0;
  for (let i = 0; i < vector.length; i++) sum += vector[i]!;
  table[bytes * 256] = sum;
  return table;
}

export const querySum = (table: Float32Array): number => table[table.length - 1]!;

/** The sum of the query's numbers where the code at `at` of `codes` (`words` words) has its bits set. */
export function dotBits(table: Float32Array, codes: Uint32Array, at: number, words: number): number {
  let dot = 0;
  for (let w = 0, o = 0; w < words; w++, o += 1024) {
    const c = codes[at + w]!;
    dot += table[o + (c & 255)]! + table[o + 256 + ((c >>> 8) & 255)]! + table[o + 512 + ((c >>> 16) & 255)]! + table[o + 768 + (c >>> 24)]!;
  }
  return dot;
}

/** The positions of the `count` largest of `values` (all of them when fewer), ties taken in order. */
export function largest(values: Float64Array, count: number): number[] {
  if (values.length <= count) return Array.from(values.keys());
  const least = values.slice().sort()[values.length - count]!;
  let ties = count - values.filter((v) => v > least).length;
  const out: number[] = [];
  for (let k = 0; k < values.length; k++) if (values[k]! > least || (values[k] === least && ties-- > 0)) out.push(k);
  return out;
}
