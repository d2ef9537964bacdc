#!/usr/bin/env node
// `node bench/fallback.mjs`: the time a model fallback adds to a turn. The worker, bundled as for deploy, runs
// in Miniflare with the zero-latency scripted model (bench/lib/fake-llm.mjs). Alternating, a session whose
// model answers at once (direct) and one whose model is `down` (503 at once, retry-after-ms 0, so its two
// retries wait nothing) with the same model as its fallback run the same one-call turn, BENCH_FALLBACK_RUNS
// times each. Turn time is turn.submitted to turn.completed in the log (the runtime's clock). Prints medians
// as JSON: the added time is the three failed requests and the switch to the next model.
import { median, round } from "./lib/client.mjs";
import { idleLog } from "./lib/miniflare.mjs";
import { alternate, report, startWithFakeLlm, turnMs } from "./lib/runs.mjs";

const RUNS = Number(process.env.BENCH_FALLBACK_RUNS ?? 15);
const ANSWER = "openai-compatible:loop-s0-c0-d20";

const runtime = await startWithFakeLlm();
const { call } = runtime;

/** One turn's time (ms, the runtime's clock); with `fallback`, its model is down and ANSWER its fallback. */
async function run(fallback) {
  const agent = fallback ? { model: "openai-compatible:down", fallback_models: [ANSWER] } : { model: ANSWER };
  const { session_id: sid } = await call("POST", "/v1/sessions", { agent });
  await call("POST", `/v1/sessions/${sid}/turns`, { input: "talk" });
  const events = await idleLog(call, sid);
  if (fallback !== events.some((e) => e.type === "model.fallback")) throw new Error("model.fallback where none was expected, or none");
  return turnMs(events);
}

await report(runtime, async () => {
  const [direct, fellBack] = await alternate(
    RUNS,
    () => run(false),
    () => run(true),
  );
  const [d, f] = [median(direct), median(fellBack)];
  return { runs: RUNS, direct_turn_ms: round(d), fallback_turn_ms: round(f), added_ms: round(f - d), samples: { direct, fellBack } };
});
