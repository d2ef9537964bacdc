// A small seeded PRNG for the tests that generate data, so that a failure names a seed that replays it.
// No imports: the engine tests (plain Node) and the workerd tests both use it.

/** mulberry32: numbers in [0, 1), the same sequence for the same seed. */
export function prng(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
