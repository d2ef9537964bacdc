// Recall by meaning's in-memory index: each message's vector kept as one bit a dimension (its sign), so
// 100,000 vectors of 1,536 numbers take 19.2 MB where their floats take 614 MB. A query's code is compared
// with every code by Hamming distance (XOR and popcount on 32-bit words), which follows the angle between
// the vectors; the nearest few hundred are then re-ranked by the caller with the exact floats. Pure: no
// storage, no platform; the resource's memory object feeds it (src/objects/memory/recall-meaning.ts).

/** What one row costs: its code, its rowid (float64) and its session's number (uint32), and a distance slot (uint16). */
export function rowBytes(dims: number): number {
  return wordsOf(dims) * 4 + 8 + 4 + 2;
}

const wordsOf = (dims: number) => Math.ceil(dims / 32);

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
  private readonly words: number;
  private codes: Uint32Array;
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
    this.words = wordsOf(dims);
    const n = Math.max(1, Math.min(capacity, maxRows));
    this.codes = new Uint32Array(n * this.words);
    this.rowids = new Float64Array(n);
    this.sessionOf = new Uint32Array(n);
    this.dist = new Uint16Array(n);
  }

  get count(): number {
    return this.size;
  }

  /** The bytes the index's arrays hold (what it costs the isolate, less a few bytes a session). */
  get bytes(): number {
    return this.codes.byteLength + this.rowids.byteLength + this.sessionOf.byteLength + this.dist.byteLength;
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
    signCode(vector, this.codes, slot * this.words);
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
   * The rowids of the `count` rows whose codes are nearest to `vector`'s among those `filter` admits, in no
   * particular order (ties at the cut broken by position). One pass computes the distances; a histogram of
   * them gives the cut, so selecting costs no sort.
   */
  candidates(vector: ArrayLike<number>, count: number, filter: SessionFilter = {}): number[] {
    if (vector.length !== this.dims || this.size === 0) return [];
    const q = signCode(vector);
    const allowed = this.admitted(filter);
    const hist = this.distances(q, allowed);
    let cut = 0;
    let below = 0;
    while (cut <= this.dims && below + hist[cut]! < count) below += hist[cut++]!;
    // Fewer admitted rows than `count`: all of them, and none of the rows not admitted (at dims + 1).
    let ties = cut > this.dims ? 0 : count - below;
    const out: number[] = [];
    const { dist, rowids } = this;
    for (let i = 0; i < this.size; i++) {
      const d = dist[i]!;
      if (d < cut || (d === cut && ties-- > 0)) out.push(rowids[i]!);
    }
    return out;
  }

  /** Per session number, whether a query may return it (1) or not (0). */
  private admitted({ except, within }: SessionFilter): Uint8Array {
    const allowed = new Uint8Array(this.sessionNumbers.size).fill(within ? 0 : 1);
    if (within) for (const s of within) if (this.sessionNumbers.has(s)) allowed[this.sessionNumbers.get(s)!] = 1;
    if (except !== undefined && this.sessionNumbers.has(except)) allowed[this.sessionNumbers.get(except)!] = 0;
    return allowed;
  }

  /** Fills `dist` with each row's Hamming distance to `q` (dims + 1 for a row not admitted); returns their histogram. */
  private distances(q: Uint32Array, allowed: Uint8Array): Uint32Array {
    const { codes, dist, sessionOf, words } = this;
    const hist = new Uint32Array(this.dims + 2);
    const excluded = this.dims + 1;
    for (let i = 0, o = 0; i < this.size; i++, o += words) {
      if (allowed[sessionOf[i]!] === 0) {
        dist[i] = excluded;
        continue;
      }
      let h = 0;
      let w = 0;
      // Two words at a time: their bit counts per byte (at most 16) are added before the final multiply.
      for (; w + 1 < words; w += 2) {
        let x = codes[o + w]! ^ q[w]!;
        let y = codes[o + w + 1]! ^ q[w + 1]!;
        x -= (x >>> 1) & 0x55555555;
        y -= (y >>> 1) & 0x55555555;
        x = (x & 0x33333333) + ((x >>> 2) & 0x33333333);
        y = (y & 0x33333333) + ((y >>> 2) & 0x33333333);
        x = ((x + (x >>> 4)) & 0x0f0f0f0f) + ((y + (y >>> 4)) & 0x0f0f0f0f);
        h += Math.imul(x, 0x01010101) >>> 24;
      }
      if (w < words) {
        let x = codes[o + w]! ^ q[w]!;
        x -= (x >>> 1) & 0x55555555;
        x = (x & 0x33333333) + ((x >>> 2) & 0x33333333);
        h += Math.imul((x + (x >>> 4)) & 0x0f0f0f0f, 0x01010101) >>> 24;
      }
      dist[i] = h;
      hist[h]! += 1;
    }
    return hist;
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
      this.codes.copyWithin(i * this.words, last * this.words, (last + 1) * this.words);
      this.rowids[i] = this.rowids[last]!;
      this.sessionOf[i] = this.sessionOf[last]!;
    }
  }

  /** A quarter more room (never beyond maxRows). */
  private grow(): void {
    const n = Math.min(this.maxRows, Math.max(this.rowids.length + 16, Math.ceil(this.rowids.length * 1.25)));
    const codes = new Uint32Array(n * this.words);
    codes.set(this.codes);
    const rowids = new Float64Array(n);
    rowids.set(this.rowids);
    const sessionOf = new Uint32Array(n);
    sessionOf.set(this.sessionOf);
    this.codes = codes;
    this.rowids = rowids;
    this.sessionOf = sessionOf;
    this.dist = new Uint16Array(n);
  }
}
