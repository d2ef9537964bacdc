#!/usr/bin/env node
import { median, round } from "./lib/client.mjs";
// `npm run bench:code-mode`: ten tool calls made by one code-mode script (docs/guides/code-mode.md) against the
// same ten calls made as ten model steps. The worker, bundled as for deploy, runs in Miniflare with the
// zero-latency scripted model (lib/fake-llm.mjs), whose `lookup` webhook answers at once: what is measured is
// the runtime's own work per call and per model step (a real model's latency per step comes on top, and is
// what code mode saves). Alternating BENCH_CODE_MODE_RUNS (default 7) times, each variant a fresh session.
// Turn time is turn.submitted to turn.completed (the runtime's clock); model calls are counted from the log,
// and the bytes of the requests the model was sent by the fake model's server. Prints medians as JSON; never an assertion.
import { stats } from "./lib/fake-llm.mjs";
import { idleLog } from "./lib/miniflare.mjs";
import { alternate, report, startWithFakeLlm, turnMs } from "./lib/runs.mjs";

const RUNS = Number(process.env.BENCH_CODE_MODE_RUNS ?? 7);
const CALLS = 10;
const runtime = await startWithFakeLlm();
const base = runtime.llmBase;
const { call } = runtime;
const lookup = { name: "lookup", url: `${base}/v1/_tools/lookup`, parameters: { type: "object", properties: { query: { type: "string" } } } };
const AGENTS = {
  script: { name: "bench-code-mode", model: `openai-compatible:loop-s1-c1-d2-n${CALLS}-trun_code`, http_tools: [lookup], code_mode: true, max_steps: 4 },
  steps: { name: "bench-steps", model: `openai-compatible:loop-s${CALLS}-c1-d2-tlookup`, http_tools: [lookup], max_steps: CALLS + 2 },
};

/** One turn of `variant`: its time, its model calls and the bytes of their requests. */
async function turn(variant) {
  const before = stats.bytesIn;
  const { session_id } = await call("POST", "/v1/sessions", { agent: AGENTS[variant] });
  await call("POST", `/v1/sessions/${session_id}/turns`, { input: "look ten things up" });
  const log = await idleLog(call, session_id);
  const lookups = log.filter((e) => e.type === "tool.result" && e.payload.name === "lookup");
  const failed = log.find((e) => e.type === "tool.result" && e.payload.is_error);
  if (failed || lookups.length !== CALLS) throw new Error(`expected ${CALLS} lookups: ${JSON.stringify(failed?.payload ?? lookups.length)}`);
  const completed = log.filter((e) => e.type === "model.completed");
  return {
    turn_ms: turnMs(log),
    model_calls: completed.length,
    model_request_bytes: stats.bytesIn - before,
  };
}

await report(runtime, async () => {
  const [script, steps] = await alternate(
    RUNS,
    () => turn("script"),
    () => turn("steps"),
  );
  const med = (xs, key) => round(median(xs.map((x) => x[key])));
  return {
    runs: RUNS,
    calls: CALLS,
    code_mode_turn_ms: med(script, "turn_ms"),
    model_steps_turn_ms: med(steps, "turn_ms"),
    model_calls: { code_mode: med(script, "model_calls"), model_steps: med(steps, "model_calls") },
    model_request_bytes: { code_mode: med(script, "model_request_bytes"), model_steps: med(steps, "model_request_bytes") },
    samples: { code_mode: script, model_steps: steps },
  };
});
