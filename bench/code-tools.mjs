#!/usr/bin/env node
import { median, round } from "./lib/client.mjs";
// `npm run bench:code-tools`: what a code tool call (docs/guides/code-tools.md) costs against a webhook tool.
// The worker, bundled as for deploy, runs in Miniflare with the zero-latency scripted model (lib/fake-llm.mjs),
// whose `lookup` webhook answers at once. Alternating BENCH_CODE_RUNS (default 7) times: a turn calling the
// webhook tool once, one calling a code tool whose isolate is warm (same version), and one whose isolate is
// cold (a new version first, so a new isolate). Call time is tool.started to tool.result in the log, turn time
// turn.submitted to turn.completed (the runtime's clock). Prints medians as JSON; never an assertion.
import { idleLog } from "./lib/miniflare.mjs";
import { alternate, report, startWithFakeLlm, turnMs } from "./lib/runs.mjs";

const RUNS = Number(process.env.BENCH_CODE_RUNS ?? 7);
const runtime = await startWithFakeLlm();
const base = runtime.llmBase;
const { call } = runtime;
const PARAMS = { type: "object", properties: { query: { type: "string" } } };
let version = 0;

async function codeTool() {
  version += 1;
  const source = `// version ${version}\nexport default async ({ query }) => ({ result: "found " + query });\n`;
  const res = await call("PUT", "/v1/code-tools/code_lookup", { input_schema: PARAMS, source });
  if (!res.version) throw new Error(`registering the code tool: ${JSON.stringify(res)}`);
}

const agent = (tool) => ({ name: `bench-${tool}`, model: `openai-compatible:loop-s1-c1-d2-t${tool}`, max_steps: 4 });
const AGENTS = {
  lookup: { ...agent("lookup"), http_tools: [{ name: "lookup", url: `${base}/v1/_tools/lookup`, parameters: PARAMS }] },
  code_lookup: { ...agent("code_lookup"), tools: ["code_lookup"] },
};

/** One turn that calls `tool` once: its call's and its turn's ms. */
async function turn(tool) {
  const { session_id } = await call("POST", "/v1/sessions", { agent: AGENTS[tool] });
  await call("POST", `/v1/sessions/${session_id}/turns`, { input: "look it up" });
  const log = await idleLog(call, session_id);
  const at = (type) => log.find((e) => e.type === type)?.timestamp;
  const result = log.find((e) => e.type === "tool.result");
  if (!result || result.payload.is_error) throw new Error(`the tool call failed: ${JSON.stringify(result?.payload)}`);
  return { call_ms: at("tool.result") - at("tool.started"), turn_ms: turnMs(log) };
}

await codeTool();
await report(runtime, async () => {
  const [webhook, warm, cold] = await alternate(
    RUNS,
    () => turn("lookup"),
    () => turn("code_lookup"),
    async () => {
      await codeTool();
      return turn("code_lookup");
    },
  );
  const med = (xs, key) => round(median(xs.map((x) => x[key])));
  return {
    runs: RUNS,
    webhook_call_ms: med(webhook, "call_ms"),
    code_warm_call_ms: med(warm, "call_ms"),
    code_cold_call_ms: med(cold, "call_ms"),
    added_warm_ms: round(med(warm, "call_ms") - med(webhook, "call_ms")),
    added_cold_ms: round(med(cold, "call_ms") - med(webhook, "call_ms")),
    turn_ms: { webhook: med(webhook, "turn_ms"), code_warm: med(warm, "turn_ms"), code_cold: med(cold, "turn_ms") },
    samples: { webhook, warm, cold },
  };
});
