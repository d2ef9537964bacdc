// Forking a session at any event of its log, through POST /v1/sessions/:sid/fork: the fork's
// conversation is the source's as of that sequence, what the fake model is sent in the fork proves it.
import { env, SELF } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { RuntimeClient } from "../../../src/client";
import { api, events, KEY, submitTurn, waitForEvent, waitForTurnEnd } from "../../support/api";
import { until } from "../../support/chat-client";
import { requests, type Step, script, toolRequests, toolURL, uniqueId } from "../../support/fake-model";
import { download, upload } from "../../support/files";

const LOOKUP = {
  name: "lookup",
  description: "Looks a word up",
  url: toolURL("echo"),
  parameters: { type: "object", properties: { word: { type: "string" } }, required: ["word"] },
};

const agentOn = (scriptId: string) => ({ name: "forked", model: `openai-compatible:${scriptId}`, http_tools: [LOOKUP] });

/** A source session with two ended turns (with `hitl`, its lookup waited for an approval, which was given): "first" (a lookup, then "A") and "second" (answered "B"). */
async function source(hitl = false): Promise<{ sid: string; scriptId: string; log: any[]; first: string }> {
  const scriptId = uniqueId("fork-src");
  const steps: Step[] = [{ tool_calls: [{ id: "call_1", name: "lookup", arguments: { word: "fork" } }] }, { text: "A" }, { text: "B" }];
  await script(scriptId, steps);
  const agent = { ...agentOn(scriptId), ...(hitl ? { hitl_tools: ["lookup"] } : {}) };
  const res = await api("POST", "/v1/sessions", { agent, metadata: { origin: "source" } });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  const sid = res.body.session_id;
  const first = (await submitTurn(sid, "first")).turn_id;
  if (hitl) {
    const asked = await waitForEvent(sid, (e) => e.type === "action.required");
    expect((await api("POST", `/v1/sessions/${sid}/actions/${asked.action_id}`, { decision: "approve" })).status).toBe(200);
  }
  await waitForTurnEnd(sid, first);
  const second = (await submitTurn(sid, "second")).turn_id;
  return { sid, scriptId, log: await waitForTurnEnd(sid, second), first };
}

/** Forks at `at` onto a fresh script, runs one turn there; returns the fork's id and the messages its model was sent. */
async function forkAndAsk(sid: string, at: number): Promise<{ fork: string; sent: any[] }> {
  const scriptId = uniqueId("fork-dst");
  await script(scriptId, [{ text: "forked answer" }]);
  const res = await api("POST", `/v1/sessions/${sid}/fork`, { at_sequence: at, agent: agentOn(scriptId) });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  expect(res.body).toMatchObject({ from_session: sid, at_sequence: at });
  const fork = res.body.session_id;
  const turn = (await submitTurn(fork, "next")).turn_id;
  const log = await waitForTurnEnd(fork, turn);
  expect(log.find((e) => e.type === "turn.completed").payload.output).toBe("forked answer");
  const [request] = await requests(scriptId);
  return { fork, sent: request.messages.filter((m: any) => m.role !== "system").map((m: any) => [m.role, m.content ?? m.tool_calls?.[0]?.function?.name]) };
}

const seqOf = (log: any[], match: (e: any) => boolean) => log.find(match).sequence;

