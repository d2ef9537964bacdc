// Recall by meaning's in-memory index: each message's vector kept as one bit a dimension (its sign), so
// 100,000 vectors of 1,536 numbers take 19.2 MB where their floats take 614 MB. A query's code is compared
// with the codes by Hamming distance (XOR and popcount on 32-bit words), which follows the angle between the
// vectors, in passes over fewer rows and more of each code: each code is kept in three parts (its first 128 bits,
// the next 384, the rest), each part of every row in an array of its own, so the first pass, over every row's
// first part, reads 1.6 MB, not 19.2, and the second, over the first two parts of the rows nearest by the first
// (SURVIVORS, or more for a large pool), 64 bytes a row from two arrays; the dot products of the whole codes of
// the nearest of those with the query's own numbers then pick the few hundred the caller re-ranks with the exact
// floats. Pure: no storage, no platform; the resource's memory object feeds it (src/objects/memory/recall-meaning.ts).

/** What one row costs: its code, its rowid (float64) and its session's number (uint32), and a distance slot (uint16). */
export function rowBytes(dims: number): number {
  return wordsOf(dims) * 4 + 8 + 4 + 2;
}

const wordsOf = (dims: number) => Math.ceil(dims / 32);

/** Where a code's second and third parts start (in words): the first pass compares the first part, the second pass the first two. */
const PARTS = [4, 16];
/**
 * The rows the first pass keeps for the second (at least; four times the second's keep when that is more): on
 * 100,000 messages of 1,536 numbers the ten nearest stay among them as often as in a full scan (bench/memory.mjs).
 * With fewer rows than this there is no first pass.
 */
export const SURVIVORS = 5_000;
/** How many times the candidates asked the second pass keeps, for the dot products to choose from. */
const POOL = 4;

