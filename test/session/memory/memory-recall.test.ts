// Automatic recall and the sessions a resource's memory reaches through the public surface: a new
// session of a resource gets an older session's fact in its first model call (memory.recalled), another
// resource's does not; a replay reuses the recorded hits without searching; forks and agent_orchestrate
// children belong to their parent's resource (and are erased with it), a replay to none.
import { describe, expect, it } from "vitest";
import { api, createAgent, events, submitTurn, waitForTurnEnd } from "../../support/api";
import { requests, script, uniqueId } from "../../support/fake-model";

/** An agent on a scripted model that recalls automatically (and may call the memory tools). */
async function recallAgent(scriptId: string, auto: Record<string, unknown> = { top_k: 3 }): Promise<string> {
  const name = `auto-${scriptId.slice(-8)}`;
  await createAgent({ name, model: `openai-compatible:${scriptId}`, instructions: "You are helpful.", tools: ["recall"], memory: { recall: { auto } } });
  return name;
}

async function open(agent: string | Record<string, unknown>, resource_id?: string): Promise<string> {
  const res = await api("POST", "/v1/sessions", { agent, ...(resource_id ? { resource_id } : {}) });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.session_id;
}

async function turn(sid: string, input: string): Promise<{ turn_id: string; log: any[] }> {
  const { turn_id } = await submitTurn(sid, input);
  return { turn_id, log: await waitForTurnEnd(sid, turn_id) };
}

const systemOf = (request: any): string => request?.messages.find((m: { role: string }) => m.role === "system")?.content ?? "";

/** Polls the recall search until it finds `q` (the index is written after the turn's end). */
async function indexed(rid: string, q: string): Promise<void> {
  for (let i = 0; i < 100; i++) {
    if ((await api("GET", `/v1/resources/${rid}/memory/search?q=${encodeURIComponent(q)}`)).body.hits.length > 0) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`"${q}" was never indexed for ${rid}`);
}

describe("automatic recall", () => {
  it("adds an older session's fact to the first model call of a new session of the same resource, not of another resource's", async () => {
    const s = uniqueId("auto");
    const rid = uniqueId("user");
    await script(s, [{ text: "Noted: your locker code is 4711." }, { text: "It is 4711." }, { text: "I do not know." }, { text: "Still 4711." }]);
    const agent = await recallAgent(s);
    const older = await open(agent, rid);
    const first = await turn(older, "remember that my locker code is 4711");
    // Nothing earlier to find: the search is recorded with no hits, and the prompt has no recall section.
    expect(first.log.find((e) => e.type === "memory.recalled")?.payload).toMatchObject({ resource_id: rid, hits: [], tokens: 0 });
    expect(systemOf((await requests(s))[0])).not.toContain("Earlier conversations");
    await indexed(rid, "locker");

    const newer = await open(agent, rid);
    const { turn_id, log } = await turn(newer, "what is my locker code?");
    const recalled = log.find((e) => e.type === "memory.recalled");
    expect(recalled).toMatchObject({ turn_id, payload: { resource_id: rid, query: "what is my locker code?" } });
    expect(recalled.payload.hits.length).toBeGreaterThan(0);
    for (const hit of recalled.payload.hits) expect(hit).toMatchObject({ session_id: older, turn_id: first.turn_id, score: expect.any(Number) });
    expect(recalled.payload.hits.map((h: any) => h.snippet).join(" ")).toContain("4711");
    expect(recalled.payload.tokens).toBeGreaterThan(0);
    // Recorded before the first model call, whose system prompt carries the hits.
    expect(log.findIndex((e) => e.type === "memory.recalled")).toBeLessThan(log.findIndex((e) => e.type === "model.requested"));
    const system = systemOf((await requests(s))[1]);
    expect(system).toContain("Earlier conversations with this user");
    expect(system).toContain("4711");

    const stranger = await open(agent, uniqueId("user"));
    const other = await turn(stranger, "what is my locker code?");
    expect(other.log.find((e) => e.type === "memory.recalled").payload.hits).toEqual([]);
    expect(systemOf((await requests(s))[2])).not.toContain("4711");

    // The session's own earlier turns are in its history already: recall leaves them out.
    await indexed(rid, "what");
    const again = await turn(newer, "what was the locker code again?");
    const own = again.log.find((e) => e.type === "memory.recalled").payload.hits;
    expect(own.length).toBeGreaterThan(0);
    expect(own.every((h: any) => h.session_id === older)).toBe(true);
  });

  it("keeps to top_k and the token budget", async () => {
    const rid = uniqueId("user");
    const w = uniqueId("auto-writer");
    await script(w, [{ text: "ok" }, { text: "ok" }]);
    const writer = await open(await recallAgent(w), rid);
    await turn(writer, "the heron nests by the river");
    await turn(writer, "the heron eats fish at dawn");
    await indexed(rid, "dawn");
    const hitsWith = async (auto: Record<string, unknown>) => {
      const s = uniqueId("auto-reader");
      await script(s, [{ text: "ok" }]);
      const { log } = await turn(await open(await recallAgent(s, auto), rid), "tell me about the heron");
      return log.find((e) => e.type === "memory.recalled").payload;
    };
    expect((await hitsWith({})).hits).toHaveLength(2); // top_k 3 by default; two messages name the heron
    expect((await hitsWith({ top_k: 1 })).hits).toHaveLength(1);
    const budgeted = await hitsWith({ max_tokens: 45 });
    expect(budgeted.hits).toHaveLength(1);
    expect(budgeted.tokens).toBeLessThanOrEqual(45);
  });
});

