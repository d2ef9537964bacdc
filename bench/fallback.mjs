#!/usr/bin/env node
// `node bench/fallback.mjs`: the time a model fallback adds to a turn. The worker, bundled as for deploy, runs
// in Miniflare with the zero-latency scripted model (bench/lib/fake-llm.mjs). Alternating, a session whose
// model answers at once (direct) and one whose model is `down` (503 at once, retry-after-ms 0, so its two
// retries wait nothing) with the same model as its fallback run the same one-call turn, BENCH_FALLBACK_RUNS
// times each. Turn time is turn.submitted to turn.completed in the log (the runtime's clock). Prints medians
// as JSON: the added time is the three failed requests and the switch to the next model.
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { Miniflare } from "miniflare";
import { median, round } from "./lib/client.mjs";
import { startFakeLlm } from "./lib/fake-llm.mjs";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const RUNS = Number(process.env.BENCH_FALLBACK_RUNS ?? 15);
const KEY = "bench-key";
const ANSWER = "openai-compatible:loop-s0-c0-d20";

const bundle = mkdtempSync(join(tmpdir(), "bench-fallback-bundle-"));
execFileSync("npx", ["wrangler", "deploy", "--dry-run", "--outdir", bundle], {
  cwd: ROOT,
  stdio: "ignore",
  env: { ...process.env, WRANGLER_SEND_METRICS: "false" },
});
const llm = await startFakeLlm(0);
const state = mkdtempSync(join(tmpdir(), "bench-fallback-state-"));
const mf = new Miniflare({
  modules: true,
  scriptPath: join(bundle, "worker.js"),
  modulesRoot: bundle,
  modulesRules: [{ type: "Text", include: ["**/*.sql"], fallthrough: true }],
  compatibilityDate: "2026-04-01",
  compatibilityFlags: ["nodejs_compat", "enable_request_signal"],
  durableObjects: {
    SESSIONS: { className: "SessionObject", useSQLite: true },
    REGISTRY: { className: "RegistryObject", useSQLite: true },
    RATE_LIMITER: { className: "RateLimiter", useSQLite: true },
  },
  r2Buckets: ["BLOBS"],
  defaultPersistRoot: state,
  bindings: { API_KEYS: KEY, OPENAI_COMPATIBLE_BASE_URL: `http://127.0.0.1:${llm.port}/v1`, LOGS: "off" },
});

async function call(method, path, body) {
  const res = await mf.dispatchFetch(`http://runtime${path}`, {
    method,
    headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return res.json();
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

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
  await mf.dispose();
  llm.server.close();
  rmSync(state, { recursive: true, force: true });
  rmSync(bundle, { recursive: true, force: true });
}
