#!/usr/bin/env node
// `npm run bench:memory [-- --sizes=1000,10000,100000 --searches=300 --writes=300]`: the recall index of one
// resource under `wrangler dev` (bench/memory/worker.ts, the resource memory object alone). For each size (indexed
// messages, two per turn): the index is seeded in writes of 500 turns (not timed), then
//   - search: `--searches` queries of 10 words like a user's message (the best 5, leaving a session out, as
//     automatic recall asks), p50/p99, timed from this process through wrangler's local proxy;
//   - index: `--writes` single-turn writes (two messages), as each ended turn is indexed, p50/p99;
//   - ping: the same round trip doing nothing, to subtract.
// Then the same with vectors (`--vector-sizes=1000,10000 --dims=1536`): recall with an embedding model, whose
// nearest neighbours are found by brute force (the query's embedding call itself is not included).
// Writes bench/results/memory.json and prints a table.
import { mkdirSync, writeFileSync } from "node:fs";
import { cpus } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { now, quantile, round } from "./lib/client.mjs";
import { startBenchWorker } from "./lib/procs.mjs";

const ROOT = resolve(fileURLToPath(import.meta.url), "..", "..");
const arg = (name, fallback) => process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3) ?? fallback;
const SIZES = arg("sizes", "1000,10000,100000").split(",").map(Number);
// Recall with an embedding model: words and brute-force vectors of DIMS numbers (text-embedding-3-small's 1536).
const VECTOR_SIZES = arg("vector-sizes", "1000,10000").split(",").filter(Boolean).map(Number);
const DIMS = Number(arg("dims", "1536"));
const SEARCHES = Number(arg("searches", "300"));
const WRITES = Number(arg("writes", "300"));
const SEED_BATCH = 500;

const { get, dispose } = await startBenchWorker(ROOT, "memory");
const timed = async (n, path) => {
  const ms = [];
  for (let i = 0; i < n; i++) {
    const t = now();
    await get(path(i));
    ms.push(now() - t);
  }
  return { p50_ms: round(quantile(ms, 0.5)), p99_ms: round(quantile(ms, 0.99)) };
};

const results = [];
try {
  for (const [size, dims] of [...SIZES.map((n) => [n, 0]), ...VECTOR_SIZES.map((n) => [n, DIMS])]) {
    // One resource per size, so each is measured at exactly its size.
    const rid = `bench-${size}-${dims}`;
    const d = `&dims=${dims}`;
    const turns = size / 2;
    const t0 = now();
    await get(`/register?rid=${rid}&from=0&to=${turns + WRITES}`);
    const batch = dims > 0 ? 50 : SEED_BATCH; // vectors make a write large
    for (let from = 0; from < turns; from += batch) await get(`/seed?rid=${rid}&from=${from}&to=${Math.min(turns, from + batch)}${d}`);
    const seed_s = round((now() - t0) / 1000);
    const searches = dims > 0 ? Math.min(SEARCHES, 100) : SEARCHES;
    await timed(10, (i) => `/search?rid=${rid}&seed=${i}${d}`); // warm-up
    const search = await timed(searches, (i) => `/search?rid=${rid}&seed=${(i * 7919) % turns}${d}`);
    const index = await timed(WRITES, (i) => `/index?rid=${rid}&from=${turns + i}${d}`);
    const ping = await timed(SEARCHES, () => "/healthz");
    const row = { messages: size, dims, seed_s, search, index, ping };
    results.push(row);
    console.log(JSON.stringify(row));
  }
} finally {
  await dispose();
}

mkdirSync(join(ROOT, "bench", "results"), { recursive: true });
const out = { when: new Date().toISOString(), cpus: cpus().length, searches: SEARCHES, writes: WRITES, results };
writeFileSync(join(ROOT, "bench", "results", "memory.json"), `${JSON.stringify(out, null, 2)}\n`);
console.log("\nmessages  vector dims  search p50/p99 ms  index a turn p50/p99 ms  round trip p50/p99 ms");
for (const r of results) {
  const cell = (m) => `${m.p50_ms}/${m.p99_ms}`.padEnd(18);
  console.log(`${String(r.messages).padEnd(9)} ${String(r.dims || "-").padEnd(12)} ${cell(r.search)} ${cell(r.index)}      ${cell(r.ping)}`);
}
