// A resource's memory through a browser token's binding (docs/guides/memory.md): the recall search of a token
// bound to a session or an agent finds only the messages of the sessions it reaches (as on the session routes),
// and a token reads and writes the working memory of its own agent only, under that agent's schema.
import { SELF } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { api, apiAs, createAgent, KEY, submitTurn, waitForTurnEnd } from "../../support/api";
import { uniqueId } from "../../support/fake-model";

const UNITS_SCHEMA = { type: "object", properties: { units: { enum: ["metric", "imperial"] } } };

async function token(body: Record<string, unknown>): Promise<string> {
  const res = await api("POST", "/v1/tokens", { ttl_s: 600, ...body });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.token;
}

/** A session its agent-bound token opens (so the token's subject owns it and its resource is the subject), with one ended turn. */
async function sessionWith(agentToken: string, agent: string, input: string): Promise<string> {
  const res = await apiAs("POST", "/v1/sessions", agentToken, { agent });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  const sid = res.body.session_id;
  await waitForTurnEnd(sid, (await submitTurn(sid, input)).turn_id);
  return sid;
}

/** The sessions of the hits of a search by `credential`, once the admin key finds `n` hits (the index is written after a turn's end). */
async function searchedSessions(rid: string, q: string, n: number, credential: string): Promise<string[]> {
  for (let i = 0; i < 100; i++) {
    const all = await api("GET", `/v1/resources/${rid}/memory/search?q=${q}&limit=50`);
    if (all.body.hits.length >= n) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  const res = await apiAs("GET", `/v1/resources/${rid}/memory/search?q=${q}&limit=50`, credential);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return [...new Set(res.body.hits.map((h: { session_id: string }) => h.session_id))].sort() as string[];
}

describe("a token's binding on a resource's memory", () => {
  it("the recall search finds only the messages of the sessions the token reaches: its session, or its agent's sessions", async () => {
    const rid = uniqueId("user");
    const memA = `mema-${uniqueId().slice(-8)}`;
    const memB = `memb-${uniqueId().slice(-8)}`;
    for (const name of [memA, memB]) await createAgent({ name, model: "demo:fast" });
    const tokenA = await token({ subject: rid, agent: memA });
    const tokenB = await token({ subject: rid, agent: memB });
    const a1 = await sessionWith(tokenA, memA, "the zebra codeword is alpha");
    const a2 = await sessionWith(tokenA, memA, "the zebra codeword is beta");
    const b = await sessionWith(tokenB, memB, "the zebra codeword is gamma");
    // A session of the same resource that a key opened for another owner: no token of the subject reaches it.
    const keyed = await api("POST", "/v1/sessions", { agent: memA, resource_id: rid, owner: "someone-else" });
    await waitForTurnEnd(keyed.body.session_id, (await submitTurn(keyed.body.session_id, "the zebra codeword is delta")).turn_id);

    expect(await searchedSessions(rid, "zebra", 4, KEY)).toEqual([a1, a2, b, keyed.body.session_id].sort());
    const readOnlyA1 = await token({ subject: rid, session_id: a1, scopes: ["read"] });
    expect(await searchedSessions(rid, "zebra", 4, readOnlyA1)).toEqual([a1]);
    expect(await searchedSessions(rid, "zebra", 4, tokenA)).toEqual([a1, a2].sort());
    expect(await searchedSessions(rid, "zebra", 4, tokenB)).toEqual([b]);
    // The session routes agree: the read-only token of a1 is refused b's log.
    expect((await apiAs("GET", `/v1/sessions/${b}/events`, readOnlyA1)).status).toBe(403);
  });

  it("a token writes and reads its own agent's working memory only, and its agent's schema applies without ?agent=", async () => {
    const rid = uniqueId("user");
    const memA = `mema-${uniqueId().slice(-8)}`;
    const memB = `memb-${uniqueId().slice(-8)}`;
    await createAgent({ name: memA, model: "demo:fast", memory: { working: { schema: UNITS_SCHEMA } } });
    await createAgent({ name: memB, model: "demo:fast", memory: { working: { scope: "agent", template: { persona: "terse" } } } });
    const tokenA = await token({ subject: rid, agent: memA });

    for (const [method, body] of [
      ["PUT", { document: { persona: "pirate" } }],
      ["PATCH", { persona: "pirate" }],
      ["GET", undefined],
    ] as const) {
      const res = await apiAs(method, `/v1/resources/${rid}/memory?agent=${memB}`, tokenA, body);
      expect(res.status, `${method} ${JSON.stringify(res.body)}`).toBe(403);
      expect(res.body.error).toMatchObject({ code: "forbidden" });
      expect(res.body.error.message).toContain(`bound to agent "${memA}"`);
    }
    expect((await api("GET", `/v1/resources/${rid}/memory?agent=${memB}`)).body).toMatchObject({ document: { persona: "terse" }, version: 0 });

    // Without ?agent=, the token writes as memA: its schema refuses kelvin (naming the field), and nothing is stored.
    const bad = await apiAs("PUT", `/v1/resources/${rid}/memory`, tokenA, { document: { units: "kelvin" } });
    expect(bad.status, JSON.stringify(bad.body)).toBe(422);
    expect(bad.body.error.details).toEqual([{ path: "document.units", reason: expect.stringContaining("metric") }]);
    const badPatch = await apiAs("PATCH", `/v1/resources/${rid}/memory`, tokenA, { units: "kelvin" });
    expect(badPatch.status).toBe(422);
    expect(badPatch.body.error.details).toEqual([{ path: "units", reason: expect.stringContaining("metric") }]);
    expect((await api("GET", `/v1/resources/${rid}/memory`)).body).toMatchObject({ document: {}, version: 0 });
    const good = await apiAs("PATCH", `/v1/resources/${rid}/memory`, tokenA, { units: "imperial" });
    expect(good.status, JSON.stringify(good.body)).toBe(200);
    expect(good.body).toMatchObject({ agent: null, document: { units: "imperial" }, version: 1 });

    // A token bound to a session acts as the agent its session was opened with.
    const { session_id } = (await apiAs("POST", "/v1/sessions", tokenA, { agent: memA })).body;
    const sessionToken = await token({ subject: rid, session_id });
    expect((await apiAs("PATCH", `/v1/resources/${rid}/memory?agent=${memB}`, sessionToken, { persona: "pirate" })).status).toBe(403);
    expect((await apiAs("PATCH", `/v1/resources/${rid}/memory`, sessionToken, { units: "kelvin" })).status).toBe(422);
    expect((await apiAs("GET", `/v1/resources/${rid}/memory?agent=${memA}`, sessionToken)).body).toMatchObject({ document: { units: "imperial" } });
  });

  it("sessions a token opens through chat, Responses and A2A join its subject's resource: erasing the resource erases them", async () => {
    const rid = uniqueId("user");
    const agent = `memsurf-${uniqueId().slice(-8)}`;
    await createAgent({ name: agent, model: "demo:fast" });
    const tok = await token({ subject: rid, agent });
    const chat = await SELF.fetch("https://runtime.test/v1/chat", {
      method: "POST",
      headers: { authorization: `Bearer ${tok}`, "content-type": "application/json" },
      body: JSON.stringify({
        id: uniqueId("chat"),
        agent,
        trigger: "submit-message",
        messages: [{ id: "u1", role: "user", parts: [{ type: "text", text: "hi" }] }],
      }),
    });
    expect(chat.status).toBe(200);
    const chatSid = /"session_id":"(ses_[0-9a-f]+)"/.exec(await chat.text())![1]!;
    const response = await apiAs("POST", "/v1/responses", tok, { model: agent, input: "hello" });
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    const responsesSid = `ses_${response.body.id.slice(5, 29)}`;
    const a2a = await apiAs("POST", `/a2a/${agent}`, tok, {
      jsonrpc: "2.0",
      id: 1,
      method: "SendMessage",
      params: { message: { messageId: "m1", role: "ROLE_USER", parts: [{ text: "hey" }] } },
    });
    expect(a2a.status, JSON.stringify(a2a.body)).toBe(200);
    const a2aSid: string = a2a.body.result.task.contextId;
    for (const sid of [chatSid, responsesSid, a2aSid]) expect((await api("GET", `/v1/sessions/${sid}`)).body).toMatchObject({ owner: rid, resource_id: rid });

    expect((await api("DELETE", `/v1/resources/${rid}?sessions=true`)).status).toBe(204);
    for (const sid of [chatSid, responsesSid, a2aSid]) expect((await api("GET", `/v1/sessions/${sid}`)).status, sid).toBe(404);
  });
});
