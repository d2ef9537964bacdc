// The `evals` phase of `npm run bench` (docs/performance.md): an eval run's throughput, cases a minute at
// concurrency 4, each case a fresh session answering one call of the zero-latency scripted model (fake-llm.mjs),
// scored by three built-in scorers. The worker, bundled as for deploy, runs in Miniflare. Wall time is from
// POST /v1/evals to the run's completion as GET /v1/evals/:id first reports it (polled every 20 ms).
import { median, now, round } from "./client.mjs";
import { startWithFakeLlm } from "./runs.mjs";

const MODEL = "openai-compatible:loop-s0-c0-d8";
const SCORERS = [{ type: "contains", value: "a" }, { type: "max_steps", max: 2 }, { type: "no_tool_called" }];

export async function evals(_stack, cfg, say) {
  const { cases, runs, concurrency } = cfg.evals;
  const runtime = await startWithFakeLlm();
  try {
    const { call } = runtime;
    await call("PUT", "/v1/agents/bench-evals", { model: MODEL });
    await call("PUT", "/v1/datasets/bench-evals", { items: Array.from({ length: cases }, (_, i) => ({ input: `case ${i}`, expected: "a" })) });
    const perMinute = [];
    for (let r = 0; r < runs; r++) {
      const t0 = now();
      const { id } = await call("POST", "/v1/evals", { agent: "bench-evals", dataset: { name: "bench-evals" }, scorers: SCORERS, concurrency });
      for (;;) {
        const run = await call("GET", `/v1/evals/${id}`);
        if (run.status === "completed") break;
        await new Promise((res) => setTimeout(res, 20));
      }
      perMinute.push((cases / (now() - t0)) * 60_000);
    }
    const out = { cases, runs, concurrency, cases_per_minute: round(median(perMinute), 0), samples: perMinute.map((x) => round(x, 0)) };
    say(`   eval run: ${out.cases_per_minute} cases a minute (${cases} cases, concurrency ${concurrency}, median of ${runs} runs)`);
    return out;
  } finally {
    await runtime.dispose();
  }
}

/** The phase's row in the table of `npm run bench`. */
export function evalsRows(e, row, f) {
  row(
    "Eval run: cases a minute",
    f(e.cases_per_minute, 0),
    `${e.cases} cases a run at concurrency ${e.concurrency}, one scripted call each, 3 scorers; median of ${e.runs} runs`,
  );
}
