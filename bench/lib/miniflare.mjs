// The worker bundled as for deploy (`wrangler deploy --dry-run`) and run in Miniflare, for the benchmarks
// that drive the runtime in-process (subscriptions, busy, files): `call` is a JSON request with the bench key,
// `fetch` any request, `dispose()` removes the bundle and the persistence directory.
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { Miniflare } from "miniflare";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");
export const BENCH_KEY = "bench-key";

export async function startBundledRuntime(bindings) {
  const bundle = mkdtempSync(join(tmpdir(), "bench-bundle-"));
  execFileSync("npx", ["wrangler", "deploy", "--dry-run", "--outdir", bundle], {
    cwd: ROOT,
    stdio: "ignore",
    env: { ...process.env, WRANGLER_SEND_METRICS: "false" },
  });
  const state = mkdtempSync(join(tmpdir(), "bench-state-"));
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
      INDEX: { className: "IndexShardObject", useSQLite: true },
      RESOURCES: { className: "ResourceMemoryObject", useSQLite: true },
      RATE_LIMITER: { className: "RateLimiter", useSQLite: true },
    },
    r2Buckets: ["BLOBS"],
    defaultPersistRoot: state,
    bindings: { API_KEYS: BENCH_KEY, LOGS: "off", ...bindings },
  });
  const fetch = (path, init = {}) =>
    mf.dispatchFetch(`http://runtime${path}`, { ...init, headers: { authorization: `Bearer ${BENCH_KEY}`, ...(init.headers ?? {}) } });
  const call = async (method, path, body) => {
    const res = await fetch(path, { method, headers: { "content-type": "application/json" }, body: body === undefined ? undefined : JSON.stringify(body) });
    return res.json();
  };
  const dispose = async () => {
    await mf.dispose();
    rmSync(state, { recursive: true, force: true });
    rmSync(bundle, { recursive: true, force: true });
  };
  return { mf, fetch, call, dispose };
}

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** The session's whole log once it is idle (its turns ended), polling its thread. */
export async function idleLog(call, sid) {
  while ((await call("GET", `/v1/sessions/${sid}/thread`)).status !== "idle") await sleep(20);
  const events = [];
  for (let after = 0; ; ) {
    const page = await call("GET", `/v1/sessions/${sid}/events?after=${after}&limit=1000`);
    events.push(...page.events);
    if (!page.has_more) return events;
    after = page.next_after;
  }
}
