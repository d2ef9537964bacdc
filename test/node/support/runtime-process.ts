// A whole runtime process for Node-side tests: the worker bundled as for deploy (wrangler --dry-run), run by
// Miniflare on a persisted state directory, so a test can dispose it (the workerd process ends, as in a crash
// or a deploy) and start another on the same state.
import { execFile } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { Miniflare } from "miniflare";

const ROOT = join(import.meta.dirname, "..", "..", "..");

/** Bundles the worker into a fresh directory; returns it. */
export async function bundleWorker(): Promise<string> {
  const bundle = mkdtempSync(join(tmpdir(), "agent-runtime-bundle-"));
  await promisify(execFile)("npx", ["wrangler", "deploy", "--dry-run", "--outdir", bundle], {
    cwd: ROOT,
    env: { ...process.env, WRANGLER_SEND_METRICS: "false" },
  });
  return bundle;
}

/** A runtime process on `state`; disposing it ends the process. */
export function runtimeProcess(bundle: string, state: string, bindings: Record<string, string>): Miniflare {
  return new Miniflare({
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
      RATE_LIMITER: { className: "RateLimiter", useSQLite: true },
      RESOURCES: { className: "ResourceMemoryObject", useSQLite: true },
    },
    r2Buckets: ["BLOBS"],
    defaultPersistRoot: state,
    bindings,
  });
}

/** One API call with bearer `key`; the parsed JSON answer. */
export async function callRuntime(mf: Miniflare, key: string, method: string, path: string, body?: unknown): Promise<any> {
  const res = await mf.dispatchFetch(`http://runtime${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return res.json();
}

/** Polls `probe` until it holds. */
export async function until(probe: () => Promise<boolean>, ms = 20_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await probe())) {
    if (Date.now() > deadline) throw new Error("timed out");
    await new Promise((r) => setTimeout(r, 50));
  }
}
