#!/usr/bin/env node
// `node bench/auto-recall.mjs`: the time automatic recall (`memory.recall.auto`) adds at a turn's start. The
// worker, bundled as for deploy, runs in Miniflare with the zero-latency scripted model (bench/lib/fake-llm.mjs).
// One resource's recall index is seeded with BENCH_RECALL_SEED turns (each indexed as its turn ends); then,
// alternating, a new session of that resource whose agent has automatic recall and one whose agent has not run
// the same one-call turn, BENCH_RECALL_RUNS times each. Turn time is turn.submitted to turn.completed in the log
// (the runtime's clock). Prints medians as JSON.
import { median, round } from "./lib/client.mjs";
import { idleLog, sleep } from "./lib/miniflare.mjs";
import { report, startWithFakeLlm, turnMs } from "./lib/runs.mjs";

const RUNS = Number(process.env.BENCH_RECALL_RUNS ?? 15);
const SEED = Number(process.env.BENCH_RECALL_SEED ?? 100);
const MODEL = "openai-compatible:loop-s0-c0-d20";
const RESOURCE = "res_bench_recall";

const runtime = await startWithFakeLlm();
const { call } = runtime;

const agent = (auto) => ({ model: MODEL, ...(auto ? { memory: { recall: { auto: { top_k: 3, max_tokens: 500 } } } } : {}) });

/** One turn in a new session of the resource; its time on the runtime's clock, and what recall found. */
async function turn(auto, input) {
  const { session_id: sid } = await call("POST", "/v1/sessions", { agent: agent(auto), resource_id: RESOURCE });
  await call("POST", `/v1/sessions/${sid}/turns`, { input });
  const log = await idleLog(call, sid);
  const recalled = log.find((e) => e.type === "memory.recalled");
  return { ms: turnMs(log), hits: recalled?.payload.hits.length ?? null };
}

await report(runtime, async () => {
  for (let i = 0; i < SEED; i++) await turn(false, `note ${i}: the customer in region ${i % 7} prefers invoices by ${i % 2 ? "mail" : "email"}`);
  // The last turns' index writes run after their ends: wait until a search finds the newest.
  while ((await call("GET", `/v1/resources/${RESOURCE}/memory/search?q=${encodeURIComponent(`note ${SEED - 1}`)}`)).hits?.length === 0) await sleep(50);
  await turn(true, "warm-up");
  const plain = [];
  const recalling = [];
  const hits = [];
  for (let i = 0; i < RUNS; i++) {
    const q = `which region prefers invoices by mail? ${i}`;
    plain.push((await turn(false, q)).ms);
    const r = await turn(true, q);
    recalling.push(r.ms);
    hits.push(r.hits);
  }
  const [p, r] = [median(plain), median(recalling)];
  return {
    seeded_turns: SEED,
    runs: RUNS,
    plain_turn_ms: round(p),
    auto_recall_turn_ms: round(r),
    added_ms: round(r - p),
    hits: median(hits),
    samples: { plain, recalling },
  };
});
