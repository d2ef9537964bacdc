// The working memory a turn was shown, recorded through the public surface: memory.loaded at the
// turn's start; a replay shows the recorded document (a replay belongs to no resource, and the resource's
// document has changed since), so its model call is the recorded one; a turn resumed after a restart shows the
// document it started with, not the one stored meanwhile.
import { abortAllDurableObjects } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { api, createAgent, submitTurn, waitForEvent, waitForTurnEnd } from "./support/api";
import { requests, script, uniqueId } from "./support/fake-model";

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
});
