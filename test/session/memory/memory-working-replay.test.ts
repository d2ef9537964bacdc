// The working memory a turn was shown, recorded through the public surface: memory.loaded at the
// turn's start; a replay shows the recorded document (a replay belongs to no resource, and the resource's
// document has changed since), so its model call is the recorded one; a turn resumed after a restart shows the
// document it started with, not the one stored meanwhile. The document is recorded once per change: a turn shown
// the same one points at the event that holds it. The resource keeps the latest versions of a document only.
import { abortAllDurableObjects, env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { resourceMemory, WORKING_MEMORY_VERSIONS } from "../../../src/objects/memory/resource-memory-object";
import { api, createAgent, submitTurn, waitForEvent, waitForTurnEnd } from "../../support/api";
import { requests, script, uniqueId } from "../../support/fake-model";

/** A session of `rid` on an agent with working memory, on the scripted model `scriptId`. */
async function memorySession(scriptId: string, rid: string): Promise<string> {
  const agent = `wmr-${scriptId.slice(-8)}`;
  await createAgent({ name: agent, model: `openai-compatible:${scriptId}`, tools: ["update_working_memory"], memory: { working: {} } });
  const res = await api("POST", "/v1/sessions", { agent, resource_id: rid });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.session_id;
}

async function putMemory(rid: string, document: Record<string, unknown>): Promise<void> {
  const res = await api("PUT", `/v1/resources/${rid}/memory`, { document });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
}

const systemOf = (request: any): string => request?.messages.find((m: { role: string }) => m.role === "system")?.content ?? "";
const hashes = (log: any[]) => log.filter((e) => e.type === "model.requested").map((e) => e.payload.request_hash);

describe("the working memory a turn was shown", () => {
  it("is recorded at the turn's start, and a replay shows the recorded document: answered from the recording though the memory changed", async () => {
    const s = uniqueId("wm-replay");
    const rid = uniqueId("user");
    await script(s, [{ text: "You like metric." }]);
    const sid = await memorySession(s, rid);
    await putMemory(rid, { units: "metric" });
    const { turn_id } = await submitTurn(sid, "what units do I like?");
    const log = await waitForTurnEnd(sid, turn_id);
    const loaded = log.find((e) => e.type === "memory.loaded");
    expect(loaded).toMatchObject({ turn_id, payload: { resource_id: rid, agent: null, version: 1, document: { units: "metric" } } });
    expect(log.indexOf(loaded)).toBeLessThan(log.findIndex((e) => e.type === "model.requested"));
    expect(systemOf((await requests(s))[0])).toContain('"units": "metric"');

    await putMemory(rid, { units: "imperial" });
    await script(s, [{ text: "a live answer" }]); // clears the request count
    const res = await api("POST", `/v1/sessions/${sid}/turns/${turn_id}/replay`, {});
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const replayLog = await waitForTurnEnd(res.body.exec_id, res.body.turn_id);
    expect(replayLog.find((e) => e.type === "memory.loaded").payload).toEqual({ ...loaded.payload, resource_id: null, replayed: true });
    // The same request as the original's, so it is answered from the recording and nothing goes live.
    expect(replayLog.some((e) => e.type === "replay.diverged")).toBe(false);
    expect(hashes(replayLog)).toEqual(hashes(log));
    expect(replayLog.find((e) => e.type === "turn.completed").payload.output).toBe("You like metric.");
    expect(await requests(s)).toHaveLength(0);
  });

  it("a turn resumed after a restart shows the document it started with, not the one stored meanwhile", async () => {
    const s = uniqueId("wm-resume");
    const rid = uniqueId("user");
    await script(s, [{ hang: true, text: "Cut by the restart", chunk_size: 1000 }, { text: "Metric, still." }]);
    const sid = await memorySession(s, rid);
    await putMemory(rid, { units: "metric" });
    const { turn_id } = await submitTurn(sid, "what units do I like?");
    await waitForEvent(sid, (e) => e.type === "model.delta" && e.turn_id === turn_id);
    await putMemory(rid, { units: "imperial" });
    await abortAllDurableObjects();
    const log = await waitForTurnEnd(sid, turn_id);
    expect(log.find((e) => e.type === "run.status" && e.payload.phase === "recovering")).toBeDefined();
    expect(log.at(-1)).toMatchObject({ type: "turn.completed", payload: { output: "Metric, still." } });
    expect(log.filter((e) => e.type === "memory.loaded").map((e) => e.payload.document)).toEqual([{ units: "metric" }]);
    const sent = await requests(s);
    expect(sent).toHaveLength(2);
    for (const request of sent) {
      expect(systemOf(request)).toContain('"units": "metric"');
      expect(systemOf(request)).not.toContain("imperial");
    }
  });

  it("is recorded once per change: a turn shown the same document points at the event that holds it, and its replay shows it", async () => {
    const s = uniqueId("wm-once");
    const rid = uniqueId("user");
    await script(s, [{ text: "one" }, { text: "two" }, { text: "three" }]);
    const sid = await memorySession(s, rid);
    await putMemory(rid, { units: "metric" });
    const first = await submitTurn(sid, "first");
    await waitForTurnEnd(sid, first.turn_id);
    const second = await submitTurn(sid, "second");
    await waitForTurnEnd(sid, second.turn_id);
    await putMemory(rid, { units: "imperial" });
    const third = await submitTurn(sid, "third");
    const log = await waitForTurnEnd(sid, third.turn_id);

    const loaded = log.filter((e) => e.type === "memory.loaded");
    expect(loaded.map((e) => e.turn_id)).toEqual([first.turn_id, second.turn_id, third.turn_id]);
    expect(loaded[0].payload).toEqual({ resource_id: rid, agent: null, version: 1, document: { units: "metric" } });
    expect(loaded[1].payload).toEqual({ resource_id: rid, agent: null, version: 1, document_at: loaded[0].sequence });
    expect(loaded[2].payload).toEqual({ resource_id: rid, agent: null, version: 2, document: { units: "imperial" } });
    const sent = await requests(s);
    expect(systemOf(sent[1])).toContain('"units": "metric"');
    expect(systemOf(sent[2])).toContain('"units": "imperial"');

    // The replay of the second turn is shown the document the first turn's event holds.
    await script(s, [{ text: "a live answer" }]);
    const res = await api("POST", `/v1/sessions/${sid}/turns/${second.turn_id}/replay`, {});
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const replayLog = await waitForTurnEnd(res.body.exec_id, res.body.turn_id);
    expect(replayLog.find((e) => e.type === "memory.loaded").payload).toEqual({
      resource_id: null,
      agent: null,
      version: 1,
      document: { units: "metric" },
      replayed: true,
    });
    expect(replayLog.some((e) => e.type === "replay.diverged")).toBe(false);
    expect(hashes(replayLog)).toEqual(hashes(log.filter((e) => e.turn_id === second.turn_id)));
    expect(await requests(s)).toHaveLength(0);
  });

  it("a resumed turn whose memory.loaded points at an earlier turn's document is shown that document", async () => {
    const s = uniqueId("wm-once-resume");
    const rid = uniqueId("user");
    await script(s, [{ text: "first" }, { hang: true, text: "Cut by the restart", chunk_size: 1000 }, { text: "Metric, still." }]);
    const sid = await memorySession(s, rid);
    await putMemory(rid, { units: "metric" });
    await waitForTurnEnd(sid, (await submitTurn(sid, "hello")).turn_id);
    const { turn_id } = await submitTurn(sid, "what units do I like?");
    await waitForEvent(sid, (e) => e.type === "model.delta" && e.turn_id === turn_id);
    await putMemory(rid, { units: "imperial" });
    await abortAllDurableObjects();
    const log = await waitForTurnEnd(sid, turn_id);
    expect(log.at(-1)).toMatchObject({ type: "turn.completed", payload: { output: "Metric, still." } });
    const loaded = log.filter((e) => e.type === "memory.loaded");
    expect(loaded.map((e) => e.payload.document_at)).toEqual([undefined, loaded[0].sequence]);
    const sent = await requests(s);
    expect(sent).toHaveLength(3);
    for (const request of sent.slice(1)) {
      expect(systemOf(request)).toContain('"units": "metric"');
      expect(systemOf(request)).not.toContain("imperial");
    }
  });
});

describe("the versions of a working memory document", () => {
  it(`are kept up to the latest ${WORKING_MEMORY_VERSIONS}: older ones are dropped as new ones are written`, async () => {
    const rid = uniqueId("user");
    const writes = WORKING_MEMORY_VERSIONS + 5;
    for (let n = 1; n <= writes; n++) await putMemory(rid, { n });
    expect((await api("GET", `/v1/resources/${rid}/memory`)).body).toMatchObject({ version: writes, document: { n: writes } });
    const kept = await runInDurableObject(resourceMemory(env, rid), async (_i, state) =>
      state.storage.sql.exec<{ version: number }>("SELECT version FROM working_versions ORDER BY version").toArray(),
    );
    expect(kept.map((r) => r.version)).toEqual(Array.from({ length: WORKING_MEMORY_VERSIONS }, (_, i) => writes - WORKING_MEMORY_VERSIONS + 1 + i));
  });
});
