// The worker bundled as for deploy (`wrangler deploy --dry-run`), run in Miniflare with a clean persistence
// directory: what the single-process benchmarks (subscriptions, busy) start from.
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Miniflare } from "miniflare";

/** Starts the bundled worker with `bindings`; `call(method, path, body)` answers its JSON; `dispose()` removes everything. */
export async function startBundledWorker(root, key, bindings) {
  const bundle = mkdtempSync(join(tmpdir(), "bench-bundle-"));
  execFileSync("npx", ["wrangler", "deploy", "--dry-run", "--outdir", bundle], {
    cwd: root,
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
    bindings: { API_KEYS: key, LOGS: "off", ...bindings },
  });
  const call = async (method, path, body) => {
    const res = await mf.dispatchFetch(`http://runtime${path}`, {
      method,
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return res.json();
  };
  const dispose = async () => {
    await mf.dispose();
    rmSync(state, { recursive: true, force: true });
    rmSync(bundle, { recursive: true, force: true });
  };
  return { call, dispose };
}
