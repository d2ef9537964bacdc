#!/usr/bin/env node
// `node bench/fallback.mjs`: the time a model fallback adds to a turn. The worker, bundled as for deploy, runs
// in Miniflare with the zero-latency scripted model (bench/lib/fake-llm.mjs). Alternating, a session whose
// model answers at once (direct) and one whose model is `down` (503 at once, retry-after-ms 0, so its two
// retries wait nothing) with the same model as its fallback run the same one-call turn, BENCH_FALLBACK_RUNS
// times each. Turn time is turn.submitted to turn.completed in the log (the runtime's clock). Prints medians
// as JSON: the added time is the three failed requests and the switch to the next model.
import { median, round } from "./lib/client.mjs";
import { startFakeLlm } from "./lib/fake-llm.mjs";
import { sleep, startBundledRuntime } from "./lib/miniflare.mjs";

const RUNS = Number(process.env.BENCH_FALLBACK_RUNS ?? 15);
const ANSWER = "openai-compatible:loop-s0-c0-d20";

const llm = await startFakeLlm(0);
const { call, dispose } = await startBundledRuntime({ OPENAI_COMPATIBLE_BASE_URL: `http://127.0.0.1:${llm.port}/v1` });

/** One turn's time (ms, the runtime's clock); with `fallback`, its model is down and ANSWER its fallback. */
async function run(fallback) {
  const agent = fallback ? { model: "openai-compatible:down", fallback_models: [ANSWER] } : { model: ANSWER };
  const { session_id: sid } = await call("POST", "/v1/sessions", { agent });
  await call("POST", `/v1/sessions/${sid}/turns`, { input: "talk" });
  for (;;) {
    const { events } = await call("GET", `/v1/sessions/${sid}/events?after=0&limit=1000`);
    const end = events.find((e) => e.type.startsWith("turn.") && !["turn.submitted", "turn.started"].includes(e.type));
    if (end) {
      if (end.type !== "turn.completed") throw new Error(`the turn ended ${end.type}: ${JSON.stringify(end.payload)}`);
      if (fallback !== events.some((e) => e.type === "model.fallback")) throw new Error("model.fallback where none was expected, or none");
      return end.timestamp - events.find((e) => e.type === "turn.submitted").timestamp;
    }
    await sleep(10);
  }
}

try {
  await run(false); // warm-up
  await run(true);
  const direct = [];
  const fellBack = [];
  for (let i = 0; i < RUNS; i++) {
    direct.push(await run(false));
    fellBack.push(await run(true));
  }
  const [d, f] = [median(direct), median(fellBack)];
  console.log(
    JSON.stringify({ runs: RUNS, direct_turn_ms: round(d), fallback_turn_ms: round(f), added_ms: round(f - d), samples: { direct, fellBack } }, null, 2),
  );
} finally {
  await dispose();
  llm.server.close();
}
