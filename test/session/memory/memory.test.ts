// Memory across sessions through the public surface: working memory written by the model's
// update_working_memory in one session and shown to the model in the next session of the same resource (not in
// another resource's), schema violations, recall of an older session's turn, the HTTP routes with their access
// rules, erasure, and eviction of the memory object.
import { env, evictDurableObject, SELF } from "cloudflare:test";
import { describe, expect, it, onTestFinished, vi } from "vitest";
import { RuntimeClient } from "../../../src/client";
import { api, apiAs, createAgent, events, KEY, submitTurn, waitForTurnEnd } from "../../support/api";
import { requests, script, uniqueId } from "../../support/fake-model";

const BASE = "https://runtime.test";
const PREFS_SCHEMA = {
  type: "object",
  properties: { units: { enum: ["metric", "imperial"] }, name: { type: "string" } },
  additionalProperties: false,
};

/** An agent on a scripted model with working memory (schema as given) and the memory tools. */
async function memoryAgent(name: string, scriptId: string, working: Record<string, unknown> = { schema: PREFS_SCHEMA }): Promise<void> {
  await createAgent({
    name,
    model: `openai-compatible:${scriptId}`,
    instructions: "You are helpful.",
    tools: ["update_working_memory", "recall"],
    memory: { working },
  });
}

async function open(agent: string, resource_id: string): Promise<string> {
  const res = await api("POST", "/v1/sessions", { agent, resource_id });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.session_id;
}

async function turn(sid: string, input: string): Promise<any[]> {
  const { turn_id } = await submitTurn(sid, input);
  return waitForTurnEnd(sid, turn_id);
}

/** The system prompt of the `n`th request the fake model received for `scriptId`. */
async function systemPrompt(scriptId: string, n: number): Promise<string> {
  const sent = await requests(scriptId);
  return sent[n]?.messages.find((m: { role: string }) => m.role === "system")?.content ?? "";
}

async function tokenFor(subject: string, agent: string): Promise<string> {
  const res = await api("POST", "/v1/tokens", { subject, agent, ttl_s: 600 });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.token;
}

/** Polls the recall search until it finds something (the index is written after the turn's end). */
async function searchUntil(rid: string, q: string, tries = 50): Promise<any[]> {
  for (let i = 0; i < tries; i++) {
    const res = await api("GET", `/v1/resources/${rid}/memory/search?q=${encodeURIComponent(q)}`);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    if (res.body.hits.length > 0) return res.body.hits;
    await new Promise((r) => setTimeout(r, 50));
  }
  return [];
}

