#!/usr/bin/env node
// `npm run bench:memory [-- --sizes=1000,10000,100000 --vector-sizes=100000 --dims=1536 --searches=300 --writes=300]`:
// the recall index of one resource under `wrangler dev` (bench/memory/worker.ts, the resource memory object
// alone). For each size (indexed messages, two per turn): the index is seeded in writes of 500 turns (not
// timed), then
//   - search: `--searches` queries of 10 words like a user's message (the best 5, leaving a session out, as
//     automatic recall asks), p50/p99, timed from this process through wrangler's local proxy;
//   - index: `--writes` single-turn writes (two messages), as each ended turn is indexed, p50/p99;
//   - ping: the same round trip doing nothing, to subtract.
// With vectors (`--vector-sizes`, of `--dims` numbers: the clustered corpus of bench/memory/corpus.mjs) the
// search ranks by words and meaning (the query's embedding call itself is not included), and also:
//   - build: the first search by meaning starts the in-memory index's build; seconds until it is complete
//     (with its partition chosen, from 20,000 messages);
//   - meaning: `--searches` queries by meaning alone (the best 10), p50/p99, and recall@10 of the first
//     `--recall-queries` against an exact scan of the same corpus computed here, for each number of
//     candidates re-ranked (`--candidates=300,500,200`; the runtime re-ranks 300); the index's bytes.
// Each figure comes with the 1-minute load average when it was taken (the machine may be shared).
// Writes bench/results/memory.json and prints a table.
import { mkdirSync, writeFileSync } from "node:fs";
import { cpus, loadavg } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { now, quantile, round } from "./lib/client.mjs";
import { startBenchWorker } from "./lib/procs.mjs";
import { corpusVector, queryVector, topicOf } from "./memory/corpus.mjs";

const ROOT = resolve(fileURLToPath(import.meta.url), "..", "..");
const arg = (name, fallback) => process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3) ?? fallback;
const sizes = (list) => list.split(",").filter(Boolean).map(Number);
const SIZES = sizes(arg("sizes", "1000,10000,100000"));
// Recall with an embedding model: vectors of DIMS numbers (text-embedding-3-small's 1536).
const VECTOR_SIZES = sizes(arg("vector-sizes", "100000"));
const DIMS = Number(arg("dims", "1536"));
const SEARCHES = Number(arg("searches", "300"));
const WRITES = Number(arg("writes", "300"));
const RECALL_QUERIES = Number(arg("recall-queries", "100"));
// How many candidates of the sign codes are re-ranked with their floats: the runtime's (300) and others, to show the trade.
const CANDIDATES = sizes(arg("candidates", "300,500,200"));
const SEED_BATCH = 500;
const load = () => round(loadavg()[0]);

const worker = await startBenchWorker(ROOT, "memory");
const { dispose } = worker;
// Once more when the connection was dropped: a keep-alive socket the proxy closed while the exact scan held this process.
const get = (path) => worker.get(path).catch((err) => (err instanceof TypeError ? worker.get(path) : Promise.reject(err)));
const timed = async (n, path) => {
  const ms = [];
  const before = load();
  for (let i = 0; i < n; i++) {
    const t = now();
    await get(path(i));
    ms.push(now() - t);
  }
  return { p50_ms: round(quantile(ms, 0.5)), p99_ms: round(quantile(ms, 0.99)), load: Math.max(before, load()) };
};

/** The exact ten nearest messages (`<turn_id>:<role>`) of each query, by a scan of every vector of the corpus. */
function exactNearest(messages, dims, queries) {
  const all = new Float32Array(messages * dims);
  for (let m = 0; m < messages; m++) all.set(corpusVector(m, topicOf(m), dims), m * dims);
  return Array.from({ length: queries }, (_, q) => {
    const v = queryVector(q, messages, dims);
    const top = []; // [similarity, message], kept sorted descending, at most 10
    for (let m = 0; m < messages; m++) {
      let dot = 0;
      for (let d = 0, o = m * dims; d < dims; d++, o++) dot += v[d] * all[o];
      if (top.length < 10 || dot > top[9][0]) {
        top.push([dot, m]);
        top.sort((a, b) => b[0] - a[0]);
        top.length = Math.min(top.length, 10);
      }
    }
    return top.map(([, m]) => `trn_${m >> 1}:${m & 1 ? "assistant" : "user"}`);
  });
}

