// Recall by meaning's in-memory index: each message's vector kept as one bit a dimension (its sign), so
// 100,000 vectors of 1,536 numbers take 19.2 MB where their floats take 614 MB, with a number a row that corrects
// the estimate its bits give. From PARTITION_FROM rows the rows are split into about the square root of their
// number of partitions (src/engine/memory/code-partitions.ts), each in arrays of its own (code-blocks.ts): a
// query reads only the partitions whose centres are nearest to it, enough of them to hold PROBE_SHARE of the
// rows, keeps the nearest of their rows by the Hamming distance of their codes' first PREFIX_WORDS words to its
// own code, and of those returns the ones with the largest estimated cosine (the dot product of the query's
// numbers with the row's signs, corrected). Pure: no storage, no platform; the resource's memory object feeds it
// (src/objects/memory/recall-meaning.ts) and re-ranks what it returns with the exact floats.
import { Block } from "./code-blocks";
import { type Centres, hamming, partitionsFor, trainCentres } from "./code-partitions";
import { dotBits, largest, querySum, queryTable } from "./code-scores";

/** What one row costs: its code, its rowid (float64), its session's number (uint32), its correction (float32), with a quarter of room to grow. */
export function rowBytes(dims: number): number {
  return Math.ceil((wordsOf(dims) * 4 + 8 + 4 + 4) * 1.25);
}

const wordsOf = (dims: number) => Math.ceil(dims / 32);

/** Below this many rows a query reads every row (about a millisecond at 1,536 dimensions) and there is no partition. */
export const PARTITION_FROM = 20_000;
/** The share of the rows a query reads, in its nearest partitions (bench/memory.mjs: recall@10 on 100,000). */
export const PROBE_SHARE = 0.12;
/** The words of the codes the Hamming pass compares (the first 512 bits). */
const PREFIX_WORDS = 16;
/** How many times the rows asked the Hamming pass keeps for the estimates to choose from. */
const POOL = 4;
/** The partition is chosen again when the rows have grown by this factor since it was chosen. */
const REGROW = 2;
/** Rows moved into a new partition in one slice of choosing it. */
const MOVE_SLICE = 250;
/** Sample codes a centre is trained on. */
const SAMPLE_PER_CENTRE = 16;

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

/**
 * |v|2 / |v|1: a unit query's dot product with v's signs, times this, estimates its cosine with v (the sign
 * code's own cosine with v divides it out, as RaBitQ's estimator does), where the raw dot product favours rows
 * whose numbers are spread evenly.
 */
function correction(vector: ArrayLike<number>): number {
  let l1 = 0;
  let l2 = 0;
  for (let i = 0; i < vector.length; i++) {
    l1 += Math.abs(vector[i]!);
    l2 += vector[i]! * vector[i]!;
  }
  return l1 > 0 ? Math.sqrt(l2) / l1 : 0;
}

/** Which sessions a query may return: only those of `within` (when given), never `except`. */
export type SessionFilter = { except?: string; within?: readonly string[] };

/** Rows under one partition (null centres: one block, no partition). */
type Layout = { centres: Centres | null; blocks: Block[] };

/** The rows a query reads: block and slot, side by side. */
type Rows = { blocks: Block[]; slots: Int32Array; of: Int32Array; n: number };

export class SignCodes {
  readonly dims: number;
  private readonly words: number;
  /** The layout rows are added to, last; while a new partition takes the rows, the one before it too. */
  private layouts: Layout[];
  private size = 0;
  private partitionedAt = 0;
  /** A partition being trained (its rows are moved once it is). */
  private training: Generator<void, Centres> | null = null;
  /** Session ids and their numbers (a session's number is kept after it leaves: a handful of bytes). */
  private readonly sessionNumbers = new Map<string, number>();
  private readonly scratch: Uint32Array;

  /** `capacity`: the rows allocated at first; `maxRows`: the most ever held (the memory bound). */
  constructor(
    dims: number,
    capacity: number,
    readonly maxRows: number,
  ) {
    this.dims = dims;
    this.words = wordsOf(dims);
    this.layouts = [{ centres: null, blocks: [new Block(this.words, Math.max(16, Math.min(capacity, maxRows)))] }];
    this.scratch = new Uint32Array(this.words);
  }

  get count(): number {
    return this.size;
  }

  /** The partitions rows are added to (0: none). */
  get partitions(): number {
    return this.layouts.at(-1)!.centres?.count ?? 0;
  }

