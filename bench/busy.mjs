#!/usr/bin/env node
// `npm run bench:busy`: the time from an on_busy "interrupt" request to the new turn's first model call. The
// worker, bundled as for deploy, runs in Miniflare on the offline demo:slow model (no network). Per run: a
// session's first turn streams its answer; a second turn is POSTed with on_busy "interrupt"; measured are the
// request's round trip (the client's clock) and, in the log (the runtime's clock), the new turn's
// turn.submitted to its model.requested. BENCH_BUSY_RUNS runs (default 21) after a warm-up; prints medians as
// JSON. Never an assertion; docs/performance.md records the numbers.
import { median, quantile, round } from "./lib/client.mjs";
import { sleep, startBundledRuntime } from "./lib/miniflare.mjs";
import { alternate, report } from "./lib/runs.mjs";

const RUNS = Number(process.env.BENCH_BUSY_RUNS ?? 21);

const runtime = await startBundledRuntime({});
const { call } = runtime;

/** Polls the log until `match` finds an event; returns it. */
async function eventOf(sid, match) {
  for (;;) {
    const { events } = await call("GET", `/v1/sessions/${sid}/events?after=0&limit=1000`);
    const found = events.find(match);
    if (found) return found;
    await sleep(2);
  }
}

async function run() {
  const { session_id: sid } = await call("POST", "/v1/sessions", { agent: { name: "bench-busy", model: "demo:slow" } });
  const { turn_id: first } = await call("POST", `/v1/sessions/${sid}/turns`, { input: "talk for a while" });
  await eventOf(sid, (e) => e.type === "model.delta" && e.turn_id === first);
  const t0 = performance.now();
  const { turn_id } = await call("POST", `/v1/sessions/${sid}/turns`, { input: "now this", on_busy: "interrupt" });
  const request_ms = performance.now() - t0;
  const submitted = await eventOf(sid, (e) => e.type === "turn.submitted" && e.turn_id === turn_id);
  const requested = await eventOf(sid, (e) => e.type === "model.requested" && e.turn_id === turn_id);
  await call("POST", `/v1/sessions/${sid}/interrupt`, { reason: "bench done" });
  return { request_ms, to_model_call_ms: requested.timestamp - submitted.timestamp };
}

await report(runtime, async () => {
  const [runs] = await alternate(RUNS, run);
  const to = runs.map((r) => r.to_model_call_ms);
  return {
    runs: RUNS,
    interrupt_request_ms: round(median(runs.map((r) => r.request_ms))),
    submitted_to_first_model_call_ms: { median: round(median(to)), p90: round(quantile(to, 0.9)) },
  };
});