describe("working memory", () => {
  it("a preference written in one session reaches the model in a new session of the same resource, not another resource's", async () => {
    const s = uniqueId("wm");
    const rid = uniqueId("user");
    await script(s, [
      { tool_calls: [{ name: "update_working_memory", arguments: { patch: { units: "metric" } } }] },
      { text: "Noted: metric." },
      { text: "Hello again." },
      { text: "Hello stranger." },
    ]);
    await memoryAgent(`wm-${s.slice(-8)}`, s);
    const agent = `wm-${s.slice(-8)}`;
    const first = await open(agent, rid);
    const log = await turn(first, "I prefer metric units");
    const updated = log.find((e) => e.type === "memory.updated");
    expect(updated).toMatchObject({ payload: { resource_id: rid, agent: null, version: 1, patch: { units: "metric" } } });
    expect(log.find((e) => e.type === "tool.result")?.payload).toMatchObject({ is_error: false, output: { version: 1, document: { units: "metric" } } });

    const second = await open(agent, rid);
    await turn(second, "hi");
    expect(await systemPrompt(s, 2)).toContain('"units": "metric"');

    const other = await open(agent, uniqueId("user"));
    await turn(other, "hi");
    expect(await systemPrompt(s, 3)).not.toContain("metric");
  });

  it("a patch that breaks the schema is a tool error the model sees, and nothing is stored", async () => {
    const s = uniqueId("wm-bad");
    const rid = uniqueId("user");
    await script(s, [{ tool_calls: [{ name: "update_working_memory", arguments: { patch: { units: "furlongs" } } }] }, { text: "Sorry." }]);
    const agent = `wmbad-${s.slice(-8)}`;
    await memoryAgent(agent, s);
    const sid = await open(agent, rid);
    const log = await turn(sid, "use furlongs");
    const result = log.find((e) => e.type === "tool.result");
    expect(result.payload.is_error).toBe(true);
    expect(result.payload.output).toContain("The working memory was not changed");
    expect(result.payload.output).toContain("/units");
    expect(log.some((e) => e.type === "memory.updated")).toBe(false);
    // The model's next call carries the error result.
    const sent = await requests(s);
    expect(JSON.stringify(sent[1].messages)).toContain("The working memory was not changed");
    const stored = await api("GET", `/v1/resources/${rid}/memory`);
    expect(stored.body).toMatchObject({ document: {}, version: 0 });
  });

  it("the agent's template is the document before the first write; agent scope keeps one document per agent", async () => {
    const s = uniqueId("wm-tpl");
    const rid = uniqueId("user");
    await script(s, [{ tool_calls: [{ name: "update_working_memory", arguments: { patch: { name: "Ada" } } }] }, { text: "Hi Ada." }]);
    const agent = `wmtpl-${s.slice(-8)}`;
    await memoryAgent(agent, s, { schema: PREFS_SCHEMA, template: { units: "imperial" }, scope: "agent" });
    await turn(await open(agent, rid), "I am Ada");
    const own = await api("GET", `/v1/resources/${rid}/memory?agent=${agent}`);
    expect(own.body).toMatchObject({ resource_id: rid, agent, document: { units: "imperial", name: "Ada" }, version: 1 });
    // The resource's own document is another one, untouched.
    expect((await api("GET", `/v1/resources/${rid}/memory`)).body).toMatchObject({ agent: null, document: {}, version: 0 });
  });
});

describe("the memory routes", () => {
  it("PUT, PATCH and GET working memory, each write a new version; a document against the agent's schema is 422 and changes nothing", async () => {
    const rid = uniqueId("user");
    const put = await api("PUT", `/v1/resources/${rid}/memory`, { document: { units: "metric", pets: ["cat"] } });
    expect(put.status, JSON.stringify(put.body)).toBe(200);
    expect(put.body).toMatchObject({ resource_id: rid, version: 1, document: { units: "metric", pets: ["cat"] } });
    const patched = await api("PATCH", `/v1/resources/${rid}/memory`, { pets: null, name: "Ada" });
    expect(patched.body).toMatchObject({ version: 2, document: { units: "metric", name: "Ada" } });
    expect(patched.body.document.pets).toBeUndefined();

    const s = uniqueId("schema");
    const agent = `routes-${s.slice(-8)}`;
    await memoryAgent(agent, s);
    const bad = await api("PATCH", `/v1/resources/${rid}/memory?agent=${agent}`, { units: "furlongs" });
    expect(bad.status).toBe(422);
    expect(bad.body.error.details).toEqual([{ path: "units", reason: expect.stringContaining("metric") }]);
    expect((await api("GET", `/v1/resources/${rid}/memory`)).body).toMatchObject({ version: 2, document: { units: "metric", name: "Ada" } });
    const notObject = await api("PUT", `/v1/resources/${rid}/memory`, { document: [1] });
    expect(notObject.status).toBe(422);
  });

  it("a token reaches its own subject's resource only; erasing a resource takes an API key", async () => {
    const agent = `tok-${uniqueId().slice(-8)}`;
    await createAgent({ name: agent, model: "demo:fast" });
    const mine = uniqueId("user");
    const token = await tokenFor(mine, agent);
    expect((await apiAs("PUT", `/v1/resources/${mine}/memory`, token, { document: { a: 1 } })).status).toBe(200);
    expect((await apiAs("GET", `/v1/resources/${mine}/memory`, token)).body).toMatchObject({ document: { a: 1 } });
    const theirs = uniqueId("user");
    await api("PUT", `/v1/resources/${theirs}/memory`, { document: { secret: true } });
    for (const [method, path] of [
      ["GET", `/v1/resources/${theirs}/memory`],
      ["PATCH", `/v1/resources/${theirs}/memory`],
      ["GET", `/v1/resources/${theirs}/memory/search?q=secret`],
    ] as const) {
      const res = await apiAs(method, path, token, method === "PATCH" ? { secret: false } : undefined);
      expect(res.status, `${method} ${path}`).toBe(404);
    }
    expect((await apiAs("DELETE", `/v1/resources/${mine}`, token)).status).toBe(403);
    // A token's sessions are its subject's resource's; it cannot name another.
    const other = await apiAs("POST", "/v1/sessions", token, { agent, resource_id: theirs });
    expect(other.status).toBe(403);
    const own = await apiAs("POST", "/v1/sessions", token, { agent });
    expect((await api("GET", `/v1/sessions/${own.body.session_id}`)).body.resource_id).toBe(mine);
    expect((await api("GET", `/v1/resources/${theirs}/memory`)).body).toMatchObject({ document: { secret: true }, version: 1 });
  });

  it("the read key reads memory but does not write it", async () => {
    const rid = uniqueId("user");
    const read = await apiAs("GET", `/v1/resources/${rid}/memory`, "read-key");
    expect(read.status).toBe(200);
    expect((await apiAs("PUT", `/v1/resources/${rid}/memory`, "read-key", { document: {} })).status).toBe(403);
  });
});

