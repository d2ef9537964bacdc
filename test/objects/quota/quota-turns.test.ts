// Quotas on running turns through HTTP: a USD quota under 50 turns started at once by one end user, a pause
// quota resuming when raised, a rolling window rolling over, and a refuse quota failing closed when its object
// does not answer.
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { api, createAgent, events, submitTurn, waitForEvent, waitForTurnEnd } from "../../support/api";
import { script, uniqueId } from "../../support/fake-model";

/** The fake model's price (MODEL_PRICES: priced-* at 1000 USD per million tokens) for its 10 + 5 tokens. */
const CALL_USD = 0.015;

/** An agent on a priced scripted model answering `steps` texts, and `n` sessions of it owned by `owner`. */
async function sessionsOf(owner: string, n: number, steps: number, extra: Record<string, unknown> = {}): Promise<string[]> {
  const model = uniqueId("priced");
  await script(
    model,
    Array.from({ length: steps }, () => ({ text: "ok", delay_ms: 20 })),
  );
  const name = uniqueId("quota-agent");
  await createAgent({ name, model: `openai-compatible:${model}`, max_tokens: 5, ...extra });
  return Promise.all(
    Array.from({ length: n }, async () => {
      const res = await api("POST", "/v1/sessions", { agent: name, owner });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      return res.body.session_id as string;
    }),
  );
}

const terminal = (log: any[]) => log.find((e) => ["turn.completed", "turn.failed", "turn.cancelled"].includes(e.type));

async function usage(id: string, subject: string): Promise<any> {
  const res = await api("GET", `/v1/quotas/${id}?subject=${encodeURIComponent(subject)}`);
  expect(res.status).toBe(200);
  return res.body.usage[0];
}