/** The Hamming distance between `n` words of `a` from `ao` and of `b` from `bo`. */
function hamming(a: Uint32Array, ao: number, b: Uint32Array, bo: number, n: number): number {
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

/**
 * Of the distances `hist` counts (the last bucket: rows not admitted, never taken), the cut that keeps `count`:
 * every row nearer than `cut`, and the first `ties` at it.
 */
function cutOf(hist: Uint32Array, count: number): { cut: number; ties: number } {
  const last = hist.length - 2;
  let cut = 0;
  let below = 0;
  while (cut <= last && below + hist[cut]! < count) below += hist[cut++]!;
  // Fewer admitted rows than `count`: all of them, and none of those not admitted.
  return { cut, ties: cut > last ? 0 : count - below };
}

/** The sign code of `vector`: bit k of word w is set when dimension 32w+k is positive. */
export function signCode(vector: ArrayLike<number>, out: Uint32Array = new Uint32Array(wordsOf(vector.length)), at = 0): Uint32Array {
  const words = wordsOf(vector.length);
  for (let w = 0; w < words; w++) {
    let bits = 0;
    const base = w * 32;
    const end = Math.min(32, vector.length - base);
    for (let k = 0; k < end; k++) if (vector[base + k]! > 0) bits |= 1 << k;
    out[at + w] = bits >>> 0;
  }
  return out;
}

/** Which sessions a query may return: only those of `within` (when given), never `except`. */
export type SessionFilter = { except?: string; within?: readonly string[] };

export class SignCodes {
  readonly dims: number;
  /** The parts of the codes: words from..to of each row's code, in `codes` (to - from words a row). */
  private readonly parts: { from: number; words: number; codes: Uint32Array }[];
  private rowids: Float64Array;
  private sessionOf: Uint32Array;
  private dist: Uint16Array;
  private size = 0;
  /** Session ids and their numbers (a session's number is kept after it leaves: a handful of bytes). */
  private readonly sessionNumbers = new Map<string, number>();

  /** `capacity`: the rows allocated at first; `maxRows`: the most ever held (the memory bound). */
  constructor(
    dims: number,
    capacity: number,
    readonly maxRows: number,
  ) {
    this.dims = dims;
    const words = wordsOf(dims);
    const n = Math.max(1, Math.min(capacity, maxRows));
    const bounds = [0, ...PARTS.filter((w) => w < words), words];
    this.parts = bounds.slice(1).map((to, k) => ({ from: bounds[k]!, words: to - bounds[k]!, codes: new Uint32Array(n * (to - bounds[k]!)) }));
    this.rowids = new Float64Array(n);
    this.sessionOf = new Uint32Array(n);
    this.dist = new Uint16Array(n);
  }

  get count(): number {
    return this.size;
  }

  /** The bytes the index's arrays hold (what it costs the isolate, less a few bytes a session). */
  get bytes(): number {
    const codes = this.parts.reduce((sum, p) => sum + p.codes.byteLength, 0);
    return codes + this.rowids.byteLength + this.sessionOf.byteLength + this.dist.byteLength;
  }

  private sessionNumber(session: string): number {
    let n = this.sessionNumbers.get(session);
    if (n === undefined) {
      n = this.sessionNumbers.size;
      this.sessionNumbers.set(session, n);
    }
    return n;
  }

  /** Adds row `rowid`; when full, the oldest row (smallest rowid) leaves to make room. */
  add(rowid: number, session: string, vector: ArrayLike<number>): void {
    if (vector.length !== this.dims) return;
    if (this.size === this.maxRows) this.removeAt(this.oldest());
    if (this.size === this.rowids.length) this.grow();
    const slot = this.size++;
    const code = signCode(vector);
    for (const p of this.parts) p.codes.set(code.subarray(p.from, p.from + p.words), slot * p.words);
    this.rowids[slot] = rowid;
    this.sessionOf[slot] = this.sessionNumber(session);
  }

  /** Removes row `rowid` (nothing when absent). */
  remove(rowid: number): void {
    for (let i = 0; i < this.size; i++) {
      if (this.rowids[i] === rowid) {
        this.removeAt(i);
        return;
      }
    }
  }

  /** Removes every row of `session`. */
  removeSession(session: string): void {
    const n = this.sessionNumbers.get(session);
    if (n === undefined) return;
    for (let i = this.size - 1; i >= 0; i--) if (this.sessionOf[i] === n) this.removeAt(i);
  }

  /**
   * The rowids of the `count` rows nearest to `vector` by their codes among those `filter` admits, in no
   * particular order: the SURVIVORS (or four times the pool, if more) nearest by their codes' first parts (when there are more rows), the POOL
   * times `count` nearest of those by their first two parts, and of those the `count` whose whole codes have the
   * largest dot product with the query's own numbers. The Hamming passes compute distances and their histogram,
   * which gives the cut (ties broken by position), so they cost no sort.
   */
  candidates(vector: ArrayLike<number>, count: number, filter: SessionFilter = {}): number[] {
    if (vector.length !== this.dims || this.size === 0) return [];
    const q = signCode(vector);
    const allowed = this.admitted(filter);
    const pool = count * POOL;
    const keep = Math.max(SURVIVORS, pool * 4);
    const survivors = this.parts.length > 1 && this.size > keep ? this.nearest(q, allowed, null, 1, keep) : null;
    const nearest = this.nearest(q, allowed, survivors, 2, pool);
    const slots = nearest.length > count ? this.largestDots(vector, nearest, count) : nearest;
    return Array.from(slots, (i) => this.rowids[i]!);
  }

  /**
   * The slots of the `count` admitted rows nearest to `q` by the first `parts` parts of their codes, of
   * `survivors` (null: of every row).
   */
  private nearest(q: Uint32Array, allowed: Uint8Array, survivors: Int32Array | null, parts: number, count: number): Int32Array {
    const n = survivors ? survivors.length : this.size;
    const { dist, sessionOf } = this;
    const [a, b] = this.parts;
    const second = parts > 1 ? b : undefined;
    const excluded = (a!.words + (second?.words ?? 0)) * 32 + 1;
    const hist = new Uint32Array(excluded + 1);
    // The distances of the survivors (or of every row), in `dist`'s first n places.
    for (let k = 0; k < n; k++) {
      const i = survivors ? survivors[k]! : k;
      let h = excluded;
      if (survivors || allowed[sessionOf[i]!] === 1) {
        h = hamming(a!.codes, i * a!.words, q, 0, a!.words);
        if (second) h += hamming(second.codes, i * second.words, q, second.from, second.words);
      }
      dist[k] = h;
      hist[h]! += 1;
    }
    let { cut, ties } = cutOf(hist, count);
    const slots = new Int32Array(Math.min(count, n));
    let m = 0;
    for (let k = 0; k < n; k++) {
      const d = dist[k]!;
      if (d < cut || (d === cut && ties-- > 0)) slots[m++] = survivors ? survivors[k]! : k;
    }
    return slots.subarray(0, m);
  }

  /**
   * Of `slots`, the `count` whose codes have the largest dot product with `vector` (its numbers where their bits
   * are set): the query kept exact ranks the codes better than its own code does. A table per byte of the code
   * (the sums of its 256 bit patterns) makes each row four lookups a word.
   */
  private largestDots(vector: ArrayLike<number>, slots: Int32Array, count: number): Int32Array {
    const table = new Float64Array(wordsOf(this.dims) * 4 * 256);
    for (let b = 0; b < table.length / 256; b++) {
      for (let x = 1, o = b * 256; x < 256; x++) {
        const low = x & -x;
        table[o + x] = table[o + (x ^ low)]! + (vector[b * 8 + 31 - Math.clz32(low)] ?? 0);
      }
    }
    const dots = new Float64Array(slots.length);
    for (const { from, words, codes } of this.parts) {
      for (let k = 0; k < slots.length; k++) {
        let dot = 0;
        for (let w = 0, r = slots[k]! * words, o = from * 1024; w < words; w++, o += 1024) {
          const c = codes[r + w]!;
          dot += table[o + (c & 255)]! + table[o + 256 + ((c >>> 8) & 255)]! + table[o + 512 + ((c >>> 16) & 255)]! + table[o + 768 + (c >>> 24)]!;
        }
        dots[k]! += dot;
      }
    }
    const least = dots.slice().sort()[slots.length - count]!;
    let ties = count - dots.filter((d) => d > least).length;
    return slots.filter((_, k) => dots[k]! > least || (dots[k] === least && ties-- > 0));
  }

  /** Per session number, whether a query may return it (1) or not (0). */
  private admitted({ except, within }: SessionFilter): Uint8Array {
    const allowed = new Uint8Array(this.sessionNumbers.size).fill(within ? 0 : 1);
    if (within) for (const s of within) if (this.sessionNumbers.has(s)) allowed[this.sessionNumbers.get(s)!] = 1;
    if (except !== undefined && this.sessionNumbers.has(except)) allowed[this.sessionNumbers.get(except)!] = 0;
    return allowed;
  }

  private oldest(): number {
    let at = 0;
    for (let i = 1; i < this.size; i++) if (this.rowids[i]! < this.rowids[at]!) at = i;
    return at;
  }

  /** The last row moves into slot `i`. */
  private removeAt(i: number): void {
    const last = --this.size;
    if (i !== last) {
      for (const { words, codes } of this.parts) codes.copyWithin(i * words, last * words, (last + 1) * words);
      this.rowids[i] = this.rowids[last]!;
      this.sessionOf[i] = this.sessionOf[last]!;
    }
  }

  /** A quarter more room (never beyond maxRows). */
  private grow(): void {
    const n = Math.min(this.maxRows, Math.max(this.rowids.length + 16, Math.ceil(this.rowids.length * 1.25)));
    for (const p of this.parts) {
      const codes = new Uint32Array(n * p.words);
      codes.set(p.codes);
      p.codes = codes;
    }
    const rowids = new Float64Array(n);
    rowids.set(this.rowids);
    const sessionOf = new Uint32Array(n);
    sessionOf.set(this.sessionOf);
    this.rowids = rowids;
    this.sessionOf = sessionOf;
    this.dist = new Uint16Array(n);
  }
}
