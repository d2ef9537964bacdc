// No model call paid twice, for a Chat Completions provider that cannot be asked about a started call: the
// runtime process dies (its workerd ends) while a model call streams from the fake server; after the restart,
// the recovery records the lost call's reservation as usage.lost (an estimate) before sending the call again,
// and the turn's cost, its budget and /v1/usage count it.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Miniflare } from "miniflare";
import { describe, expect, it } from "vitest";
import { verifyLog } from "../../src/engine/verify-log";
import type { Step } from "../support/fake-model";
import { bundledWithFakeModel, callRuntime, runtimeProcess, until } from "./support/runtime-process";

const KEY = "lost-key";
// USD per million tokens: a reservation of ~1000 output tokens costs about $2.
const PRICES = { "lost-": { input: 1000, output: 2000, cached_input: 1000 } };
const setup = bundledWithFakeModel();

const runtime = (state: string): Miniflare =>
  runtimeProcess(setup.bundle, state, { API_KEYS: KEY, OPENAI_COMPATIBLE_BASE_URL: setup.fakeBase, MODEL_PRICES: JSON.stringify(PRICES), LOGS: "off" });

async function script(steps: Step[]): Promise<string> {
  const id = `lost-${crypto.randomUUID()}`;
  await fetch(`${setup.fakeBase}/_scripts/${id}`, { method: "PUT", headers: { "content-type": "application/json" }, body: JSON.stringify({ steps }) });
  return id;
}
const sentRequests = async (id: string): Promise<unknown[]> => (await fetch(`${setup.fakeBase}/_scripts/${id}/requests`)).json() as Promise<unknown[]>;

/** Runs a turn whose first model call is cut by the end of the process; answers the log once the turn ended, and the runtime. */
async function cutMidCall(state: string, agent: Record<string, unknown>, steps: Step[]): Promise<{ mf: Miniflare; log: any[]; scriptId: string }> {
  const scriptId = await script(steps);
  let mf = runtime(state);
  const call = (method: string, path: string, body?: unknown) => callRuntime(mf, KEY, method, path, body);
  const { session_id: sid } = await call("POST", "/v1/sessions", { agent: { name: "lost", model: `openai-compatible:${scriptId}`, ...agent } });
  await call("POST", `/v1/sessions/${sid}/turns`, { input: "tell me at length" });
  const log = async () => (await call("GET", `/v1/sessions/${sid}/events?after=0&limit=1000`)).events as any[];
  await until(async () => (await log()).some((e) => e.type === "model.delta"));
  await mf.dispose(); // the whole process ends with the call streaming
  mf = runtime(state);
  await until(async () => (await log()).some((e) => e.type === "turn.completed" || e.type === "turn.failed"));
  return { mf, log: await log(), scriptId };
}

describe("a model call cut by the end of the runtime process", () => {
  it("is recorded as usage.lost before it is sent again, and counted in the turn's cost and in /v1/usage", async () => {
    const state = mkdtempSync(join(tmpdir(), "agent-runtime-state-"));
    const steps: Step[] = [
      { text: "a long answer that streams slowly and never finishes in time", chunk_size: 2, delay_ms: 50 },
      { text: "The answer.", usage: { prompt_tokens: 100, completion_tokens: 10 } },
    ];
    const { mf, log, scriptId } = await cutMidCall(state, { max_tokens: 1000 }, steps);
    try {
      expect(verifyLog(log)).toEqual([]);
      const requested = log.filter((e) => e.type === "model.requested");
      expect(requested).toHaveLength(2);
      const { reservation } = requested[0].payload;
      expect(reservation).toMatchObject({ max_output_tokens: 1000, input_tokens: expect.any(Number) });
      expect(reservation.cost_usd).toBeCloseTo((reservation.input_tokens * 1000 + 1000 * 2000) / 1e6, 9);

      const lost = log.filter((e) => e.type === "usage.lost");
      expect(lost).toHaveLength(1);
      expect(lost[0]).toMatchObject({ step_id: requested[0].step_id, turn_id: requested[0].turn_id });
      expect(lost[0].payload).toEqual({
        model: `openai-compatible:${scriptId}`,
        phase: "executor",
        request_hash: requested[0].payload.request_hash,
        usage: { input_tokens: reservation.input_tokens, output_tokens: 1000, total_tokens: reservation.input_tokens + 1000 },
        cost_usd: reservation.cost_usd,
        estimate: true,
      });
      // Recorded before the call is made again.
      const at = (e: any) => log.indexOf(e);
      expect(at(lost[0])).toBeLessThan(at(log.find((e) => e.type === "run.status" && e.payload.phase === "recovering")));
      expect(at(lost[0])).toBeLessThan(at(requested[1]));
      expect(await sentRequests(scriptId)).toHaveLength(2);

      const second = log.find((e) => e.type === "cost.recorded").payload.cost_usd as number;
      const end = log.find((e) => e.type === "turn.completed");
      expect(end.payload.cost_usd).toBeCloseTo(reservation.cost_usd + second, 9);
      expect(end.payload.usage.output_tokens).toBe(1000 + 10);

      const day = new Date().toISOString().slice(0, 10);
      let row: any;
      await until(async () => {
        row = (await callRuntime(mf, KEY, "GET", `/v1/usage?from=${day}&to=${day}&agent=lost`)).rows[0];
        return row?.turns === 1;
      });
      expect(row).toMatchObject({ model_calls: 2, output_tokens: 1010, unpriced_model_calls: 0 });
      expect(row.cost_usd).toBeCloseTo(reservation.cost_usd + second, 9);
    } finally {
      await mf.dispose();
      rmSync(state, { recursive: true, force: true });
    }
  }, 90_000);

  it("ends the turn at its budget when the lost call's estimate used it up, without sending the call again", async () => {
    const state = mkdtempSync(join(tmpdir(), "agent-runtime-state-"));
    const steps: Step[] = [{ text: "a long answer that streams slowly and never finishes in time", chunk_size: 2, delay_ms: 50 }, { text: "unsent" }];
    const { mf, log, scriptId } = await cutMidCall(state, { max_tokens: 1000, budget: { max_cost_usd: 1 } }, steps);
    try {
      expect(verifyLog(log)).toEqual([]);
      expect(log.filter((e) => e.type === "usage.lost")).toHaveLength(1);
      expect(log.find((e) => e.type === "budget.exceeded").payload).toMatchObject({ reason: "cost", limit: 1 });
      expect(log.at(-1)).toMatchObject({ type: "turn.failed", payload: { error: { code: "budget_exceeded" } } });
      expect(log.filter((e) => e.type === "model.requested")).toHaveLength(1);
      expect(await sentRequests(scriptId)).toHaveLength(1);
    } finally {
      await mf.dispose();
      rmSync(state, { recursive: true, force: true });
    }
  }, 90_000);
});
