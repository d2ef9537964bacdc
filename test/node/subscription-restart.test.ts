// A subscription whose receiver is down while the whole runtime process restarts: after the restart, with
// the receiver back, every event of the log arrives once accepted, in order, and each batch keeps its id
// across the attempts before and after the restart.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Miniflare } from "miniflare";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startFakeOpenAI } from "../support/fake-openai";
import { callRuntime, runtimeProcess, until, workerBundle } from "./support/runtime-process";
import { freePort } from "./support/wrangler-dev";

const KEY = "restart-key";
const bundle = workerBundle();
let base: string;
let fake: { close(): Promise<void> };

beforeAll(async () => {
  const port = await freePort();
  fake = await startFakeOpenAI(port);
  base = `http://127.0.0.1:${port}/v1`;
}, 120_000);
afterAll(async () => {
  await fake?.close();
});

const runtime = (state: string): Miniflare =>
  runtimeProcess(bundle, state, {
    API_KEYS: KEY,
    OPENAI_COMPATIBLE_BASE_URL: base,
    TOOL_URL_ALLOWLIST: `${base}/`,
    LOGS: "off",
    SUBSCRIPTION_RETRY_BASE_MS: "100",
    SUBSCRIPTION_MAX_ATTEMPTS: "100",
  });

describe("a subscription across a runtime restart", () => {
  it("delivers the whole log in order once the receiver is back, resending the same batch id", async () => {
    const state = mkdtempSync(join(tmpdir(), "agent-runtime-state-"));
    const id = `restart-${crypto.randomUUID()}`;
    const receiver = `${base}/_receiver/${id}`;
    const plan = (failFirst: number) => fetch(`${receiver}/plan`, { method: "PUT", body: JSON.stringify({ fail_first: failFirst }) });
    const received = async (): Promise<any[]> => (await fetch(`${receiver}/requests`)).json() as Promise<any[]>;
    await plan(1_000_000); // down
    await fetch(`${base}/_scripts/${id}`, { method: "PUT", body: JSON.stringify({ steps: [{ text: "Done." }] }) });
    let mf = runtime(state);
    try {
      const call = (method: string, path: string, body?: unknown) => callRuntime(mf, KEY, method, path, body);
      const { session_id: sid } = await call("POST", "/v1/sessions", { agent: { name: "watched", model: `openai-compatible:${id}` } });
      await call("POST", `/v1/sessions/${sid}/subscriptions`, { url: receiver, after: 0, secret: "a-test-secret-of-some-length" });
      await call("POST", `/v1/sessions/${sid}/turns`, { input: "hello" });
      await until(async () => (await call("GET", `/v1/sessions/${sid}/events?after=0`)).events.some((e: any) => e.type === "turn.completed"));
      await until(async () => (await received()).length >= 2);

      await mf.dispose(); // the whole process ends while the receiver is down
      const before = (await received()).length;
      await plan(before); // the receiver is back
      mf = runtime(state);
      const log = (await call("GET", `/v1/sessions/${sid}/events?after=0`)).events;
      await until(async () => (await call("GET", `/v1/sessions/${sid}/subscriptions`)).subscriptions[0].cursor === log.at(-1).sequence);

      const requests = await received();
      expect(requests.length).toBeGreaterThan(before);
      expect(requests[before].batch_id).toBe(requests[0].batch_id);
      const seen = new Set<string>();
      const accepted = requests.filter((r) => r.answered === 200 && !seen.has(r.batch_id) && seen.add(r.batch_id)).flatMap((r) => JSON.parse(r.body).events);
      expect(accepted).toEqual(log);
    } finally {
      await mf.dispose();
      rmSync(state, { recursive: true, force: true });
    }
  }, 60_000);
});
