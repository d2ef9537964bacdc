// Continuing a turn a pause quota holds, through HTTP: an admin key lets its waiting call go over the quota once
// (turn.continued names the key), operator keys and the end user's token may not, and a turn that is not paused
// by a quota answers 404 or 409. A continue lets the call past the quota that paused it only: another quota that
// holds it too pauses the turn again. A continued call is made even when the quota's object does not answer.
import { env } from "cloudflare:test";
import { describe, expect, it, vi } from "vitest";
import { api, apiAs, createAgent, events, submitTurn, waitForCount, waitForEvent, waitForTurnEnd } from "../../support/api";
import { script, uniqueId } from "../../support/fake-model";

/** The id the runtime records for an API key: key_ and the first 16 hex digits of its SHA-256. */
async function keyId(key: string): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(key)));
  return `key_${[...digest]
    .map((b) => b.toString(16).padStart(2, "0"))
    .join("")
    .slice(0, 16)}`;
}

/** A pause quota of `usd` a month on the scope's subject; answers its id. */
async function pauseQuota(kind: string, id: string, usd: number): Promise<string> {
  const quota = uniqueId("hold");
  const spec = { scope: { kind, id }, limits: { usd }, window: "month", action: "pause" };
  expect((await api("PUT", `/v1/quotas/${quota}`, spec)).status).toBe(201);
  return quota;
}

/**
 * A session owned by a new end user (with a resource of its own), on a priced model (0.015 USD a call) answering
 * `steps`, under a pause quota of `usd` for that user.
 */
async function pausedSetup(steps: Parameters<typeof script>[1], usd = 0.001) {
  const owner = uniqueId("user");
  const resource = uniqueId("account");
  const quota = await pauseQuota("subject", owner, usd);
  const model = uniqueId("priced");
  await script(model, steps);
  const name = uniqueId("continue-agent");
  await createAgent({ name, model: `openai-compatible:${model}`, max_tokens: 5, tools: ["calculator"] });
  const res = await api("POST", "/v1/sessions", { agent: name, owner, resource_id: resource });
  expect(res.status).toBe(201);
  return { sid: res.body.session_id as string, owner, resource, quota };
}

const continuePath = (sid: string, turnId: string) => `/v1/sessions/${sid}/turns/${turnId}/continue`;

