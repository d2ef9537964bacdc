// The in-memory index of recall by meaning (src/engine/memory/sign-codes.ts): its candidates hold the exact
// nearest neighbours of a clustered corpus (also once a large index is split into partitions, chosen a slice at
// a time while rows come and go), its session filters and removals are exact, and it keeps within its row bound
// by letting the oldest rows go.
import { describe, expect, it } from "vitest";
import { PARTITION_FROM, rowBytes, SignCodes, signCode } from "../../src/engine/memory/sign-codes";

/** A seeded stream of numbers in [-1, 1). */
function stream(seed: number): () => number {
  let x = seed * 2654435761 + 1;
  return () => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return (x >>> 0) / 2147483648 - 1;
  };
}

const DIMS = 96;
/** Vector `i` of topic `i % 40`: the topic's centre and the message's own noise. */
function vector(i: number, topic = i % 40, dims = DIMS): number[] {
  const centre = stream(1000 + topic);
  const noise = stream(i + 7);
  return Array.from({ length: dims }, () => centre() + 0.8 * noise());
}

const dot = (a: number[], b: number[]) => a.reduce((s, x, k) => s + x * b[k]!, 0);
const cos = (a: number[], b: number[]) => dot(a, b) / Math.sqrt(dot(a, a) * dot(b, b));