  /** The bytes the index's arrays hold (what it costs the isolate, less a few bytes a session). */
  get bytes(): number {
    let sum = 0;
    for (const l of this.layouts) sum += (l.centres?.codes.byteLength ?? 0) + l.blocks.reduce((s, b) => s + b.bytes, 0);
    return sum;
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
    if (this.size === this.maxRows) this.removeOldest();
    const code = signCode(vector, this.scratch);
    const layout = this.layouts.at(-1)!;
    const block = layout.blocks[layout.centres ? layout.centres.nearest(code, 0) : 0]!;
    block.push(code, 0, rowid, this.sessionNumber(session), correction(vector));
    this.size += 1;
  }

  /** Removes row `rowid` (nothing when absent). */
  remove(rowid: number): void {
    for (const l of this.layouts) {
      for (const b of l.blocks) {
        const i = b.find(rowid);
        if (i >= 0) {
          b.removeAt(i);
          this.size -= 1;
          return;
        }
      }
    }
  }

  /** Removes every row of `session`. */
  removeSession(session: string): void {
    const n = this.sessionNumbers.get(session);
    if (n === undefined) return;
    for (const l of this.layouts) {
      for (const b of l.blocks) {
        for (let i = b.size - 1; i >= 0; i--) {
          if (b.sessionOf[i] === n) {
            b.removeAt(i);
            this.size -= 1;
          }
        }
      }
    }
  }

  private removeOldest(): void {
    let at: { b: Block; i: number } | null = null;
    for (const l of this.layouts) for (const b of l.blocks) for (let i = 0; i < b.size; i++) if (!at || b.rowids[i]! < at.b.rowids[at.i]!) at = { b, i };
    if (at) {
      at.b.removeAt(at.i);
      this.size -= 1;
    }
  }

  /** Whether the partition should be chosen (again): enough rows, and none chosen or the rows have grown much since. */
  get wantsPartition(): boolean {
    if (this.training || this.layouts.length > 1 || this.size < PARTITION_FROM) return false;
    return this.partitionedAt === 0 || this.size >= this.partitionedAt * REGROW;
  }

  /**
   * One slice of choosing the partition (starting it when it is wanted); true when there is nothing more to do.
   * Rows added meanwhile go to the new partition once it is trained; queries read both until every row has moved.
   */
  partitionStep(): boolean {
    if (this.layouts.length > 1) return this.moveSlice();
    if (!this.training) {
      if (!this.wantsPartition) return true;
      this.training = trainCentres(this.sample(), this.words, partitionsFor(this.size));
      return false;
    }
    const step = this.training.next();
    if (!step.done) return false;
    this.training = null;
    this.layouts.push({ centres: step.value, blocks: Array.from({ length: step.value.count }, () => new Block(this.words)) });
    this.partitionedAt = this.size;
    return false;
  }

  /** Codes spread over every row, for training centres. */
  private sample(): Uint32Array {
    const n = Math.min(this.size, partitionsFor(this.size) * SAMPLE_PER_CENTRE);
    const out = new Uint32Array(n * this.words);
    const every = this.size / n;
    let seen = 0;
    let taken = 0;
    for (const l of this.layouts) {
      for (const b of l.blocks) {
        for (let i = 0; i < b.size && taken < n; i++, seen++) {
          if (seen < Math.floor(taken * every)) continue;
          out.set(b.codes.subarray(i * this.words, (i + 1) * this.words), taken * this.words);
          taken += 1;
        }
      }
    }
    return out.subarray(0, taken * this.words);
  }

  /** Moves up to MOVE_SLICE rows of the older layout into the newer one (last rows first, so nothing shifts). */
  private moveSlice(): boolean {
    const [old, next] = this.layouts as [Layout, Layout];
    let moved = 0;
    while (moved < MOVE_SLICE && old.blocks.length > 0) {
      const b = old.blocks.at(-1)!;
      for (; b.size > 0 && moved < MOVE_SLICE; moved++) {
        const i = b.size - 1;
        next.blocks[next.centres!.nearest(b.codes, i * this.words)]!.push(b.codes, i * this.words, b.rowids[i]!, b.sessionOf[i]!, b.scale[i]!);
        b.removeAt(i);
      }
      if (b.size === 0) old.blocks.pop();
    }
    if (old.blocks.length > 0) return false;
    this.layouts = [next];
    return true;
  }

