#!/usr/bin/env node
// `node bench/subscriptions.mjs`: what one outbound subscription delivers and what it costs. The worker,
// bundled as for deploy, runs in Miniflare; a zero-latency scripted model (bench/lib/fake-llm.mjs) streams
// a turn of BENCH_SUB_DELTAS text deltas (about that many events); a local receiver answers every delivery
// 200 at once. Alternating, a session without and a session with a subscription (from sequence 0) run the
// same turn, BENCH_SUB_RUNS times each. Turn time is turn.submitted to turn.completed in the log (the
// runtime's clock); delivery rate is events received over the time from turn.submitted to the arrival of
// the last one. Prints medians as JSON.
import { createServer } from "node:http";
import { median, round } from "./lib/client.mjs";
import { idleLog, sleep } from "./lib/miniflare.mjs";
import { alternate, report, startWithFakeLlm } from "./lib/runs.mjs";

const DELTAS = Number(process.env.BENCH_SUB_DELTAS ?? 1000);
const RUNS = Number(process.env.BENCH_SUB_RUNS ?? 7);

/** Per subscription: events received and when the last request arrived. */
const received = new Map();
const receiver = createServer((req, res) => {
  const chunks = [];
  req.on("data", (c) => chunks.push(c));
  req.on("end", () => {
    const body = JSON.parse(Buffer.concat(chunks).toString("utf8"));
    const r = received.get(body.subscription_id) ?? { events: 0, last: 0, lastSequence: 0 };
    r.events += body.events.length;
    r.last = Date.now();
    r.lastSequence = body.events.at(-1).sequence;
    received.set(body.subscription_id, r);
    res.writeHead(200).end();
  });
});
await new Promise((r) => receiver.listen(0, "127.0.0.1", r));
const receiverUrl = `http://127.0.0.1:${receiver.address().port}/hook`;

const runtime = await startWithFakeLlm({ TOOL_URL_ALLOWLIST: receiverUrl });
const { call } = runtime;

/** One turn of DELTAS text deltas; with `subscribed`, also how its events reached the receiver. */
async function run(subscribed) {
  const { session_id: sid } = await call("POST", "/v1/sessions", { agent: { name: "bench", model: `openai-compatible:loop-s0-c0-d${DELTAS}` } });
  const sub = subscribed ? await call("POST", `/v1/sessions/${sid}/subscriptions`, { url: receiverUrl, after: 0 }) : null;
  await call("POST", `/v1/sessions/${sid}/turns`, { input: "talk" });
  const events = await idleLog(call, sid);
  const submitted = events.find((e) => e.type === "turn.submitted").timestamp;
  const completed = events.find((e) => e.type === "turn.completed").timestamp;
  const out = { turn_ms: completed - submitted, events: events.length };
  if (sub) {
    const last = events.at(-1).sequence;
    while ((received.get(sub.subscription_id)?.lastSequence ?? 0) < last) await sleep(5);
    const r = received.get(sub.subscription_id);
    out.delivered = r.events;
    out.events_per_s = r.events / ((r.last - submitted) / 1000);
    out.lag_after_turn_ms = r.last - completed;
  }
  return out;
}

try {
  await report(runtime, async () => {
    const [plain, subscribed] = await alternate(
      RUNS,
      () => run(false),
      () => run(true),
    );
    return {
      deltas: DELTAS,
      runs: RUNS,
      events_per_turn: median(subscribed.map((r) => r.events)),
      turn_ms_without: round(median(plain.map((r) => r.turn_ms))),
      turn_ms_with: round(median(subscribed.map((r) => r.turn_ms))),
      delivered_events_per_s: round(median(subscribed.map((r) => r.events_per_s))),
      delivery_lag_after_turn_ms: round(median(subscribed.map((r) => r.lag_after_turn_ms))),
      samples: { plain: plain.map((r) => r.turn_ms), subscribed: subscribed.map((r) => [r.turn_ms, round(r.events_per_s), r.lag_after_turn_ms]) },
    };
  });
} finally {
  receiver.close();
}