describe("continuing a turn a pause quota holds", () => {
  it("lets an admin key's continue make the waiting call over the quota once; the next call waits again", async () => {
    const { sid, owner, quota } = await pausedSetup([{ tool_calls: [{ name: "calculator", arguments: { expression: "1+1" } }] }, { text: "two", delay_ms: 5 }]);
    const { turn_id } = await submitTurn(sid, "add");
    await waitForEvent(sid, (e) => e.type === "turn.paused" && e.turn_id === turn_id);

    // Who may: an operator key may not raise the quota, so it may not go over it; nor may the end user's token.
    const operator = await apiAs("POST", continuePath(sid, turn_id), "operator-key", {});
    expect(operator.status).toBe(403);
    expect(operator.body.error.message).toBe("an operator key may not do quotas.write");
    const token = (await api("POST", "/v1/tokens", { subject: owner, session_id: sid, ttl_s: 600 })).body.token as string;
    expect((await apiAs("POST", continuePath(sid, turn_id), token, {})).status).toBe(403);
    expect((await events(sid)).some((e) => e.type === "turn.continued")).toBe(false);

    const res = await api("POST", continuePath(sid, turn_id), { note: "support ticket 42" });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ turn_id, quota_id: quota });
    // The first call went over; the second (after the tool's result) has no room either: the turn waits again.
    await waitForEvent(sid, (e) => e.type === "tool.result" && e.turn_id === turn_id);
    const log = await events(sid);
    const by = await keyId("test-key");
    const continued = log.find((e) => e.type === "turn.continued");
    expect(continued).toMatchObject({ turn_id, payload: { reason: "quota", quota_id: quota, by, note: "support ticket 42" } });
    const resumed = log.find((e) => e.type === "turn.resumed");
    expect(resumed.payload).toEqual({ reason: "quota", quota_id: quota, continued_by: by });
    expect(log.indexOf(continued)).toBeLessThan(log.indexOf(resumed));
    expect(log.indexOf(resumed)).toBeLessThan(log.findIndex((e) => e.type === "model.requested"));
    const pauses = await new Promise<any[]>((resolve, reject) => {
      const deadline = Date.now() + 10_000;
      const look = async () => {
        const found = (await events(sid)).filter((e) => e.type === "turn.paused" && e.turn_id === turn_id);
        if (found.length === 2) return resolve(found);
        if (Date.now() > deadline) return reject(new Error("the second call did not wait"));
        setTimeout(look, 50);
      };
      void look();
    });
    expect(pauses).toHaveLength(2);
    // The quota counts what the call that went over spent: more than its limit.
    const usage = (await api("GET", `/v1/quotas/${quota}?subject=${owner}`)).body.usage[0];
    expect(usage.used.usd).toBeGreaterThan(0.001);

    // Continued again: the second call goes over too, and the turn completes.
    expect((await api("POST", continuePath(sid, turn_id), {})).status).toBe(200);
    const end = await waitForTurnEnd(sid, turn_id);
    expect(end.find((e) => e.type === "turn.completed" && e.turn_id === turn_id)?.payload.output).toBe("two");
    expect(end.filter((e) => e.type === "turn.continued")).toHaveLength(2);
    expect((await api("DELETE", `/v1/quotas/${quota}`)).status).toBe(200);
  });

  it("continues past the quota that paused the turn only: another level's quota that holds the call pauses it again", async () => {
    const { sid, resource, quota: userQuota } = await pausedSetup([{ text: "both" }]);
    const resourceQuota = await pauseQuota("resource", resource, 0.001);
    const { turn_id } = await submitTurn(sid, "hi");
    const first = await waitForEvent(sid, (e) => e.type === "turn.paused" && e.turn_id === turn_id);
    // Either quota may be the one asked first; the other holds the call after the first is continued.
    const [held, other] = first.payload.quota_id === userQuota ? [userQuota, resourceQuota] : [resourceQuota, userQuota];
    expect([userQuota, resourceQuota]).toContain(first.payload.quota_id);

    const once = await api("POST", continuePath(sid, turn_id), { note: "the user's spend" });
    expect(once.status).toBe(200);
    expect(once.body).toEqual({ turn_id, quota_id: held });
    // Past the first quota, the second still has no room: the turn pauses again, naming it, and no call is made.
    const log = await waitForCount(sid, "turn.paused", 2);
    const pauses = log.filter((e) => e.type === "turn.paused");
    expect(pauses.map((e) => e.payload.quota_id)).toEqual([held, other]);
    expect(pauses[1].payload.message).toContain(`Quota '${other}' would be exceeded`);
    expect(log.some((e) => e.type === "model.requested" || e.type === "turn.resumed")).toBe(false);
    const continued = log.find((e) => e.type === "turn.continued");
    expect(continued.payload).toMatchObject({ quota_id: held, note: "the user's spend" });
    expect(log.indexOf(continued)).toBeLessThan(log.indexOf(pauses[1]));

    // A second continue, for the second quota: the call goes over both and the turn completes.
    const twice = await api("POST", continuePath(sid, turn_id), {});
    expect(twice.status).toBe(200);
    expect(twice.body).toEqual({ turn_id, quota_id: other });
    const end = await waitForTurnEnd(sid, turn_id);
    expect(end.find((e) => e.type === "turn.completed" && e.turn_id === turn_id)?.payload.output).toBe("both");
    expect(end.filter((e) => e.type === "turn.continued").map((e) => e.payload.quota_id)).toEqual([held, other]);
    const resumed = end.filter((e) => e.type === "turn.resumed");
    expect(resumed).toHaveLength(1);
    expect(resumed[0].payload).toEqual({ reason: "quota", quota_id: other, continued_by: await keyId("test-key") });
    expect(end.indexOf(resumed[0])).toBeLessThan(end.findIndex((e) => e.type === "model.requested"));
    // Both quotas count the call that went over them.
    for (const q of [userQuota, resourceQuota]) {
      const usage = (await api("GET", `/v1/quotas/${q}`)).body.usage[0];
      expect(usage.used.usd).toBeGreaterThan(0.001);
      expect((await api("DELETE", `/v1/quotas/${q}`)).status).toBe(200);
    }
  });

  it("answers 404 for an unknown turn and 409 for a turn no quota holds, recording nothing", async () => {
    const { sid, quota } = await pausedSetup([{ text: "ok" }], 1);
    const { turn_id } = await submitTurn(sid, "hi");
    await waitForTurnEnd(sid, turn_id);
    const unknown = await api("POST", continuePath(sid, "trn_000000000000000000000000"), {});
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.code).toBe("not_found");
    const ended = await api("POST", continuePath(sid, turn_id), {});
    expect(ended.status).toBe(409);
    expect(ended.body.error.message).toContain("is not paused by a quota");
    const bad = await api("POST", continuePath(sid, turn_id), { note: 7 });
    expect(bad.status).toBe(422);
    expect((await events(sid)).some((e) => e.type === "turn.continued")).toBe(false);
    expect((await api("DELETE", `/v1/quotas/${quota}`)).status).toBe(200);
  });

  it("makes a continued call when the pause quota's object does not answer; a continue meanwhile is 409", async () => {
    const { sid, owner, quota } = await pausedSetup([{ text: "ok" }], 1);
    const object = env.QUOTAS.get(env.QUOTAS.idFromName(`subject:${owner}`));
    await object.fail(true);
    const logged = vi.spyOn(console, "error").mockImplementation(() => {});
    try {
      const { turn_id } = await submitTurn(sid, "hi");
      const paused = await waitForEvent(sid, (e) => e.type === "turn.paused" && e.turn_id === turn_id);
      expect(paused.payload.message).toContain("could not be checked");
      // Two continues at once: the second finds the first recorded and not yet taken up.
      const [first, second] = await Promise.all([api("POST", continuePath(sid, turn_id), {}), api("POST", continuePath(sid, turn_id), {})]);
      expect([first.status, second.status].sort()).toEqual([200, 409]);
      expect((first.status === 409 ? first : second).body.error.message).toContain("was already continued");
      const log = await waitForTurnEnd(sid, turn_id);
      expect(log.find((e) => e.turn_id === turn_id && e.type === "turn.completed")?.payload.output).toBe("ok");
      // The reservation and the settlement the object did not take are reported, not thrown.
      expect(logged).toHaveBeenCalledWith("a quota object did not answer", expect.any(Error));
    } finally {
      await object.fail(false);
      logged.mockRestore();
    }
    expect((await api("DELETE", `/v1/quotas/${quota}`)).status).toBe(200);
  });
});
