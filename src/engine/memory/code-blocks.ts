// The rows of one partition of recall by meaning's sign codes (src/engine/memory/sign-codes.ts), in arrays of its
// own so a query reads a partition's codes from consecutive memory; rows leave by moving the block's last row
// into their place.

export class Block {
  codes: Uint32Array;
  rowids: Float64Array;
  sessionOf: Uint32Array;
  /** Each row's correction of its estimate (see `correction`). */
  scale: Float32Array;
  size = 0;

  constructor(
    readonly words: number,
    capacity = 16,
  ) {
    this.codes = new Uint32Array(capacity * words);
    this.rowids = new Float64Array(capacity);
    this.sessionOf = new Uint32Array(capacity);
    this.scale = new Float32Array(capacity);
  }

  get bytes(): number {
    return this.codes.byteLength + this.rowids.byteLength + this.sessionOf.byteLength + this.scale.byteLength;
  }

  /** Appends a row whose code is `words` words of `code` from `at`. */
  push(code: Uint32Array, at: number, rowid: number, session: number, scale: number): void {
    if (this.size === this.rowids.length) this.resize(Math.max(this.size + 16, Math.ceil(this.size * 1.25)));
    const i = this.size++;
    this.codes.set(code.subarray(at, at + this.words), i * this.words);
    this.rowids[i] = rowid;
    this.sessionOf[i] = session;
    this.scale[i] = scale;
  }

  /** The row at `i` leaves (the last row takes its place). */
  removeAt(i: number): void {
    const last = --this.size;
    if (i !== last) {
      this.codes.copyWithin(i * this.words, last * this.words, (last + 1) * this.words);
      this.rowids[i] = this.rowids[last]!;
      this.sessionOf[i] = this.sessionOf[last]!;
      this.scale[i] = this.scale[last]!;
    }
    // A block that has lost many rows gives its room back (a block being emptied into a new partition, often).
    if (this.rowids.length > 64 && this.size < this.rowids.length * 0.7) this.resize(Math.ceil(this.size * 1.1) + 16);
  }

  /** The slot of `rowid`, or -1. */
  find(rowid: number): number {
    for (let i = 0; i < this.size; i++) if (this.rowids[i] === rowid) return i;
    return -1;
  }

  private resize(n: number): void {
    const codes = new Uint32Array(n * this.words);
    codes.set(this.codes.subarray(0, this.size * this.words));
    this.codes = codes;
    this.rowids = copied(this.rowids, new Float64Array(n), this.size);
    this.sessionOf = copied(this.sessionOf, new Uint32Array(n), this.size);
    this.scale = copied(this.scale, new Float32Array(n), this.size);
  }
}

function copied<T extends Float64Array | Uint32Array | Float32Array>(from: T, to: T, n: number): T {
  to.set(from.subarray(0, n));
  return to;
}
