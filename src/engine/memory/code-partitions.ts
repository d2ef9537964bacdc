// The coarse partition of recall by meaning's sign codes (src/engine/memory/sign-codes.ts): a few hundred centre
// codes, each row kept in the partition of the centre nearest its code by Hamming distance, so a query scores the
// rows of the few partitions nearest to it rather than every row. The centres are trained on a sample of the codes
// themselves (binary k-means: each centre the bitwise majority of its members), so no float vector is needed and
// a partition can be chosen again from memory, a slice at a time, while queries keep using the one before.

/** The Hamming distance between `n` words of `a` from `ao` and of `b` from `bo`. */
export function hamming(a: Uint32Array, ao: number, b: Uint32Array, bo: number, n: number): number {
  let h = 0;
  let w = 0;
  // Two words at a time: their bit counts per byte (at most 16) are added before the final multiply.
  for (; w + 1 < n; w += 2) {
    let x = a[ao + w]! ^ b[bo + w]!;
    let y = a[ao + w + 1]! ^ b[bo + w + 1]!;
    x -= (x >>> 1) & 0x55555555;
    y -= (y >>> 1) & 0x55555555;
    x = (x & 0x33333333) + ((x >>> 2) & 0x33333333);
    y = (y & 0x33333333) + ((y >>> 2) & 0x33333333);
    x = ((x + (x >>> 4)) & 0x0f0f0f0f) + ((y + (y >>> 4)) & 0x0f0f0f0f);
    h += Math.imul(x, 0x01010101) >>> 24;
  }
  if (w < n) {
    let x = a[ao + w]! ^ b[bo + w]!;
    x -= (x >>> 1) & 0x55555555;
    x = (x & 0x33333333) + ((x >>> 2) & 0x33333333);
    h += Math.imul((x + (x >>> 4)) & 0x0f0f0f0f, 0x01010101) >>> 24;
  }
  return h;
}

/** How many partitions `rows` rows get: about the square root of the rows (316 at 100,000), at most 1,024. */
export function partitionsFor(rows: number): number {
  return Math.max(2, Math.min(1024, Math.round(Math.sqrt(rows))));
}

/** The centre codes, `words` words each. */
export class Centres {
  constructor(
    readonly codes: Uint32Array,
    readonly count: number,
    readonly words: number,
  ) {}

  /** The centre nearest to the code at `at` of `codes`. */
  nearest(codes: Uint32Array, at: number): number {
    let best = 0;
    let least = Number.POSITIVE_INFINITY;
    for (let c = 0; c < this.count; c++) {
      const h = hamming(this.codes, c * this.words, codes, at, this.words);
      if (h < least) {
        least = h;
        best = c;
      }
    }
    return best;
  }
}

/**
 * Trains `k` centres on `sample` (codes of `words` words): `k` of them spread over the sample to start, then
 * ROUNDS rounds of assigning each code to its nearest centre and taking each centre's bitwise majority. A
 * generator: each yield is a slice of work (SLICE codes of a round), so a caller lets other requests run between.
 */
export function* trainCentres(sample: Uint32Array, words: number, k: number): Generator<void, Centres> {
  const n = sample.length / words;
  const centres = new Centres(new Uint32Array(Math.min(k, n) * words), Math.min(k, n), words);
  for (let c = 0; c < centres.count; c++) {
    const at = Math.floor((c * n) / centres.count) * words;
    centres.codes.set(sample.subarray(at, at + words), c * words);
  }
  const counts = new Int32Array(centres.count * words * 32);
  const members = new Int32Array(centres.count);
  for (let round = 0; round < ROUNDS; round++) {
    counts.fill(0);
    members.fill(0);
    for (let s = 0; s < n; s++) {
      if (s % SLICE === 0) yield;
      const at = s * words;
      const c = centres.nearest(sample, at);
      members[c]! += 1;
      for (let w = 0; w < words; w++) {
        const x = sample[at + w]!;
        if (x === 0) continue;
        const o = (c * words + w) * 32;
        for (let b = 0; b < 32; b++) counts[o + b]! += (x >>> b) & 1;
      }
    }
    // A centre left with no member keeps its code.
    for (let c = 0; c < centres.count; c++) {
      if (members[c] === 0) continue;
      const half = members[c]! / 2;
      for (let w = 0; w < words; w++) {
        let x = 0;
        const o = (c * words + w) * 32;
        for (let b = 0; b < 32; b++) if (counts[o + b]! > half) x |= 1 << b;
        centres.codes[c * words + w] = x >>> 0;
      }
    }
  }
  return centres;
}

/** Rounds of training: the partitions' balance barely changes after a few. */
const ROUNDS = 4;
/** Sample codes assigned in one slice of a round. */
const SLICE = 128;
