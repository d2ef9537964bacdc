// A whole runtime process for Node-side tests: the worker bundled as for deploy (bench/lib/miniflare.mjs), run by
// Miniflare on a persisted state directory, so a test can dispose it (the workerd process ends, as in a crash
// or a deploy) and start another on the same state.
import { Miniflare } from "miniflare";
import { afterAll, beforeAll, inject } from "vitest";
import { runtimeOptions } from "../../../bench/lib/miniflare.mjs";
import { startFakeOpenAI } from "../../support/fake-openai";
import { freePort } from "./wrangler-dev";

/** The worker bundled as for deploy, once for the lane (support/worker-bundle.ts). */
export const workerBundle = (): string => inject("workerBundle");

/** The bundle and the fake OpenAI server (at `fakeBase`) started before a file's tests, the server gone after them. */
export function bundledWithFakeModel(): { bundle: string; fakeBase: string } {
  const made = { bundle: workerBundle(), fakeBase: "" };
  let fake: { close(): Promise<void> } | undefined;
  beforeAll(async () => {
    const port = await freePort();
    fake = await startFakeOpenAI(port);
    made.fakeBase = `http://127.0.0.1:${port}/v1`;
  }, 120_000);
  afterAll(async () => {
    await fake?.close();
  });
  return made;
}

/** A runtime process on `state`; disposing it ends the process. */
export function runtimeProcess(bundle: string, state: string, bindings: Record<string, string>): Miniflare {
  return new Miniflare(runtimeOptions(bundle, state, bindings));
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

/** A model of the fake OpenAI server at `fakeBase` that answers `steps` in turn: its model string. */
export async function scriptedModel(fakeBase: string, steps: unknown[]): Promise<string> {
  const id = `script-${crypto.randomUUID()}`;
  await fetch(`${fakeBase}/_scripts/${id}`, { method: "PUT", headers: { "content-type": "application/json" }, body: JSON.stringify({ steps }) });
  return `openai-compatible:${id}`;
}
