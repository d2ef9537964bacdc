// A turn's start under turn and spend quotas, through HTTP: it is counted with its first model call's
// reservation (one request to each quota object), with the same outcomes as counting it first: a start over
// `turns` is refused before any call and not counted; a first call over `usd` is refused with the start
// counted; a turn that makes no model call is still counted.
import { describe, expect, it } from "vitest";
import { api, createAgent, submitTurn, waitForTurnEnd } from "../../support/api";
import { script, uniqueId } from "../../support/fake-model";

/** The fake model's price (priced-* at 1000 USD per million tokens) for its 10 + 5 tokens. */
const CALL_USD = 0.015;

/** A session of a new end user on a priced model answering `steps` "ok"s, under one refuse quota with `limits` on that user. */
async function counted(limits: Record<string, number>, steps: number, extra: Record<string, unknown> = {}) {
  const owner = uniqueId("user");
  const quota = uniqueId("start");
  const spec = { scope: { kind: "subject", id: owner }, limits, window: "day", action: "refuse" };
  expect((await api("PUT", `/v1/quotas/${quota}`, spec)).status).toBe(201);
  const model = uniqueId("priced");
  await script(
    model,
    Array.from({ length: steps }, () => ({ text: "ok" })),
  );
  const name = uniqueId("admission-agent");
  await createAgent({ name, model: `openai-compatible:${model}`, max_tokens: 5, ...extra });
  const res = await api("POST", "/v1/sessions", { agent: name, owner });
  expect(res.status).toBe(201);
  const used = async (want: (u: any) => boolean) => {
    let usage: any;
    for (let i = 0; i < 100; i++) {
      usage = (await api("GET", `/v1/quotas/${quota}`)).body.usage[0];
      if (want(usage)) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    return usage;
  };
  return { sid: res.body.session_id as string, quota, used };
}

const ended = (log: any[], turnId: string) => log.find((e) => e.turn_id === turnId && ["turn.completed", "turn.failed"].includes(e.type));

describe("a turn's start under turn and spend quotas", () => {
  it("is counted once with its first call's reservation; a start over turns is refused before any call and not counted", async () => {
    const { sid, quota, used } = await counted({ turns: 1, usd: 1 }, 2);
    const first = await submitTurn(sid, "one");
    expect(ended(await waitForTurnEnd(sid, first.turn_id), first.turn_id).type).toBe("turn.completed");
    const usage = await used((u) => Math.abs(u.used.usd - CALL_USD) < 1e-9);
    expect(usage.used).toEqual({ turns: 1, usd: CALL_USD });

    const second = await submitTurn(sid, "two");
    const log = await waitForTurnEnd(sid, second.turn_id);
    expect(ended(log, second.turn_id).payload.error).toMatchObject({ code: "quota_exceeded", quota_id: quota, message: expect.stringContaining("turns") });
    expect(log.filter((e) => e.turn_id === second.turn_id && e.type === "model.requested")).toEqual([]);
    // Refused at its start: neither the turn nor a reservation was kept.
    expect((await used(() => true)).used).toEqual({ turns: 1, usd: CALL_USD });
    expect((await api("DELETE", `/v1/quotas/${quota}`)).status).toBe(200);
  });

  it("keeps the start counted when only the first call is refused", async () => {
    const { sid, quota, used } = await counted({ turns: 5, usd: 0.001 }, 1);
    const { turn_id } = await submitTurn(sid, "hi");
    const log = await waitForTurnEnd(sid, turn_id);
    expect(ended(log, turn_id).payload.error).toMatchObject({ code: "quota_exceeded", quota_id: quota, message: expect.stringContaining("USD") });
    expect(log.some((e) => e.type === "model.requested")).toBe(false);
    expect((await used(() => true)).used).toEqual({ turns: 1, usd: 0 });
    expect((await api("DELETE", `/v1/quotas/${quota}`)).status).toBe(200);
  });

  it("counts a turn that ends before any model call (an input guardrail blocks it)", async () => {
    const guardrails = { input: [{ type: "regex", name: "no-secrets", pattern: "secret", action: "block" }] };
    const { sid, quota, used } = await counted({ turns: 1, usd: 1 }, 1, { guardrails });
    const blocked = await submitTurn(sid, "tell me the secret");
    const log = await waitForTurnEnd(sid, blocked.turn_id);
    expect(ended(log, blocked.turn_id).payload.error.code).toMatch(/guardrail/);
    expect(log.some((e) => e.type === "model.requested")).toBe(false);
    expect((await used((u) => u.used.turns === 1)).used).toEqual({ turns: 1, usd: 0 });
    // The day's one turn is taken: the next is refused.
    const next = await submitTurn(sid, "hello");
    expect(ended(await waitForTurnEnd(sid, next.turn_id), next.turn_id).payload.error.code).toBe("quota_exceeded");
    expect((await api("DELETE", `/v1/quotas/${quota}`)).status).toBe(200);
  });
});
