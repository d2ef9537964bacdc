// The worker bundled as for deploy once for the whole node lane (`wrangler deploy --dry-run`, a few seconds of
// CPU each time): the files that run it in Miniflare read it with `workerBundle()`; it is removed after the lane.
import { rmSync } from "node:fs";
import type { TestProject } from "vitest/node";
import { bundleWorker } from "../../../bench/lib/miniflare.mjs";

declare module "vitest" {
  export interface ProvidedContext {
    workerBundle: string;
  }
}

export default function setup(project: TestProject): () => void {
  const bundle = bundleWorker();
  project.provide("workerBundle", bundle);
  return () => rmSync(bundle, { recursive: true, force: true });
}
