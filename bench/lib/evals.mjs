// The `evals` phase of `npm run bench` (docs/performance.md): an eval run's throughput, cases a minute at
// concurrency 4, each case a fresh session answering one call of the zero-latency scripted model (fake-llm.mjs),
// scored by three built-in scorers. The worker, bundled as for deploy, runs in Miniflare. Wall time is from
// POST /v1/evals to the run's completion as GET /v1/evals/:id first reports it (polled every 20 ms). Then what
// version resolution adds: new sessions opened by an agent's name with one version and nothing else, by the
// name of one whose traffic splits between two labels, and by `name@label`, alternating; each its POST
// /v1/sessions as the client times it, and its one-call turn on the runtime's clock (turn.submitted to
// turn.completed).
import { median, now, round } from "./client.mjs";
import { idleLog } from "./miniflare.mjs";
import { alternate, startWithFakeLlm, turnMs } from "./runs.mjs";

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
    out.versions = await versionResolution(call, cfg.evals.turns);
    const v = out.versions;
    say(
      `   version resolution: open + turn ${v.plain.open_ms} + ${v.plain.turn_ms} ms by a plain name, ${v.split.open_ms} + ${v.split.turn_ms} ms through a traffic split, ${v.label.open_ms} + ${v.label.turn_ms} ms by name@label`,
    );
    return out;
  } finally {
    await runtime.dispose();
  }
}

/** Medians of opening a session (client) and its one-call turn (runtime clock): plain name, traffic split, name@label. */
async function versionResolution(call, turns) {
  await call("PUT", "/v1/agents/bench-plain", { model: MODEL });
  await call("PUT", "/v1/agents/bench-split", { model: MODEL });
  await call("PUT", "/v1/agents/bench-split", { model: MODEL, instructions: "the second version" });
  await call("PUT", "/v1/agents/bench-split/labels/production", { version: 1 });
  await call("PUT", "/v1/agents/bench-split/labels/canary", { version: 2 });
  await call("PUT", "/v1/agents/bench-split/traffic", {
    routes: [
      { label: "production", weight: 90 },
      { label: "canary", weight: 10 },
    ],
  });
  const session = (agent) => async () => {
    const t0 = now();
    const { session_id: sid } = await call("POST", "/v1/sessions", { agent });
    const open = now() - t0;
    await call("POST", `/v1/sessions/${sid}/turns`, { input: "hello" });
    return { open, turn: turnMs(await idleLog(call, sid)) };
  };
  const samples = await alternate(turns, session("bench-plain"), session("bench-split"), session("bench-split@production"));
  const of = (xs) => ({ open_ms: round(median(xs.map((x) => x.open)), 1), turn_ms: round(median(xs.map((x) => x.turn)), 1) });
  const [plain, split, label] = samples.map(of);
  return { turns, plain, split, label };
}

/** The phase's row in the table of `npm run bench`. */
export function evalsRows(e, row, f) {
  row(
    "Eval run: cases a minute",
    f(e.cases_per_minute, 0),
    `${e.cases} cases a run at concurrency ${e.concurrency}, one scripted call each, 3 scorers; median of ${e.runs} runs`,
  );
  const { plain, split, label, turns } = e.versions;
  row(
    "Version resolution: open + one-call turn, by name / through a traffic split / name@label",
    `${plain.open_ms} + ${plain.turn_ms} / ${split.open_ms} + ${split.turn_ms} / ${label.open_ms} + ${label.turn_ms} ms`,
    `POST /v1/sessions (client) + turn.submitted to turn.completed (runtime clock); medians of ${turns} sessions each, alternating`,
  );
}