describe("the sessions a resource's memory reaches", () => {
  it("a replay reuses the recorded hits without searching (the resource's memory has changed since): the same prompt, answered from the recording", async () => {
    const s = uniqueId("auto-replay");
    const rid = uniqueId("user");
    await script(s, [{ text: "Noted." }, { text: "It is 4711." }]);
    const agent = await recallAgent(s);
    await turn(await open(agent, rid), "my locker code is 4711");
    await indexed(rid, "locker");
    const source = await open(agent, rid);
    const { turn_id, log } = await turn(source, "what is my locker code?");
    const original = log.find((e) => e.type === "memory.recalled").payload;
    expect(original.hits.length).toBeGreaterThan(0);
    // The resource forgets everything (its sessions stay): a search now would find nothing.
    expect((await api("DELETE", `/v1/resources/${rid}`)).status).toBe(204);
    expect((await api("GET", `/v1/resources/${rid}/memory/search?q=locker`)).body.hits).toEqual([]);

    await script(s, [{ text: "a live answer" }]); // clears the request count
    const res = await api("POST", `/v1/sessions/${source}/turns/${turn_id}/replay`, {});
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const replayLog = await waitForTurnEnd(res.body.exec_id, res.body.turn_id);
    expect(replayLog.find((e) => e.type === "memory.recalled").payload).toEqual({ ...original, resource_id: null, replayed: true });
    // The same prompt as recorded: the model call is answered from the recording, none goes live.
    expect(replayLog.some((e) => e.type === "replay.diverged")).toBe(false);
    expect(replayLog.find((e) => e.type === "turn.completed").payload.output).toBe("It is 4711.");
    expect(await requests(s)).toHaveLength(0);
    expect((await api("GET", `/v1/sessions/${res.body.exec_id}`)).body.resource_id).toBeNull();
  });

  it("a fork and an agent_orchestrate child belong to their parent's resource: their turns are recalled there and erasing the resource erases them", async () => {
    const rid = uniqueId("user");
    const step = `mem-step-${uniqueId().slice(-8)}`;
    await createAgent({ name: step, model: "demo:fast" });
    const s = uniqueId("auto-orch");
    const plan = { steps: [{ id: "s1", type: "agent", agent: step, prompt: "say something about albatrosses" }] };
    await script(s, [{ tool_calls: [{ id: "orc_1", name: "agent_orchestrate", arguments: { plan } }] }, { text: "Done." }]);
    const parent = await open({ name: "orchestrator", model: `openai-compatible:${s}`, tools: ["agent_orchestrate"] }, rid);
    const { log } = await turn(parent, "coordinate");
    const child = log.find((e) => e.type === "tool.result" && e.tool_call_id === "orc_1").payload.output.steps[0].exec_id;
    expect((await api("GET", `/v1/sessions/${child}`)).body.resource_id).toBe(rid);
    await indexed(rid, "albatrosses");

    const last = (await events(parent)).at(-1).sequence;
    const forked = await api("POST", `/v1/sessions/${parent}/fork`, { at_sequence: last, agent: step });
    expect(forked.status, JSON.stringify(forked.body)).toBe(201);
    const fork = forked.body.session_id;
    expect((await api("GET", `/v1/sessions/${fork}`)).body.resource_id).toBe(rid);
    await turn(fork, "tell me about pelicans");
    await indexed(rid, "pelicans");
    const hits = (await api("GET", `/v1/resources/${rid}/memory/search?q=pelicans`)).body.hits;
    expect(hits[0].session_id).toBe(fork);

    expect((await api("DELETE", `/v1/resources/${rid}?sessions=true`)).status).toBe(204);
    for (const sid of [parent, child, fork]) expect((await api("GET", `/v1/sessions/${sid}`)).status, sid).toBe(404);
  });
});