  /**
   * The rowids of the `count` rows nearest to `vector` among those `filter` admits, in no particular order: of the
   * rows of the nearest partitions (or every row), the POOL times `count` nearest by the Hamming distance of their
   * codes' first words, and of those the `count` with the largest estimated cosine. The Hamming pass computes
   * distances and their histogram, which gives the cut (ties broken by position), so it costs no sort.
   */
  candidates(vector: ArrayLike<number>, count: number, filter: SessionFilter = {}): number[] {
    if (vector.length !== this.dims || this.size === 0 || count <= 0) return [];
    const allowed = this.admitted(filter);
    const table = queryTable(vector);
    const rows = this.probed(table, allowed, filter.within !== undefined);
    const nearest = rows.n > count * POOL ? this.nearestByHamming(signCode(vector), rows, count * POOL) : rows;
    const sum = querySum(table);
    const estimates = new Float64Array(nearest.n);
    for (let k = 0; k < nearest.n; k++) {
      const b = nearest.blocks[nearest.of[k]!]!;
      const i = nearest.slots[k]!;
      estimates[k] = (2 * dotBits(table, b.codes, i * this.words, this.words) - sum) * b.scale[i]!;
    }
    return largest(estimates, count).map((k) => nearest.blocks[nearest.of[k]!]!.rowids[nearest.slots[k]!]!);
  }

  /**
   * The admitted rows of the blocks a query reads: of each layout, its blocks in the order of their centres'
   * estimated nearness until they hold PROBE_SHARE of its rows (counting only the admitted ones when `counted`).
   */
  private probed(table: Float32Array, allowed: Uint8Array, counted: boolean): Rows {
    const blocks: Block[] = [];
    for (const l of this.layouts) {
      if (!l.centres) {
        blocks.push(...l.blocks);
        continue;
      }
      const rows = l.blocks.map((b) => (counted ? admittedIn(b, allowed) : b.size));
      const all = rows.reduce((a, b) => a + b, 0);
      const scores = Array.from(l.blocks, (_, c) => dotBits(table, l.centres!.codes, c * this.words, this.words));
      const order = Array.from(scores.keys()).sort((a, b) => scores[b]! - scores[a]!);
      let total = 0;
      for (const c of order) {
        if (total >= all * PROBE_SHARE) break;
        blocks.push(l.blocks[c]!);
        total += rows[c]!;
      }
    }
    const n = blocks.reduce((s, b) => s + b.size, 0);
    const out: Rows = { blocks, slots: new Int32Array(n), of: new Int32Array(n), n: 0 };
    for (const [k, b] of blocks.entries()) {
      for (let i = 0; i < b.size; i++) {
        if (allowed[b.sessionOf[i]!] !== 1) continue;
        out.slots[out.n] = i;
        out.of[out.n++] = k;
      }
    }
    return out;
  }

  /** Of `rows`, the `count` nearest to `q` by the Hamming distance of their codes' first PREFIX_WORDS words. */
  private nearestByHamming(q: Uint32Array, rows: Rows, count: number): Rows {
    const words = Math.min(PREFIX_WORDS, this.words);
    const dist = new Uint16Array(rows.n);
    const hist = new Uint32Array(words * 32 + 1);
    // Rows come block by block: each block's codes are looked up once.
    let codes = rows.blocks[0]?.codes ?? q;
    for (let k = 0, of = 0; k < rows.n; k++) {
      if (rows.of[k] !== of) codes = rows.blocks[(of = rows.of[k]!)]!.codes;
      const h = hamming(codes, rows.slots[k]! * this.words, q, 0, words);
      dist[k] = h;
      hist[h]! += 1;
    }
    let cut = 0;
    let below = 0;
    while (below + hist[cut]! < count) below += hist[cut++]!;
    let ties = count - below;
    const out: Rows = { blocks: rows.blocks, slots: new Int32Array(count), of: new Int32Array(count), n: 0 };
    for (let k = 0; k < rows.n; k++) {
      const d = dist[k]!;
      if (d < cut || (d === cut && ties-- > 0)) {
        out.slots[out.n] = rows.slots[k]!;
        out.of[out.n++] = rows.of[k]!;
      }
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
}

function admittedIn(b: Block, allowed: Uint8Array): number {
  let n = 0;
  for (let i = 0; i < b.size; i++) n += allowed[b.sessionOf[i]!]!;
  return n;
}
