// The worker bundled as for deploy (`wrangler deploy --dry-run`) and run in Miniflare, for the benchmarks
// that drive the runtime in-process (subscriptions, busy, files, fallback) and the Node-side tests that restart
// a whole runtime process (test/node/support/runtime-process.ts): `call` is a JSON request with the bench key,
// `fetch` any request, `dispose()` removes the bundle and the persistence directory.
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { Miniflare } from "miniflare";
import { unstable_getMiniflareWorkerOptions } from "wrangler";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");
export const BENCH_KEY = "bench-key";

/** Bundles the worker as for deploy (`wrangler deploy --dry-run`) into a fresh directory; returns it. */
export function bundleWorker() {
  const bundle = mkdtempSync(join(tmpdir(), "agent-runtime-bundle-"));
  execFileSync("npx", ["wrangler", "deploy", "--dry-run", "--outdir", bundle], {
    cwd: ROOT,
    stdio: "ignore",
    env: { ...process.env, WRANGLER_SEND_METRICS: "false" },
  });
  return bundle;
}

/**
 * Miniflare options running `bundle` on the persisted state directory `state`: bindings, Durable Objects,
 * buckets and compatibility come from wrangler.toml (so a new object class needs no change here), without
 * the inspector's static assets.
 */
export function runtimeOptions(bundle, state, bindings) {
  const { workerOptions } = unstable_getMiniflareWorkerOptions(join(ROOT, "wrangler.toml"));
  const { assets: _assets, ...options } = workerOptions;
  return {
    ...options,
    modules: true,
    scriptPath: join(bundle, "worker.js"),
    modulesRoot: bundle,
    defaultPersistRoot: state,
    bindings: { ...options.bindings, ...bindings },
  };
}

export async function startBundledRuntime(bindings) {
  const bundle = bundleWorker();
  const state = mkdtempSync(join(tmpdir(), "bench-state-"));
  const mf = new Miniflare(runtimeOptions(bundle, state, { API_KEYS: BENCH_KEY, LOGS: "off", ...bindings }));
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
