// Forking a session at any event of its log (issue 21), through POST /v1/sessions/:sid/fork: the fork's
// conversation is the source's as of that sequence, what the fake model is sent in the fork proves it.
import { SELF } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { RuntimeClient } from "../src/client";
import { api, events, KEY, submitTurn, waitForTurnEnd } from "./support/api";
import { requests, type Step, script, toolURL, uniqueId } from "./support/fake-model";

const LOOKUP = {
  name: "lookup",
  description: "Looks a word up",
  url: toolURL("echo"),
  parameters: { type: "object", properties: { word: { type: "string" } }, required: ["word"] },
};

const agentOn = (scriptId: string) => ({ name: "forked", model: `openai-compatible:${scriptId}`, http_tools: [LOOKUP] });

/** A source session with two ended turns: "first" (a lookup, then "A") and "second" (answered "B"). */
async function source(): Promise<{ sid: string; scriptId: string; log: any[]; first: string }> {
  const scriptId = uniqueId("fork-src");
  const steps: Step[] = [{ tool_calls: [{ id: "call_1", name: "lookup", arguments: { word: "fork" } }] }, { text: "A" }, { text: "B" }];
  await script(scriptId, steps);
  const res = await api("POST", "/v1/sessions", { agent: agentOn(scriptId), metadata: { origin: "source" } });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  const sid = res.body.session_id;
  const first = (await submitTurn(sid, "first")).turn_id;
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
});
