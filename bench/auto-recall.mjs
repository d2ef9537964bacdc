#!/usr/bin/env node
// `npm run bench:recall`: the time automatic recall (`memory.recall.auto`) adds at a turn's start. The worker,
// bundled as for deploy, runs in Miniflare with the zero-latency scripted model (bench/lib/fake-llm.mjs).
// One resource's recall index is seeded with BENCH_RECALL_SEED turns (each indexed as its turn ends) and, with
// BENCH_RECALL_MESSAGES, that many messages more written straight into the resource's memory object (as turn
// ends write them, in batches; with vectors of BENCH_RECALL_DIMS numbers from bench/memory/corpus.mjs when
// BENCH_RECALL_DIMS is set, the agents then embedding with the fake model's `embed-<dims>`). Then,
// alternating, a new session of that resource whose agent has automatic recall and one whose agent has not run
// the same one-call turn, BENCH_RECALL_RUNS times each. Turn time is turn.submitted to turn.completed in the log
// (the runtime's clock). Where the added time goes, on this process's clock (the scripted server stamps each
// request it gets): from the POST of the turn to the query's embedding request, the server's time on it, from
// its answer to the first model request, and from the POST to the first model request; then the resource's
// search called directly (as the session object calls it) by words, by meaning alone and by both, against a
// call that does nothing (the round trip). Prints medians as JSON, with the 1-minute load average.
import { loadavg } from "node:os";
import { median, now, round } from "./lib/client.mjs";
import { idleLog, sleep } from "./lib/miniflare.mjs";
import { report, startWithFakeLlm, turnMs } from "./lib/runs.mjs";
import { corpusVector, topicOf } from "./memory/corpus.mjs";

const RUNS = Number(process.env.BENCH_RECALL_RUNS ?? 15);
const SEED = Number(process.env.BENCH_RECALL_SEED ?? 100);
const MESSAGES = Number(process.env.BENCH_RECALL_MESSAGES ?? 0);
const DIMS = Number(process.env.BENCH_RECALL_DIMS ?? 0);
const MODEL = "openai-compatible:loop-s0-c0-d20";
const RESOURCE = "res_bench_recall";
const BATCH = 100;

const runtime = await startWithFakeLlm();
const { call, mf, llmBase } = runtime;
// performance.now() and the server's process.hrtime() are both the monotonic clock, from different origins.
const originUs = Number(process.hrtime.bigint() / 1000n) - now() * 1000;
const marks = async () => (await fetch(`${llmBase}/marks`)).json();
const ns = await mf.getDurableObjectNamespace("RESOURCES");
const memory = () => ns.get(ns.idFromName(RESOURCE));

const recall = (auto) => ({
  ...(DIMS > 0 ? { embedding_model: `openai-compatible:embed-${DIMS}` } : {}),
  ...(auto ? { auto: { top_k: 3, max_tokens: 500 } } : {}),
});
const agent = (auto) => ({ model: MODEL, memory: { recall: recall(auto) } });

/**
 * One turn in a new session of the resource; its time on the runtime's clock, what recall found, and (on this
 * process's clock) when the query's embedding and the first model request reached the scripted server.
 */
async function turn(auto, input) {
  const { session_id: sid } = await call("POST", "/v1/sessions", { agent: agent(auto), resource_id: RESOURCE });
  await marks();
  const t0 = now();
  await call("POST", `/v1/sessions/${sid}/turns`, { input });
  const log = await idleLog(call, sid);
  const recalled = log.find((e) => e.type === "memory.recalled");
  const seen = await marks();
  const ms = (us) => round((us - originUs) / 1000 - t0);
  const model = seen.find((m) => m.url.endsWith("/chat/completions"));
  const embed = seen.find((m) => m.url === "/v1/embeddings" && m.arrived_us < (model?.arrived_us ?? 0));
  const split = {
    to_model: model ? ms(model.arrived_us) : null,
    ...(embed
      ? {
          to_embedding: ms(embed.arrived_us),
          embedding_in_server: round((embed.sent_us - embed.arrived_us) / 1000),
          embedding_to_model: round((model.arrived_us - embed.sent_us) / 1000),
        }
      : {}),
  };
  return { ms: turnMs(log), hits: recalled?.payload.hits.length ?? null, split };
}