describe("sign codes", () => {
  it("a bit per dimension, set when the number is positive", () => {
    const v = Array.from({ length: 40 }, (_, k) => (k % 3 === 0 ? 1 : -1));
    const code = signCode(v);
    expect(code).toHaveLength(2);
    for (let k = 0; k < 40; k++) expect(((code[k >> 5]! >>> (k & 31)) & 1) === 1).toBe(k % 3 === 0);
    // The code, rowid, session and correction, with a quarter of room to grow.
    expect(rowBytes(1536)).toBe(Math.ceil((192 + 16) * 1.25));
  });

  /** Of 20 queries' exact ten nearest (by cosine) among `all`, the share among their `count` candidates. */
  function recallAt10(codes: SignCodes, all: number[][], count: number, dims: number): number {
    let found = 0;
    for (let q = 0; q < 20; q++) {
      const query = vector(-1 - q, q, dims);
      const exact = all
        .map((v, i) => ({ rowid: i + 1, s: cos(query, v) }))
        .sort((a, b) => b.s - a.s)
        .slice(0, 10);
      const cands = new Set(codes.candidates(query, count));
      expect(cands.size).toBe(count);
      found += exact.filter((e) => cands.has(e.rowid)).length;
    }
    return found / 200;
  }

  it("the candidates hold the exact ten nearest of a clustered corpus", () => {
    const codes = new SignCodes(DIMS, 16, 10_000);
    const all = Array.from({ length: 4000 }, (_, i) => vector(i));
    for (const [i, v] of all.entries()) codes.add(i + 1, `s${i % 9}`, v);
    expect(codes.count).toBe(4000);
    expect(recallAt10(codes, all, 200, DIMS)).toBeGreaterThanOrEqual(0.95);
  });

  // Seconds of CPU: on a loaded machine (a CI run beside it) it took over vitest's default 5 s.
  it("from PARTITION_FROM rows, a partition chosen a slice at a time keeps the exact ten nearest, and filters and removals exactly", () => {
    const dims = 256;
    const rows = PARTITION_FROM + 4000;
    const codes = new SignCodes(dims, rows, rows + 1000);
    const all = Array.from({ length: rows }, (_, i) => vector(i, i % 40, dims));
    for (const [i, v] of all.entries()) codes.add(i + 1, `s${i % 9}`, v);
    expect(codes.partitions).toBe(0);
    expect(codes.wantsPartition).toBe(true);
    // Rows come and go while the partition is chosen; queries meanwhile find every row where it is.
    let slices = 0;
    const extra = vector(-7, 7, dims);
    while (!codes.partitionStep()) {
      slices += 1;
      if (slices === 40) codes.add(rows + 1, "s_new", extra);
      if (slices === 60) codes.remove(1);
      if (slices >= 40 && slices % 10 === 0) expect(codes.candidates(extra, 1)).toEqual([rows + 1]);
    }
    expect(slices).toBeGreaterThan(60);
    expect(codes.partitions).toBe(Math.round(Math.sqrt(rows)));
    expect(codes.count).toBe(rows);
    expect(codes.candidates(all[0]!, 5)).not.toContain(1);
    expect(codes.candidates(extra, 1)).toEqual([rows + 1]);
    codes.remove(rows + 1);
    codes.add(1, "s0", all[0]!);
    // (At 24,000 rows of 256 numbers the sign codes need 500 candidates, with or without the partition.)
    expect(recallAt10(codes, all, 500, dims)).toBeGreaterThanOrEqual(0.95);
    // A row identical to the query is found in its partition.
    expect(codes.candidates(all[41]!, 1)).toEqual([42]);
    const session = (rowid: number) => `s${(rowid - 1) % 9}`;
    const query = vector(-5, 5, dims);
    expect(codes.candidates(query, 300, { except: "s1" })).toHaveLength(300);
    expect(codes.candidates(query, 300, { except: "s1" }).every((r) => session(r) !== "s1")).toBe(true);
    const within = codes.candidates(query, 300, { within: ["s2", "s4"] });
    expect(within).toHaveLength(300);
    expect(within.every((r) => ["s2", "s4"].includes(session(r)))).toBe(true);
    codes.removeSession("s3");
    expect(codes.candidates(query, 300, { within: ["s3"] })).toEqual([]);
    expect(codes.wantsPartition).toBe(false);
  }, 60_000);

  it("leaves out the sessions a filter excludes, and rows once removed", () => {
    const codes = new SignCodes(DIMS, 4, 1000);
    for (let i = 0; i < 300; i++) codes.add(i + 1, `s${i % 3}`, vector(i));
    const session = (rowid: number) => `s${(rowid - 1) % 3}`;
    const query = vector(5);
    expect(codes.candidates(query, 1000)).toHaveLength(300);
    expect(codes.candidates(query, 1000, { except: "s1" }).every((r) => session(r) !== "s1")).toBe(true);
    expect(codes.candidates(query, 1000, { except: "s1" })).toHaveLength(200);
    expect(codes.candidates(query, 50, { within: ["s2"] }).every((r) => session(r) === "s2")).toBe(true);
    expect(codes.candidates(query, 1000, { within: ["s2", "unknown"] })).toHaveLength(100);
    expect(codes.candidates(query, 10, { within: [] })).toEqual([]);
    // The row identical to the query comes first among its candidates, until it is removed.
    expect(codes.candidates(query, 1)).toEqual([6]);
    codes.remove(6);
    expect(codes.candidates(query, 1000)).not.toContain(6);
    codes.removeSession("s0");
    expect(codes.count).toBe(199);
    expect(codes.candidates(query, 1000).some((r) => session(r) === "s0")).toBe(false);
    // Vectors of another length (another model's) are not taken, and find nothing.
    codes.add(9999, "s1", [1, 2, 3]);
    expect(codes.count).toBe(199);
    expect(codes.candidates([1, 2, 3], 5)).toEqual([]);
  });

  it("keeps at most maxRows, the newest, growing its arrays as rows come", () => {
    const codes = new SignCodes(DIMS, 2, 100);
    const small = codes.bytes;
    for (let i = 0; i < 250; i++) codes.add(i + 1, "s", vector(i));
    expect(codes.count).toBe(100);
    expect(codes.bytes).toBeGreaterThan(small);
    expect(codes.bytes).toBeLessThanOrEqual(100 * rowBytes(DIMS));
    expect(Math.min(...codes.candidates(vector(0), 1000))).toBe(151);
  });
});