/** Meaning: the build's time, timed queries, recall@10 against the exact scan, and the index's size. */
async function meaning(rid, messages, truth) {
  const path = (q) => `/meaning?rid=${rid}&seed=${q}&messages=${messages}&dims=${DIMS}`;
  const t0 = now();
  await get(path(0));
  while (!(await get(`/state?rid=${rid}`))?.ready) await new Promise((r) => setTimeout(r, 50));
  const build = { s: round((now() - t0) / 1000), load: load() };
  await timed(10, path); // warm-up
  const byCandidates = [];
  for (const c of CANDIDATES) {
    const at = (q) => `${path(q)}&candidates=${c}`;
    const search = await timed(SEARCHES, at);
    let found = 0;
    for (const [q, exact] of truth.entries()) {
      const { ids } = await get(at(q));
      found += exact.filter((id) => ids.includes(id)).length;
    }
    byCandidates.push({ candidates: c, search, recall_at_10: round(found / (truth.length * 10)) });
  }
  const state = await get(`/state?rid=${rid}`);
  return { build, by_candidates: byCandidates, index_bytes: state.bytes, index_rows: state.rows, index_partitions: state.partitions };
}

const results = [];
try {
  for (const [size, dims] of [...SIZES.map((n) => [n, 0]), ...VECTOR_SIZES.map((n) => [n, DIMS])]) {
    // One resource per size, so each is measured at exactly its size.
    const rid = `bench-${size}-${dims}`;
    const d = `&dims=${dims}&messages=${size}`;
    const turns = size / 2;
    // The exact scan first: it holds this process for a while (one query takes about 0.5 s at 100,000).
    const truth = dims > 0 ? exactNearest(size, dims, RECALL_QUERIES) : null;
    const t0 = now();
    await get(`/register?rid=${rid}&from=0&to=${turns + WRITES}`);
    const batch = dims > 0 ? 50 : SEED_BATCH; // vectors make a write large
    for (let from = 0; from < turns; from += batch) await get(`/seed?rid=${rid}&from=${from}&to=${Math.min(turns, from + batch)}${d}`);
    const seed_s = round((now() - t0) / 1000);
    const byMeaning = dims > 0 ? await meaning(rid, size, truth) : null;
    await timed(10, (i) => `/search?rid=${rid}&seed=${i}${d}`); // warm-up
    const search = await timed(SEARCHES, (i) => `/search?rid=${rid}&seed=${(i * 7919) % turns}${d}`);
    const index = await timed(WRITES, (i) => `/index?rid=${rid}&from=${turns + i}${d}`);
    const ping = await timed(SEARCHES, () => "/healthz");
    const row = { messages: size, dims, seed_s, search, index, ping, ...(byMeaning ? { meaning: byMeaning } : {}) };
    results.push(row);
    console.log(JSON.stringify(row));
  }
} finally {
  await dispose();
}

mkdirSync(join(ROOT, "bench", "results"), { recursive: true });
const out = { when: new Date().toISOString(), cpus: cpus().length, searches: SEARCHES, writes: WRITES, results };
writeFileSync(join(ROOT, "bench", "results", "memory.json"), `${JSON.stringify(out, null, 2)}\n`);
const cell = (m) => `${m.p50_ms}/${m.p99_ms} (load ${m.load})`.padEnd(26);
console.log("\nmessages  dims  search p50/p99 ms          index a turn p50/p99 ms   round trip p50/p99 ms");
for (const r of results) console.log(`${String(r.messages).padEnd(9)} ${String(r.dims || "-").padEnd(5)} ${cell(r.search)} ${cell(r.index)} ${cell(r.ping)}`);
for (const r of results.filter((x) => x.meaning)) {
  const m = r.meaning;
  console.log(
    `\nby meaning alone, ${r.messages} messages of ${r.dims} numbers: index ${round(m.index_bytes / 1e6)} MB (${m.index_rows} rows, ${m.index_partitions} partitions), ` +
      `built in ${m.build.s} s (load ${m.build.load})`,
  );
  for (const c of m.by_candidates) console.log(`  ${String(c.candidates).padStart(4)} re-ranked: p50/p99 ${cell(c.search)} recall@10 ${c.recall_at_10}`);
}
