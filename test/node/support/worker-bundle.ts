// The worker bundled as for deploy once for the whole node lane (`wrangler deploy --dry-run`, a few seconds of
// CPU each time): the files that run it in Miniflare read it with `workerBundle()`; it is removed after the lane.
// Vitest runs a global setup once per project (the root and each of vitest.node.config.ts's), all in this one
// process: the first builds the bundle, the others share it, and the last teardown removes it.
import { rmSync } from "node:fs";
import type { TestProject } from "vitest/node";
import { bundleWorker } from "../../../bench/lib/miniflare.mjs";

declare module "vitest" {
  export interface ProvidedContext {
    workerBundle: string;
  }
}

const shared = globalThis as { workerBundle?: { path: string; users: number } };

export default function setup(project: TestProject): () => void {
  shared.workerBundle ??= { path: bundleWorker(), users: 0 };
  const bundle = shared.workerBundle;
  bundle.users++;
  project.provide("workerBundle", bundle.path);
  return () => {
    if (--bundle.users > 0) return;
    rmSync(bundle.path, { recursive: true, force: true });
    shared.workerBundle = undefined;
  };
}
