#!/usr/bin/env node
// `npm run bench:index [-- --sizes=10000,100000 --shards=1,16 --pages=200]`: the session index's shards under
// `wrangler dev` (bench/index/worker.ts, the shard object alone). For each size and shard count: the data set
// is seeded through the shards' batch import (1000 sessions a request; not timed), then
//   - upserts: 2000 single-session writes, 32 at a time, as sessions write at turn ends (writes/s);
//   - pages: filtered first pages of 20 through the fan-out and merge of GET /v1/sessions, p50/p99 of
//     `--pages` requests each, timed from this process through wrangler's local proxy (the worker's own
//     clock does not advance while it computes, so it cannot time this itself).
// Writes bench/results/index-scale.json and prints a table. Locally every object runs in one workerd
// process on this machine's cores, so 16 shards show the cost of the fan-out, not their parallel capacity.
import { mkdirSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { now, quantile, round } from "./lib/client.mjs";
import { startBenchWorker } from "./lib/procs.mjs";

const ROOT = resolve(fileURLToPath(import.meta.url), "..", "..");
const arg = (name, fallback) => process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3) ?? fallback;
const SIZES = arg("sizes", "10000,100000").split(",").map(Number);
const SHARDS = arg("shards", "1,16").split(",").map(Number);
const PAGES = Number(arg("pages", "200"));
const UPSERTS = 2000;
const QUERIES = {
  agent_status: "agent=agent-3&status=idle",
  owner: "owner=user-42",
  metadata: "metadata.customer=c-5",
};

const { get, dispose } = await startBenchWorker(ROOT, "index");

const results = [];
try {
  for (const shards of SHARDS) {
    const prefix = `s${shards}`;
    let seeded = 0;
    for (const size of SIZES) {
      const t0 = now();
      for (; seeded < size; seeded += 1000) await get(`/seed?prefix=${prefix}&shards=${shards}&from=${seeded}&to=${Math.min(size, seeded + 1000)}`);
      const seedS = (now() - t0) / 1000;
      // Upserts of sessions already there (a turn end rewrites the row), spread over the whole set.
      const up = await get(`/upsert?prefix=${prefix}&shards=${shards}&from=${size - UPSERTS}&n=${UPSERTS}&concurrency=32`);
      const row = { sessions: size, shards, seed_s: round(seedS, 1), upserts_per_s: Math.round(UPSERTS / (up.ms / 1000)), pages: {} };
      for (const [name, query] of Object.entries(QUERIES)) {
        const ms = [];
        for (let i = 0; i < PAGES; i++) {
          const t = now();
          await get(`/list?prefix=${prefix}&shards=${shards}&limit=20&${query}`);
          ms.push(now() - t);
        }
        row.pages[name] = { p50_ms: round(quantile(ms, 0.5)), p99_ms: round(quantile(ms, 0.99)) };
      }
      results.push(row);
      console.log(JSON.stringify(row));
    }
  }
} finally {
  await dispose();
}

mkdirSync(join(ROOT, "bench", "results"), { recursive: true });
const out = {
  when: new Date().toISOString(),
  cpus: (await import("node:os")).cpus().length,
  pages_per_query: PAGES,
  upserts: UPSERTS,
  queries: QUERIES,
  results,
};
writeFileSync(join(ROOT, "bench", "results", "index-scale.json"), `${JSON.stringify(out, null, 2)}\n`);
console.log(
  "\nsessions  shards  upserts/s  " +
    Object.keys(QUERIES)
      .map((q) => `${q} p50/p99 ms`)
      .join("  "),
);
for (const r of results) {
  const pages = Object.values(r.pages).map((p) => `${p.p50_ms}/${p.p99_ms}`.padEnd(20));
  console.log(`${String(r.sessions).padEnd(9)} ${String(r.shards).padEnd(7)} ${String(r.upserts_per_s).padEnd(10)} ${pages.join("  ")}`);
}