describe("the client", () => {
  it("reads, writes, searches and erases a resource's memory", async () => {
    const client = new RuntimeClient({ url: BASE, key: KEY, fetch: (url, init) => SELF.fetch(url, init) });
    const rid = uniqueId("user");
    expect(await client.putMemory(rid, { a: 1 })).toMatchObject({ resource_id: rid, version: 1, document: { a: 1 } });
    expect(await client.patchMemory(rid, { b: 2 })).toMatchObject({ version: 2, document: { a: 1, b: 2 } });
    expect((await client.getMemory(rid)).document).toEqual({ a: 1, b: 2 });
    expect(await client.searchMemory(rid, "anything", 3)).toEqual({ hits: [] });
    await client.eraseResource(rid, { sessions: true });
    expect(await client.getMemory(rid)).toMatchObject({ version: 0, document: {} });
  });
});

describe("recall", () => {
  it("finds a fact from an older session, by HTTP and by the recall tool, with its session, turn and time", async () => {
    const s = uniqueId("recall");
    const rid = uniqueId("user");
    await script(s, [
      { text: "Got it, your locker code is 4711." },
      { tool_calls: [{ name: "recall", arguments: { query: "locker code" } }] },
      { text: "It is 4711." },
    ]);
    const agent = `recall-${s.slice(-8)}`;
    await memoryAgent(agent, s);
    const older = await open(agent, rid);
    const log = await turn(older, "remember that my locker code is 4711");
    const turnId = log.find((e) => e.type === "turn.completed").turn_id;

    const hits = await searchUntil(rid, "locker");
    expect(hits.map((h) => h.role).sort()).toEqual(["assistant", "user"]);
    expect(hits[0]).toMatchObject({ session_id: older, turn_id: turnId });
    expect(hits[0].snippet).toContain("4711");
    expect(typeof hits[0].at).toBe("number");
    // FTS syntax in a query is only words.
    expect((await api("GET", `/v1/resources/${rid}/memory/search?q=${encodeURIComponent('locker" OR *')}`)).status).toBe(200);

    const newer = await open(agent, rid);
    const recalled = await turn(newer, "what was my locker code?");
    const result = recalled.find((e) => e.type === "tool.result");
    expect(result.payload.is_error).toBe(false);
    expect(result.payload.output[0]).toMatchObject({ session_id: older, turn_id: turnId });
    expect(JSON.stringify(result.payload.output)).toContain("4711");
    // Another resource finds nothing.
    expect((await api("GET", `/v1/resources/${uniqueId("user")}/memory/search?q=locker`)).body.hits).toEqual([]);
  });
});