describe("POST /v1/sessions/:sid/fork", () => {
  it("at a turn's end: the fork holds the turns ended by then, starts with session.forked, and leaves the source as it was", async () => {
    const { sid, log, first } = await source();
    const at = seqOf(log, (e) => e.type === "turn.completed" && e.turn_id === first);
    const { fork, sent } = await forkAndAsk(sid, at);
    expect(sent).toEqual([
      ["user", "first"],
      ["assistant", "lookup"],
      ["tool", expect.any(String)],
      ["assistant", "A"],
      ["user", "next"],
    ]);
    const forkLog = await events(fork);
    expect(forkLog[0]).toMatchObject({ sequence: 1, type: "session.forked", session_id: fork, payload: { from_session: sid, at_sequence: at } });
    expect(forkLog[1]).toMatchObject({ type: "session.created", payload: { agent: "forked", metadata: { origin: "source" } } });
    expect(await events(sid)).toEqual(log);
  });

  it("inside a turn: the completed steps up to that event, without a step whose tool results were not all in", async () => {
    const { sid, log } = await source();
    const afterResult = await forkAndAsk(
      sid,
      seqOf(log, (e) => e.type === "tool.result"),
    );
    expect(afterResult.sent).toEqual([
      ["user", "first"],
      ["assistant", "lookup"],
      ["tool", expect.any(String)],
      ["user", "next"],
    ]);
    const beforeResult = await forkAndAsk(
      sid,
      seqOf(log, (e) => e.type === "tool.started"),
    );
    expect(beforeResult.sent).toEqual([
      ["user", "first"],
      ["user", "next"],
    ]);
  });

  it("at a pending approval: the fork's turn waits for that approval again, and deciding it differently goes on from there", async () => {
    const { sid, log } = await source(true);
    const at = seqOf(log, (e) => e.type === "action.required");
    const scriptId = uniqueId("fork-dst");
    await script(scriptId, [{ text: "without the lookup" }]);
    const res = await api("POST", `/v1/sessions/${sid}/fork`, { at_sequence: at, agent: { ...agentOn(scriptId), hitl_tools: ["lookup"] } });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const fork = res.body.session_id;
    const thread = (await api("GET", `/v1/sessions/${fork}/thread`)).body;
    expect(thread.status).toBe("waiting_permission");
    expect(thread.pending_actions).toEqual([expect.objectContaining({ tool_name: "lookup", args: { word: "fork" }, tool_call_id: "call_1" })]);
    const { action_id } = thread.pending_actions[0];
    expect(action_id).not.toBe(log[at - 1].action_id);
    expect((await api("POST", `/v1/sessions/${fork}/actions/${action_id}`, { decision: "reject", reason: "not in the fork" })).status).toBe(200);
    const forkLog = await waitForTurnEnd(fork, thread.active_turn_id);
    expect(forkLog.map((e) => e.type).slice(0, 5)).toEqual(["session.forked", "session.created", "turn.submitted", "turn.started", "action.required"]);
    expect(forkLog.find((e) => e.type === "turn.submitted").payload.input).toBe("first");
    expect(forkLog.find((e) => e.type === "tool.result").payload.metadata.status).toBe("rejected");
    expect(forkLog.find((e) => e.type === "turn.completed").payload.output).toBe("without the lookup");
    // The model got the same conversation, with the rejection as the call's result; the tool never ran in the fork.
    const [sent] = await requests(scriptId);
    expect(sent.messages.filter((m: any) => m.role !== "system").map((m: any) => m.role)).toEqual(["user", "assistant", "tool"]);
    expect(sent.messages.find((m: any) => m.role === "tool").content).toMatch(/not in the fork/);
    expect((await toolRequests()).filter((r: any) => r?.session_id === fork)).toEqual([]);
    expect(await events(sid)).toEqual(log);
  });

  it("at the last event holds both turns; at the first holds none", async () => {
    const { sid, log } = await source();
    expect((await forkAndAsk(sid, log.length)).sent.map((m) => m[1])).toEqual(["first", "lookup", expect.any(String), "A", "second", "B", "next"]);
    expect((await forkAndAsk(sid, 1)).sent).toEqual([["user", "next"]]);
  });

  it("answers 404 for an unknown session and 422 for a sequence outside the log, creating nothing", async () => {
    const { sid, log } = await source();
    const unknown = await api("POST", "/v1/sessions/ses_0123456789abcdef01234567/fork", { at_sequence: 1 });
    expect(unknown.status).toBe(404);
    for (const at of [0, log.length + 1]) {
      const res = await api("POST", `/v1/sessions/${sid}/fork`, { at_sequence: at });
      expect(res.status).toBe(422);
      expect(res.body.error.details).toEqual([expect.objectContaining({ path: "at_sequence" })]);
    }
    const bad = await api("POST", `/v1/sessions/${sid}/fork`, { at_sequence: "3" });
    expect(bad.status).toBe(422);
    expect(bad.body.error.details).toEqual([expect.objectContaining({ path: "at_sequence" })]);
    expect(await events(sid)).toEqual(log);
  });
});

describe("RuntimeClient.forkSession", () => {
  it("forks through the client, and the fork answers with the source's earlier conversation", async () => {
    const { sid, log, first } = await source();
    const client = new RuntimeClient({ url: "https://runtime.test", key: KEY, fetch: (url, init) => SELF.fetch(url, init) });
    const at = seqOf(log, (e) => e.type === "turn.completed" && e.turn_id === first);
    const forked = await client.forkSession(sid, { at_sequence: at, metadata: { branch: "b" } });
    expect(forked).toMatchObject({ from_session: sid, at_sequence: at, session_id: expect.stringMatching(/^ses_/) });
    const snapshot = await client.getSession(forked.session_id);
    expect(snapshot.metadata).toEqual({ branch: "b" });
    await expect(client.forkSession(sid, { at_sequence: log.length + 5 })).rejects.toMatchObject({ status: 422 });
  });

  it("shares the source's files with the fork at once and copies them off the request; erasing the source erases the fork's copies too", async () => {
    const sid = (await api("POST", "/v1/sessions", { agent: { name: "fork-files", model: "demo:fast" } })).body.session_id;
    const texts = Array.from({ length: 20 }, (_, i) => `file number ${i}`);
    const uploaded = [];
    for (const text of texts) uploaded.push((await upload(sid, new TextEncoder().encode(text), "text/plain", `n${text.length}.txt`)).body);
    const at = (await events(sid)).at(-1).sequence;
    const res = await api("POST", `/v1/sessions/${sid}/fork`, { at_sequence: at });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const fork = res.body.session_id;

    // The fork lists and serves every file under its id at once, whether or not its own copy is made yet.
    expect((await api("GET", `/v1/sessions/${fork}/files`)).body.files).toEqual(uploaded);
    for (const [i, f] of uploaded.entries()) expect(new TextDecoder().decode((await download(fork, f.file_id)).bytes)).toBe(texts[i]);

    // Its own copies are made in the background (the alarm), under its own prefix.
    const forkKeys = async () => (await env.BLOBS.list({ prefix: `sessions/${fork}/files/` })).objects.length;
    await until(async () => (await forkKeys()) === uploaded.length, "the fork's copies of the source's files");

    // A file the fork deletes is its own copy: the source still has it.
    expect((await api("DELETE", `/v1/sessions/${fork}/files/${uploaded[0].file_id}`)).status).toBe(204);
    expect((await download(sid, uploaded[0].file_id)).status).toBe(200);

    // Erasing the source erases the fork (it holds the source's conversation), with every copy of the files.
    expect((await api("DELETE", `/v1/sessions/${sid}`)).status).toBe(204);
    expect((await api("GET", `/v1/sessions/${fork}/files`)).status).toBe(404);
    for (const s of [sid, fork]) expect((await env.BLOBS.list({ prefix: `sessions/${s}/files/` })).objects).toEqual([]);
  });
});