describe("recall with an embedding model", () => {
  it("finds an older session's message by meaning, with no word in common, through the openai-compatible provider", async () => {
    const s = uniqueId("embed");
    const rid = uniqueId("user");
    await script(s, [{ text: "Noted." }, { tool_calls: [{ name: "recall", arguments: { query: "which automobile" } }] }, { text: "A red one." }]);
    const agent = `embed-${s.slice(-8)}`;
    await createAgent({
      name: agent,
      model: `openai-compatible:${s}`,
      tools: ["recall"],
      memory: { recall: { embedding_model: "openai-compatible:fake-embedding" } },
    });
    const older = await open(agent, rid);
    const first = await turn(older, "I drive a red car");
    await indexed(rid, "drive");
    // By words alone (the HTTP search), "automobile" finds nothing.
    expect((await api("GET", `/v1/resources/${rid}/memory/search?q=which%20automobile`)).body.hits).toEqual([]);

    const { log } = await turn(await open(agent, rid), "what do I drive?");
    const result = log.find((e) => e.type === "tool.result").payload;
    expect(result.is_error).toBe(false);
    expect(result.output[0]).toMatchObject({ session_id: older, turn_id: first.turn_id, role: "user", snippet: "I drive a red car" });
  });

  it("refuses an embedding model of a provider without embeddings, naming the field", async () => {
    const res = await api("PUT", `/v1/agents/embed-bad-${uniqueId().slice(-8)}`, {
      model: "demo:fast",
      memory: { recall: { embedding_model: "anthropic:claude" } },
    });
    expect(res.status).toBe(422);
    expect(JSON.stringify(res.body)).toContain("memory.recall.embedding_model");
  });
});

describe("recall's word search", () => {
  it("leaves out a word most messages hold when the query has a rarer one", async () => {
    const rid = uniqueId("user");
    const agent = `common-${uniqueId().slice(-8)}`;
    await createAgent({ name: agent, model: "demo:fast" });
    const sid = await open(agent, rid);
    // 26 turns: 52 messages holding "the" (the demo model's answer holds it too), more than 50 and 5% of all.
    for (let i = 0; i < 26; i++) await turn(sid, `the weather is nice ${i}`);
    await turn(sid, "a kestrel hunts");
    await indexed(rid, "kestrel");
    const hits = (await api("GET", `/v1/resources/${rid}/memory/search?q=the%20kestrel&limit=10`)).body.hits;
    expect(hits.length).toBe(2); // the message and the demo model's echo of it; none of the 52 that only hold "the"
    for (const h of hits) expect(h.snippet).toContain("kestrel");
    // A query of common words only still searches the rarest of them.
    expect((await api("GET", `/v1/resources/${rid}/memory/search?q=the&limit=3`)).body.hits).toHaveLength(3);
  }, 120_000);
});
