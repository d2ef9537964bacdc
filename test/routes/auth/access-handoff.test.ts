// An agent-bound token after a handoff: the token reaches the sessions its subject opened with its
// agent, whichever agent runs them now, and a token of the agent handed to does not.
import { env, runInDurableObject, SELF } from "cloudflare:test";
import { afterEach, describe, expect, it } from "vitest";
import { upsertSession } from "../../../src/objects/index/index-shard-tables";
import { indexShard } from "../../../src/objects/index/index-shards";
import { api, createAgent, waitForTurnEnd } from "../../support/api";
import { script } from "../../support/fake-model";
import { closeAllSockets, until } from "../../support/ws";

afterEach(closeAllSockets);

async function call(method: string, path: string, credential: string, body?: unknown) {
  const res = await SELF.fetch(`https://runtime.test${path}`, {
    method,
    headers: { authorization: `Bearer ${credential}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as any };
}

async function token(subject: string, agent: string): Promise<string> {
  const res = await api("POST", "/v1/tokens", { subject, agent, ttl_s: 600 });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.token;
}

const listed = async (credential: string, query = ""): Promise<string[]> =>
  (await call("GET", `/v1/sessions${query}`, credential)).body.sessions.map((s: any) => s.session_id);

describe("agent-bound tokens and handoffs", () => {
  it("a token keeps the session its subject opened with its agent after a handoff; the new agent's token does not reach it", async () => {
    const id = `ho-${crypto.randomUUID().slice(0, 8)}`;
    const [front, billing, subject] = [`front-${id}`, `billing-${id}`, `user-${id}`];
    await script(`${id}-b`, [{ text: "Billing here." }, { text: "Still billing." }]);
    await script(`${id}-a`, [{ text: "Passing you on.", tool_calls: [{ name: `transfer_to_${billing}`, arguments: { reason: "invoice" } }] }]);
    await createAgent({ name: billing, model: `openai-compatible:${id}-b` });
    await createAgent({ name: front, model: `openai-compatible:${id}-a`, handoffs: [billing] });
    const frontToken = await token(subject, front);
    const billingToken = await token(subject, billing);

    const created = await call("POST", "/v1/sessions", frontToken, { agent: front });
    expect(created.status).toBe(201);
    const sid = created.body.session_id;
    const first = await call("POST", `/v1/sessions/${sid}/turns`, frontToken, { input: "Is my invoice paid?" });
    expect(first.status).toBe(202);
    const log = await waitForTurnEnd(sid, first.body.turn_id);
    expect(log.find((e) => e.type === "run.status" && e.payload.phase === "handoff")?.payload).toMatchObject({ from: front, to: billing });
    expect((await api("GET", `/v1/sessions/${sid}`)).body.agent.name).toBe(billing);

    // The opening agent's token still reads it, submits to it and lists it.
    const snapshot = await call("GET", `/v1/sessions/${sid}`, frontToken);
    expect(snapshot.status, JSON.stringify(snapshot.body)).toBe(200);
    expect(snapshot.body.agent.name).toBe(billing);
    const events = await call("GET", `/v1/sessions/${sid}/events?limit=1000`, frontToken);
    expect(events.status).toBe(200);
    expect(events.body.events.map((e: any) => e.type)).toContain("turn.completed");
    const second = await call("POST", `/v1/sessions/${sid}/turns`, frontToken, { input: "Thanks" });
    expect(second.status, JSON.stringify(second.body)).toBe(202);
    const end = (await waitForTurnEnd(sid, second.body.turn_id)).at(-1);
    expect(end).toMatchObject({ type: "turn.completed", payload: { output: "Still billing." } });
    // The index row of the second turn's end, as a key sees it (its `agent=` is the agent running it now).
    await until(async () => (await api("GET", `/v1/sessions?owner=${subject}&agent=${billing}`)).body.sessions[0]?.turns === 2, "the index row");
    expect(await listed("test-key", `?owner=${subject}&agent=${front}`)).toEqual([]);
    expect((await api("GET", `/v1/sessions?owner=${subject}`)).body.sessions[0]).not.toHaveProperty("opened_agent");
    expect(await listed(frontToken)).toEqual([sid]);
    expect(await listed(frontToken, `?agent=${front}`)).toEqual([sid]);

    // The token of the agent it was handed to reaches none of it and lists nothing.
    for (const [method, path, body] of [
      ["GET", `/v1/sessions/${sid}`],
      ["GET", `/v1/sessions/${sid}/events`],
      ["POST", `/v1/sessions/${sid}/turns`, { input: "mine now" }],
    ] as const) {
      const res = await call(method, path, billingToken, body);
      expect(res.status, `${method} ${path}`).toBe(403);
      expect(res.body.error.code).toBe("forbidden");
    }
    expect(await listed(billingToken)).toEqual([]);
    expect((await api("GET", `/v1/sessions/${sid}/events?limit=1000`)).body.events.at(-1)).toEqual(end);
  });

  it("an index row written before the opening agent was kept lists for the token of its agent", async () => {
    const id = `old-${crypto.randomUUID().slice(0, 8)}`;
    await createAgent({ name: id, model: "demo:fast" });
    await createAgent({ name: `${id}-other`, model: "demo:fast" });
    const sid = `ses_${crypto.randomUUID().replaceAll("-", "").slice(0, 24)}`;
    const row = { session_id: sid, agent: id, owner: `user-${id}`, metadata: {}, created_at: Date.now(), last_activity: Date.now(), status: "idle" };
    const totals = { turns: 0, input_tokens: 0, output_tokens: 0, cost_usd: 0, unpriced_model_calls: 0, log_events: 1, stored_bytes: 0 };
    await runInDurableObject(indexShard(env, sid), (_o, state) => {
      upsertSession(state.storage.sql, { ...row, ...totals } as never, [], id);
      state.storage.sql.exec("UPDATE session_index SET opened_agent = NULL WHERE session_id = ?", sid);
    });
    expect(await listed(await token(`user-${id}`, id))).toEqual([sid]);
    expect(await listed(await token(`user-${id}`, `${id}-other`))).toEqual([]);
  });
});