describe("recall indexing", () => {
  it("an index write that fails is retried from the session's alarm until the turn is found", async () => {
    const rid = uniqueId("user");
    const agent = `retry-${uniqueId().slice(-8)}`;
    await createAgent({ name: agent, model: "demo:fast" });
    await env.RESOURCES.get(env.RESOURCES.idFromName(rid)).failIndexWrites(1);
    // The failure is logged, as in production: captured and asserted here rather than printed.
    const errors = vi.spyOn(console, "error").mockImplementation(() => {});
    onTestFinished(() => errors.mockRestore());
    const sid = await open(agent, rid);
    const log = await turn(sid, "the password hint is pelican");
    expect(log.at(-1).type).toBe("turn.completed");
    // The first write failed; the retry, a second later, lands.
    const hits = await searchUntil(rid, "pelican", 100);
    expect(hits).toContainEqual(expect.objectContaining({ session_id: sid, role: "user", snippet: "the password hint is pelican" }));
    expect(errors.mock.calls.map((c) => String(c[0]))).toContain("recall index write failed; retrying from the alarm");
  });
});

describe("erasure and durability", () => {
  it("erasing a resource with its sessions leaves no memory, index rows or sessions; erasing a session takes its turns out of recall", async () => {
    const s = uniqueId("erase");
    const rid = uniqueId("user");
    await script(s, [{ text: "Noted, zebra." }, { text: "Noted, giraffe." }]);
    const agent = `erase-${s.slice(-8)}`;
    await memoryAgent(agent, s);
    const a = await open(agent, rid);
    await turn(a, "my favourite animal is the zebra");
    const b = await open(agent, rid);
    await turn(b, "my second favourite is the giraffe");
    await api("PUT", `/v1/resources/${rid}/memory`, { document: { animal: "zebra" } });
    expect(await searchUntil(rid, "zebra")).not.toEqual([]);
    expect(await searchUntil(rid, "giraffe")).not.toEqual([]);

    expect((await api("DELETE", `/v1/sessions/${a}`)).status).toBe(204);
    expect((await api("GET", `/v1/resources/${rid}/memory/search?q=zebra`)).body.hits).toEqual([]);

    expect((await api("DELETE", `/v1/resources/${rid}?sessions=true`)).status).toBe(204);
    expect((await api("GET", `/v1/resources/${rid}/memory`)).body).toMatchObject({ document: {}, version: 0 });
    expect((await api("GET", `/v1/resources/${rid}/memory/search?q=giraffe`)).body.hits).toEqual([]);
    expect((await api("GET", `/v1/sessions/${b}`)).status).toBe(404);
    expect((await api("DELETE", `/v1/resources/${rid}`)).status).toBe(204);
  });

  it("evicting the memory object between writes loses nothing", async () => {
    const rid = uniqueId("user");
    await api("PUT", `/v1/resources/${rid}/memory`, { document: { a: 1 } });
    await evictDurableObject(env.RESOURCES.get(env.RESOURCES.idFromName(rid)));
    await api("PATCH", `/v1/resources/${rid}/memory`, { b: 2 });
    await evictDurableObject(env.RESOURCES.get(env.RESOURCES.idFromName(rid)));
    expect((await api("GET", `/v1/resources/${rid}/memory`)).body).toMatchObject({ document: { a: 1, b: 2 }, version: 2 });
  });

  it("a session without a resource has no memory: the tools answer with an error result", async () => {
    const s = uniqueId("nores");
    await script(s, [{ tool_calls: [{ name: "recall", arguments: { query: "anything" } }] }, { text: "ok" }]);
    const agent = `nores-${s.slice(-8)}`;
    await memoryAgent(agent, s);
    const res = await api("POST", "/v1/sessions", { agent });
    const sid = res.body.session_id;
    expect((await api("GET", `/v1/sessions/${sid}`)).body.resource_id).toBeNull();
    const log = await turn(sid, "hi");
    expect(log.find((e) => e.type === "tool.result").payload).toMatchObject({ is_error: true });
    expect((await events(sid)).some((e) => e.type === "memory.updated")).toBe(false);
  });
});
