// No model call paid twice, for the OpenAI Responses API (OPENAI_API=responses): calls are made in background
// mode, so when the runtime process dies (its workerd ends) while a call streams from the fake server, the
// restarted runtime reads that response's stream again instead of sending the request again: one request
// billed, no usage.lost, the call's usage counted once. A response that can no longer be read (404) falls back
// to the lost call's estimate and a second request.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Miniflare } from "miniflare";
import { describe, expect, it } from "vitest";
import { verifyLog } from "../../src/engine/verify-log";
import type { ResponsePlan } from "../support/fake-responses";
import { bundledWithFakeModel, callRuntime, runtimeProcess, until } from "./support/runtime-process";

const KEY = "reattach-key";
// USD per million tokens.
const PRICES = { "reattach-": { input: 1000, output: 2000, cached_input: 1000 } };
const TEXT = "a long answer that streams slowly, so the runtime dies before it ends";
const setup = bundledWithFakeModel();

const runtime = (state: string): Miniflare =>
  runtimeProcess(setup.bundle, state, {
    API_KEYS: KEY,
    OPENAI_API_KEY: "sk-fake",
    OPENAI_BASE_URL: setup.fakeBase,
    OPENAI_API: "responses",
    MODEL_PRICES: JSON.stringify(PRICES),
    LOGS: "off",
  });

type Stats = { posts: { background?: boolean }[]; gets: { status: number; starting_after: number }[]; cancels: string[] };
const stats = async (model: string): Promise<Stats> => (await fetch(`${setup.fakeBase}/_responses/${model}/stats`)).json() as Promise<Stats>;

/** A model answering per `plan`, and a runtime on `state` running a turn with it; `log` reads the session's events from the runtime `mf()` answers. */
async function startTurn(state: string, plan: ResponsePlan) {
  const model = `reattach-${crypto.randomUUID()}`;
  await fetch(`${setup.fakeBase}/_responses/${model}`, { method: "PUT", body: JSON.stringify(plan) });
  const made = { mf: runtime(state) };
  const call = (method: string, path: string, body?: unknown) => callRuntime(made.mf, KEY, method, path, body);
  // A quota on tokens: what it counts of the cut call is checked below.
  await call("PUT", "/v1/quotas/tokens", { scope: { kind: "deployment" }, limits: { input_tokens: 1e9, output_tokens: 1e9 }, window: "day", action: "refuse" });
  const { session_id: sid } = await call("POST", "/v1/sessions", {
    // A budget of one model call: the call made again to re-attach is the same call, not a second one.
    agent: { name: "reattach", model: `openai:${model}`, max_tokens: 1000, budget: { max_total_llm_calls: 1 } },
  });
  await call("POST", `/v1/sessions/${sid}/turns`, { input: "tell me at length" });
  const log = async () => (await call("GET", `/v1/sessions/${sid}/events?after=0&limit=1000`)).events as any[];
  return { made, call, sid, log, model };
}

/** The tokens quota's usage once `settled` holds (its settlements are not waited for by the turn). */
async function quotaUsed(mf: Miniflare, settled: (used: any) => boolean): Promise<any> {
  let used: any;
  await until(async () => {
    used = (await callRuntime(mf, KEY, "GET", "/v1/quotas/tokens")).usage[0].used;
    return settled(used);
  }, 10_000).catch(() => {});
  return used;
}

/** Runs a turn whose model call is cut by the end of the process; answers the log once the turn ended, and the runtime. */
async function cutMidCall(state: string, plan: ResponsePlan): Promise<{ mf: Miniflare; log: any[]; model: string; sid: string }> {
  const { made, log, model, sid } = await startTurn(state, plan);
  await until(async () => (await log()).some((e) => e.type === "model.delta"));
  await made.mf.dispose(); // the whole process ends with the call streaming
  made.mf = runtime(state);
  await until(async () => (await log()).some((e) => e.type === "turn.completed" || e.type === "turn.failed"));
  return { mf: made.mf, log: await log(), model, sid };
}