describe("quotas on turns", () => {
  it("refuse the calls of 50 turns started at once that would cross a USD quota; settled spend stays under it", async () => {
    const owner = uniqueId("user");
    const limit = 0.5;
    const quota = uniqueId("spend");
    expect(
      (await api("PUT", `/v1/quotas/${quota}`, { scope: { kind: "subject" }, limits: { usd: limit }, window: "day", action: "refuse", warn_at: [0.1] })).status,
    ).toBe(201);
    const sids = await sessionsOf(owner, 50, 50);
    const turns = await Promise.all(sids.map(async (sid) => ({ sid, turn_id: (await submitTurn(sid, "hi")).turn_id })));
    const ends = await Promise.all(turns.map(async ({ sid, turn_id }) => ({ sid, log: await waitForTurnEnd(sid, turn_id, 60_000) })));
    const completed = ends.filter((e) => terminal(e.log).type === "turn.completed");
    const refused = ends.filter((e) => terminal(e.log).type === "turn.failed");
    expect(completed.length + refused.length).toBe(50);
    expect(completed.length).toBeGreaterThan(0);
    expect(refused.length).toBeGreaterThan(0);
    for (const { log } of refused) {
      expect(terminal(log).payload.error).toMatchObject({ code: "quota_exceeded", quota_id: quota, message: expect.stringContaining(`Quota '${quota}'`) });
      // The call that would have crossed the quota was never made.
      expect(log.some((e: any) => e.type === "model.requested")).toBe(false);
    }
    const spent = completed.reduce((sum, e) => sum + terminal(e.log).payload.cost_usd, 0);
    expect(spent).toBeLessThanOrEqual(limit);
    expect(spent).toBeCloseTo(completed.length * CALL_USD, 9);
    // Every reservation settles to the actual spend, which never passed the limit.
    let state = await usage(quota, owner);
    for (let i = 0; i < 100 && Math.abs(state.used.usd - spent) > 1e-9; i++) {
      await new Promise((r) => setTimeout(r, 50));
      state = await usage(quota, owner);
    }
    expect(state.used.usd).toBeCloseTo(spent, 9);
    expect(state.remaining.usd).toBeCloseTo(limit - spent, 9);
    // The soft threshold (10 %) warned once, in the session whose settlement crossed it.
    const warnings = (await Promise.all(sids.map((sid) => events(sid)))).flat().filter((e) => e.type === "quota.warning");
    expect(warnings).toHaveLength(1);
    expect(warnings[0].payload).toMatchObject({ quota_id: quota, subject: owner, threshold: 0.1, dimension: "usd", limit });
    // A scope without id counts every end user: it goes, so other tests' and files' users are not counted by it.
    expect((await api("DELETE", `/v1/quotas/${quota}`)).status).toBe(200);
  }, 120_000);

  it("pause a turn that has no room, and resume it when the quota is raised", async () => {
    const owner = uniqueId("user");
    const quota = uniqueId("tight");
    const spec = { scope: { kind: "subject", id: owner }, limits: { usd: 0.001 }, window: "month", action: "pause" };
    expect((await api("PUT", `/v1/quotas/${quota}`, spec)).status).toBe(201);
    const [sid] = await sessionsOf(owner, 1, 1);
    const { turn_id } = await submitTurn(sid!, "hi");
    const paused = await waitForEvent(sid!, (e) => e.type === "turn.paused");
    expect(paused.payload).toMatchObject({ reason: "quota", quota_id: quota, message: expect.stringContaining("would be exceeded") });
    expect((await api("GET", `/v1/sessions/${sid}`)).body.status).toBe("running");
    expect((await api("PUT", `/v1/quotas/${quota}`, { ...spec, limits: { usd: 1 } })).status).toBe(200);
    const log = await waitForTurnEnd(sid!, turn_id);
    expect(log.filter((e) => e.turn_id === turn_id).map((e) => e.type)).toEqual(
      expect.arrayContaining(["turn.paused", "turn.resumed", "model.requested", "turn.completed"]),
    );
    expect(log.findIndex((e) => e.type === "turn.resumed")).toBeLessThan(log.findIndex((e) => e.type === "model.requested"));
  });

  it("resume a turn paused by a rolling window when the window rolls over", async () => {
    const owner = uniqueId("user");
    const quota = uniqueId("rolling");
    const spec = { scope: { kind: "subject", id: owner }, limits: { turns: 1 }, window: { rolling_seconds: 60 }, action: "pause" };
    expect((await api("PUT", `/v1/quotas/${quota}`, spec)).status).toBe(201);
    const [sid] = await sessionsOf(owner, 1, 2);
    const first = await submitTurn(sid!, "one");
    expect(terminal(await waitForTurnEnd(sid!, first.turn_id)).type).toBe("turn.completed");
    const second = await submitTurn(sid!, "two");
    const paused = await waitForEvent(sid!, (e) => e.type === "turn.paused" && e.turn_id === second.turn_id);
    expect(paused.payload.retry_at).toBeGreaterThan(Date.now());
    expect((await usage(quota, owner)).used.turns).toBe(1);
    // The quota object's clock moves two minutes on (a test hook): the first turn leaves the window.
    await env.QUOTAS.get(env.QUOTAS.idFromName(`subject:${owner}`)).skew(120_000);
    const log = await waitForTurnEnd(sid!, second.turn_id);
    expect(terminal(log.filter((e) => e.turn_id === second.turn_id)).type).toBe("turn.completed");
    expect(log.some((e) => e.type === "turn.resumed" && e.turn_id === second.turn_id)).toBe(true);
  });

  it("count every model call of a turn: a sub-agent's, a guardrail judge's and a fallback's", async () => {
    const owner = uniqueId("user");
    const quota = uniqueId("tree");
    expect(
      (await api("PUT", `/v1/quotas/${quota}`, { scope: { kind: "resource" }, limits: { usd: 10, input_tokens: 10_000 }, window: "day", action: "refuse" }))
        .status,
    ).toBe(201);
    const [judge, failing, model] = [uniqueId("priced-judge"), uniqueId("priced-down"), uniqueId("priced")];
    await script(judge, [{ text: '{"flagged": false}' }]);
    await script(
      failing,
      Array.from({ length: 6 }, () => ({ error: { status: 503, message: "overloaded", retry_after_ms: 1 } })),
    );
    await script(model, [
      { tool_calls: [{ name: "run_subtask", arguments: { title: "count", instructions: "count to two" } }] },
      { text: "one, two" },
      { text: "done" },
    ]);
    const name = uniqueId("tree-agent");
    await createAgent({
      name,
      model: `openai-compatible:${failing}`,
      fallback_models: [`openai-compatible:${model}`],
      tools: ["run_subtask"],
      max_tokens: 5,
      guardrails: { input: [{ type: "model", name: "judge", model: `openai-compatible:${judge}`, instructions: "Flag nothing." }] },
    });
    const sid = (await api("POST", "/v1/sessions", { agent: name, owner })).body.session_id;
    const { turn_id } = await submitTurn(sid, "count");
    const log = await waitForTurnEnd(sid, turn_id);
    const end = terminal(log);
    expect(end.type, JSON.stringify(end.payload)).toBe("turn.completed");
    const phases = log.filter((e) => e.type === "cost.recorded").map((e) => `${e.payload.phase}@${e.depth ?? 0}`);
    expect(phases.sort()).toEqual(["executor@0", "executor@0", "executor@1", "guardrail@0"]);
    let state = await usage(quota, owner);
    for (let i = 0; i < 100 && Math.abs(state.used.usd - end.payload.cost_usd) > 1e-9; i++) {
      await new Promise((r) => setTimeout(r, 50));
      state = await usage(quota, owner);
    }
    // The judge, the parent's two calls (each answered by the fallback) and the sub-agent's: 4 calls of 10 + 5 tokens.
    expect(state.used).toEqual({ usd: expect.closeTo(4 * CALL_USD, 9), input_tokens: 40 });
    expect(end.payload.cost_usd).toBeCloseTo(4 * CALL_USD, 9);
    // Its scope has no id, so it counts every resource: it goes, so that other files' turns are not held to it.
    expect((await api("DELETE", `/v1/quotas/${quota}`)).status).toBe(200);
  });

  it("count an orchestration's child sessions for the parent turn's end user and key", async () => {
    const owner = uniqueId("user");
    const quota = uniqueId("children");
    const spec = { scope: { kind: "subject", id: owner }, limits: { usd: 10 }, window: "day", action: "refuse" };
    expect((await api("PUT", `/v1/quotas/${quota}`, spec)).status).toBe(201);
    const [parentModel, childModel] = [uniqueId("priced-parent"), uniqueId("priced-child")];
    const child = uniqueId("child-agent");
    await script(childModel, [{ text: "child answer" }]);
    await createAgent({ name: child, model: `openai-compatible:${childModel}` });
    const plan = { steps: [{ id: "s1", type: "agent", agent: child, prompt: "Answer." }] };
    await script(parentModel, [{ tool_calls: [{ id: "orc_1", name: "agent_orchestrate", arguments: { plan } }] }, { text: "Done." }]);
    const parent = uniqueId("parent-agent");
    await createAgent({ name: parent, model: `openai-compatible:${parentModel}`, tools: ["agent_orchestrate"] });
    const sid = (await api("POST", "/v1/sessions", { agent: parent, owner })).body.session_id;
    const { turn_id } = await submitTurn(sid, "go");
    const log = await waitForTurnEnd(sid, turn_id);
    expect(terminal(log).type, JSON.stringify(terminal(log).payload)).toBe("turn.completed");
    const submitted = log.find((e) => e.type === "turn.submitted").payload.by;
    expect(submitted).toMatch(/^key_/);

    // The child session is the parent's end user's, and its turn counts as submitted by the parent's key.
    const execId = log.find((e) => e.type === "run.status" && e.payload.phase === "dispatching_step").payload.exec_id;
    expect((await api("GET", `/v1/sessions/${execId}`)).body.owner).toBe(owner);
    expect((await events(execId)).find((e: any) => e.type === "turn.submitted").payload.by).toBe(submitted);
    // The parent's two calls and the child's one.
    let state = await usage(quota, owner);
    for (let i = 0; i < 100 && state.used.usd < 3 * CALL_USD - 1e-9; i++) {
      await new Promise((r) => setTimeout(r, 50));
      state = await usage(quota, owner);
    }
    expect(state.used.usd).toBeCloseTo(3 * CALL_USD, 9);
  });

  it("count running turns: one over concurrent_turns is refused, and a turn's end gives its place back", async () => {
    const owner = uniqueId("user");
    const quota = uniqueId("running");
    const spec = { scope: { kind: "subject", id: owner }, limits: { concurrent_turns: 1 }, window: "day", action: "refuse" };
    expect((await api("PUT", `/v1/quotas/${quota}`, spec)).status).toBe(201);
    const model = uniqueId("priced");
    await script(model, [{ text: "slow answer", delay_ms: 150 }, { text: "later" }]);
    const name = uniqueId("running-agent");
    await createAgent({ name, model: `openai-compatible:${model}` });
    const [a, b] = await Promise.all([0, 1].map(async () => (await api("POST", "/v1/sessions", { agent: name, owner })).body.session_id as string));
    const first = await submitTurn(a!, "one");
    await waitForEvent(a!, (e) => e.type === "model.requested");
    const second = await submitTurn(b!, "two");
    expect(terminal(await waitForTurnEnd(b!, second.turn_id)).payload.error).toMatchObject({ code: "quota_exceeded", quota_id: quota });
    expect(terminal(await waitForTurnEnd(a!, first.turn_id)).type).toBe("turn.completed");
    for (let i = 0; i < 100 && (await usage(quota, owner)).used.concurrent_turns > 0; i++) await new Promise((r) => setTimeout(r, 20));
    const third = await submitTurn(b!, "three");
    expect(terminal((await waitForTurnEnd(b!, third.turn_id)).filter((e) => e.turn_id === third.turn_id)).type).toBe("turn.completed");
  });

  it("fail a turn closed when a refuse quota's object does not answer", async () => {
    const owner = uniqueId("user");
    const quota = uniqueId("closed");
    expect(
      (await api("PUT", `/v1/quotas/${quota}`, { scope: { kind: "subject", id: owner }, limits: { usd: 5 }, window: "day", action: "refuse" })).status,
    ).toBe(201);
    const [sid] = await sessionsOf(owner, 1, 1);
    const object = env.QUOTAS.get(env.QUOTAS.idFromName(`subject:${owner}`));
    await object.fail(true);
    try {
      const { turn_id } = await submitTurn(sid!, "hi");
      const log = await waitForTurnEnd(sid!, turn_id);
      expect(terminal(log).payload.error).toMatchObject({ code: "quota_unavailable", quota_id: quota, message: expect.stringContaining("fails closed") });
      expect(log.some((e) => e.type === "model.requested")).toBe(false);
    } finally {
      await object.fail(false);
    }
  });
});