/** Medians of `n` calls of `f`, timed here. */
async function timed(n, f) {
  const ms = [];
  for (let i = 0; i < n; i++) {
    const t = now();
    await f(i);
    ms.push(now() - t);
  }
  return round(median(ms));
}

/** The resource's search called directly, as a session's automatic recall calls it, against a call doing nothing. */
async function direct() {
  const n = RUNS * 2;
  const q = (i) => `which region prefers invoices by mail? ${i}`;
  const vector = (i) => [...corpusVector(-1 - i, topicOf(i * 7919), DIMS)];
  const scope = { except: "ses_none" };
  return {
    round_trip_ms: await timed(n, () => memory().meaningState()),
    by_words_ms: await timed(n, (i) => memory().search(q(i), 3, scope)),
    ...(DIMS > 0
      ? {
          by_meaning_alone_ms: await timed(n, (i) => memory().search("", 3, scope, vector(i))),
          by_both_ms: await timed(n, (i) => memory().search(q(i), 3, scope, vector(i))),
          embedding_from_here_ms: await timed(n, (i) =>
            fetch(`${llmBase}/v1/embeddings`, { method: "POST", body: JSON.stringify({ model: `embed-${DIMS}`, input: [q(i)] }) }).then((r) => r.json()),
          ),
        }
      : {}),
  };
}

/** The median of each field of the splits. */
const medianSplit = (splits) => Object.fromEntries(Object.keys(splits[0]).map((k) => [k, round(median(splits.map((s) => s[k])))]));

/** MESSAGES messages of made-up sessions, written as ended turns write them. */
async function seedMessages() {
  const words = (m) => Array.from({ length: 12 }, (_, k) => `w${((m * 31 + k * 7919) % 5000).toString(36)}`).join(" ");
  for (let from = 0; from < MESSAGES; from += BATCH) {
    const session_id = `ses_seed_${Math.floor(from / 1000)}`;
    if (from % 1000 === 0) await memory().addSession(session_id);
    const entries = [];
    for (let m = from; m < Math.min(MESSAGES, from + BATCH); m++) {
      const base = { session_id, turn_id: `trn_seed_${m >> 1}`, role: m & 1 ? "assistant" : "user", at: 1_770_000_000_000 + m, text: words(m) };
      // A Float32Array crosses Miniflare's proxy as its bytes (an array of numbers, as a turn's end sends, is slow to pass at 100,000).
      entries.push(DIMS > 0 ? { ...base, vector: corpusVector(m, topicOf(m), DIMS) } : base);
    }
    await memory().index(entries);
  }
}

await report(runtime, async () => {
  for (let i = 0; i < SEED; i++) await turn(false, `note ${i}: the customer in region ${i % 7} prefers invoices by ${i % 2 ? "mail" : "email"}`);
  // The last turns' index writes run after their ends: wait until a search finds the newest.
  while ((await call("GET", `/v1/resources/${RESOURCE}/memory/search?q=${encodeURIComponent(`note ${SEED - 1}`)}`)).hits?.length === 0) await sleep(50);
  await seedMessages();
  // The first search by meaning builds the in-memory index: wait for it, as a resource in use has it built.
  await turn(true, "warm-up");
  if (DIMS > 0) while (!(await memory().meaningState())?.ready) await sleep(50);
  const plain = [];
  const recalling = [];
  const hits = [];
  const splits = { plain: [], recalling: [] };
  for (let i = 0; i < RUNS; i++) {
    const q = `which region prefers invoices by mail? ${i}`;
    const p = await turn(false, q);
    plain.push(p.ms);
    splits.plain.push(p.split);
    const r = await turn(true, q);
    recalling.push(r.ms);
    hits.push(r.hits);
    splits.recalling.push(r.split);
  }
  const [p, r] = [median(plain), median(recalling)];
  return {
    seeded_turns: SEED,
    seeded_messages: MESSAGES,
    dims: DIMS,
    index: DIMS > 0 ? await memory().meaningState() : null,
    runs: RUNS,
    plain_turn_ms: round(p),
    auto_recall_turn_ms: round(r),
    added_ms: round(r - p),
    hits: median(hits),
    split_ms: { plain: medianSplit(splits.plain), recalling: medianSplit(splits.recalling) },
    direct: await direct(),
    load: round(loadavg()[0]),
    samples: { plain, recalling },
  };
});