describe("a Responses API call cut by the end of the runtime process", () => {
  it("is re-attached after the restart: one request billed, its whole answer, its usage counted once", async () => {
    const state = mkdtempSync(join(tmpdir(), "agent-runtime-state-"));
    const plan = { text: TEXT, chunk_size: 2, delay_ms: 50, usage: { input_tokens: 100, output_tokens: 30 } };
    const { mf, log, model, sid } = await cutMidCall(state, plan);
    try {
      expect(verifyLog(log)).toEqual([]);
      const { posts, gets } = await stats(model);
      expect(posts).toHaveLength(1);
      expect(posts[0]).toMatchObject({ background: true, stream: true, x_headers: [] });
      expect(gets.length).toBeGreaterThanOrEqual(1);
      expect(gets.every((g) => g.status === 200)).toBe(true);

      const requested = log.filter((e) => e.type === "model.requested");
      expect(requested).toHaveLength(2);
      expect(requested[1].payload.request_hash).toBe(requested[0].payload.request_hash);
      const attached = log.filter((e) => e.type === "model.attached");
      expect(attached[0]).toMatchObject({ step_id: requested[0].step_id, payload: { provider: "openai", response_id: expect.stringMatching(/^resp_/) } });
      const { response_id } = attached[0].payload;
      expect(attached[1]).toMatchObject({ step_id: requested[1].step_id, payload: { response_id, reattached_from: requested[0].step_id } });
      expect(log.filter((e) => e.type === "usage.lost")).toEqual([]);

      const end = log.find((e) => e.type === "turn.completed");
      expect(end.payload.output).toBe(TEXT);
      expect(end.payload.usage).toMatchObject({ input_tokens: 100, output_tokens: 30 });
      const costs = log.filter((e) => e.type === "cost.recorded");
      expect(costs).toHaveLength(1);
      const one = (100 * 1000 + 30 * 2000) / 1e6;
      expect(costs[0].payload.cost_usd).toBeCloseTo(one, 9);
      expect(end.payload.cost_usd).toBeCloseTo(one, 9);

      const day = new Date().toISOString().slice(0, 10);
      let row: any;
      await until(async () => {
        row = (await callRuntime(mf, KEY, "GET", `/v1/usage?from=${day}&to=${day}&agent=reattach`)).rows[0];
        return row?.turns >= 1;
      });
      // One call: /v1/usage and the session's budget count it once, though model.requested was recorded twice.
      expect(row).toMatchObject({ model_calls: 1, input_tokens: 100, output_tokens: 30, unpriced_model_calls: 0 });
      expect(row.cost_usd).toBeCloseTo(one, 9);
      expect((await callRuntime(mf, KEY, "GET", `/v1/sessions/${sid}/thread`)).budget.used).toMatchObject({ llm_calls: 1, input_tokens: 100 });
      // The quota counts the call once too: the cut call's reservation was given back, the call made again settled.
      expect(await quotaUsed(mf, (u) => u.input_tokens === 100)).toEqual({ input_tokens: 100, output_tokens: 30 });
    } finally {
      await mf.dispose();
      rmSync(state, { recursive: true, force: true });
    }
  }, 90_000);

  it("falls back to usage.lost and a second request when the response cannot be read again", async () => {
    const state = mkdtempSync(join(tmpdir(), "agent-runtime-state-"));
    const plan = { text: TEXT, chunk_size: 2, delay_ms: 50, usage: { input_tokens: 100, output_tokens: 30 }, retrievable: false };
    const { mf, log, model, sid } = await cutMidCall(state, plan);
    try {
      expect(verifyLog(log)).toEqual([]);
      const { posts, gets } = await stats(model);
      expect(posts).toHaveLength(2);
      expect(gets.map((g) => g.status)).toEqual([404]);
      const requested = log.filter((e) => e.type === "model.requested");
      const lost = log.filter((e) => e.type === "usage.lost");
      expect(lost).toHaveLength(1);
      expect(lost[0]).toMatchObject({ step_id: requested[0].step_id, payload: { retrieval_status: 404, estimate: true } });
      const { reservation } = requested[0].payload;
      const end = log.find((e) => e.type === "turn.completed");
      expect(end.payload.output).toBe(TEXT);
      expect(end.payload.usage.output_tokens).toBe(1000 + 30);
      expect(end.payload.cost_usd).toBeCloseTo(reservation.cost_usd + (100 * 1000 + 30 * 2000) / 1e6, 9);
      // Two calls were sent: both counted.
      expect((await callRuntime(mf, KEY, "GET", `/v1/sessions/${sid}/thread`)).budget.used.llm_calls).toBe(2);
      const day = new Date().toISOString().slice(0, 10);
      let row: any;
      await until(async () => {
        row = (await callRuntime(mf, KEY, "GET", `/v1/usage?from=${day}&to=${day}&agent=reattach`)).rows[0];
        return row?.turns >= 1;
      });
      expect(row.model_calls).toBe(2);
      // The quota counts the lost call at its reservation, and the call sent again at its usage.
      const both = { input_tokens: reservation.input_tokens + 100, output_tokens: 1000 + 30 };
      expect(await quotaUsed(mf, (u) => u.input_tokens === both.input_tokens)).toEqual(both);
    } finally {
      await mf.dispose();
      rmSync(state, { recursive: true, force: true });
    }
  }, 90_000);

  it("is cancelled at the provider when the turn is interrupted mid-call", async () => {
    const state = mkdtempSync(join(tmpdir(), "agent-runtime-state-"));
    const { made, call, sid, log, model } = await startTurn(state, { text: TEXT, chunk_size: 2, delay_ms: 50 });
    try {
      await until(async () => (await log()).some((e) => e.type === "model.delta"));
      await call("POST", `/v1/sessions/${sid}/interrupt`, {});
      const attached = (await log()).find((e) => e.type === "model.attached");
      await until(async () => (await stats(model)).cancels.length > 0);
      expect((await stats(model)).cancels).toEqual([attached.payload.response_id]);
    } finally {
      await made.mf.dispose();
      rmSync(state, { recursive: true, force: true });
    }
  }, 90_000);
});
