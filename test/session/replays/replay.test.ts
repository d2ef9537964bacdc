// Replaying a recorded turn against a changed agent, through POST /v1/sessions/:sid/turns/:turn_id/replay
// and GET /v1/replays/:exec_id. The fake Chat Completions server counts the requests each script gets, and the
// echo webhook records the session of each call: together they prove which model calls and tool calls were
// answered from the recording and which went live.

import { abortAllDurableObjects, SELF } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { type CliIO, RuntimeClient, runCli } from "../../../src/client";
import { api, events, KEY, submitTurn, waitForEvent, waitForTurnEnd } from "../../support/api";
import { requests, type Step, script, toolRequests, toolURL, uniqueId } from "../../support/fake-model";

const LOOKUP = {
  name: "lookup",
  description: "Looks a word up",
  url: toolURL("echo"),
  parameters: { type: "object", properties: { word: { type: "string" } }, required: ["word"] },
};
const calc = (id: string, expression: string): Step => ({ tool_calls: [{ id, name: "calculator", arguments: { expression } }] });
const lookup = (id: string, word: string): Step => ({ tool_calls: [{ id, name: "lookup", arguments: { word } }] });

/** A session whose one turn ran `steps` (scripted) to its end, its approvals (with hitl_tools) given. */
async function recorded(steps: Step[], extra: Record<string, unknown> = {}) {
  const scriptId = uniqueId("replay");
  await script(scriptId, steps);
  const agent = { name: "replayed", model: `openai-compatible:${scriptId}`, instructions: "Be brief.", tools: ["calculator"], http_tools: [LOOKUP], ...extra };
  const res = await api("POST", "/v1/sessions", { agent });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  const sid: string = res.body.session_id;
  const { turn_id } = await submitTurn(sid, "what is 2 + 3, and look up fork");
  if ("hitl_tools" in extra) {
    const asked = await waitForEvent(sid, (e) => e.type === "action.required");
    expect((await api("POST", `/v1/sessions/${sid}/actions/${asked.action_id}`, { decision: "approve" })).status).toBe(200);
  }
  const log = await waitForTurnEnd(sid, turn_id);
  return { sid, turn_id, scriptId, log };
}

/** Starts a replay, waits for it, and returns its log, its result and the live traffic it made. */
async function replay(sid: string, turnId: string, scriptId: string, live: Step[], body: Record<string, unknown> = {}) {
  await script(scriptId, live); // what a live model call gets now; clears the script's request count
  const res = await api("POST", `/v1/sessions/${sid}/turns/${turnId}/replay`, body);
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  const { exec_id, turn_id } = res.body;
  expect(res.body).toMatchObject({ source_session: sid, source_turn_id: turnId, exec_id: expect.stringMatching(/^ses_/) });
  const log = await waitForTurnEnd(exec_id, turn_id);
  const done = await waitForEvent(exec_id, (e) => e.type === "replay.completed");
  const result = await api("GET", `/v1/replays/${exec_id}`);
  expect(result.status).toBe(200);
  expect(result.body).toEqual({ exec_id, source_session: sid, source_turn_id: turnId, status: "completed", comparison: done.payload });
  const webhook = (await toolRequests()).filter((r: any) => r.session_id === exec_id);
  return {
    exec_id,
    turn_id,
    log: await events(exec_id),
    ended: log.find((e) => e.turn_id === turn_id && e.type.startsWith("turn.") && e.type !== "turn.submitted" && e.type !== "turn.started"),
    comparison: done.payload,
    liveModelCalls: (await requests(scriptId)).length,
    webhook,
  };
}

const steps = (log: any[]) => log.filter((e) => e.type === "model.requested" && !e.subagent_id).length;
const results = (log: any[]) => log.filter((e) => e.type === "tool.result").map((e) => [e.payload.name, e.payload.output]);

describe("POST /v1/sessions/:sid/turns/:turn_id/replay", () => {
  it("with no change and recorded tools makes no live call and reproduces the turn exactly", async () => {
    const source = await recorded([calc("c1", "2 + 3"), lookup("l1", "fork"), { text: "5, and fork was found." }]);
    const r = await replay(source.sid, source.turn_id, source.scriptId, [{ text: "a live answer" }]);

    expect(r.liveModelCalls).toBe(0);
    expect(r.webhook).toEqual([]);
    expect(r.ended).toMatchObject({ type: "turn.completed", payload: { output: "5, and fork was found.", stop_reason: "final_answer" } });
    expect(results(r.log)).toEqual(results(source.log)); // the lookup's result is the recorded one (its echo names the source session)
    expect(r.log.some((e) => e.type === "replay.diverged")).toBe(false);
    expect(r.log[0]).toMatchObject({ type: "session.forked", payload: { from_session: source.sid } });
    const last = r.log.at(-1);
    expect(last.type).toBe("replay.completed");
    expect(last.turn_id).toBeUndefined();
    expect(r.comparison).toMatchObject({
      source_session: source.sid,
      source_turn_id: source.turn_id,
      turn_id: r.turn_id,
      tools: "recorded",
      diverged: null,
      output_changed: false,
      tool_calls_changed: false,
      tokens_delta: 0,
      original: { status: "completed", stop_reason: "final_answer", steps: 3, output: "5, and fork was found." },
      replay: { status: "completed", steps: 3 },
    });
    expect(r.comparison.replay.tool_calls).toEqual([
      { name: "calculator", args: { expression: "2 + 3" } },
      { name: "lookup", args: { word: "fork" } },
    ]);
    expect(r.comparison.replay).toEqual(r.comparison.original);
    // The source is untouched.
    expect(await events(source.sid)).toEqual(source.log);
  });

  it("reproduces a turn that max_steps ended on an answer whose calls never started", async () => {
    const source = await recorded([calc("c1", "2 + 3"), { text: "5." }], { max_steps: 1 });
    expect(source.log.findLast((e: any) => e.type === "turn.completed")).toMatchObject({ payload: { stop_reason: "max_steps" } });
    expect(source.log.some((e: any) => e.type === "tool.started")).toBe(false);
    const r = await replay(source.sid, source.turn_id, source.scriptId, [{ text: "a live answer" }]);
    expect(r.liveModelCalls).toBe(0);
    expect(r.ended).toMatchObject({ type: "turn.completed", payload: { stop_reason: "max_steps" } });
    expect(r.comparison).toMatchObject({ diverged: null, output_changed: false, tokens_delta: 0 });
    expect(r.comparison.replay).toEqual(r.comparison.original);
  });

  it("counts the last call of a replay that max_steps ends while its answer's calls are still to start", async () => {
    const source = await recorded([{ text: "Five." }], { max_steps: 1 });
    // Changed instructions: the live model answers, naming a call that max_steps leaves unrun.
    const r = await replay(source.sid, source.turn_id, source.scriptId, [calc("c9", "2 + 3")], { agent: { instructions: "Use the calculator." } });
    expect(r.liveModelCalls).toBe(1);
    expect(r.ended).toMatchObject({ type: "turn.completed", payload: { stop_reason: "max_steps" } });
    // The replay's side sums its one call's cost.recorded, written before the comparison is made.
    const recordedUsage = r.log.find((e: any) => e.type === "cost.recorded" && e.turn_id === r.turn_id).payload.usage;
    expect(recordedUsage.total_tokens).toBeGreaterThan(0);
    expect(r.comparison.replay).toMatchObject({ stop_reason: "max_steps", steps: 1, usage: recordedUsage });
  });

  it("diverges at the first call when the instructions change; the live model answers from there", async () => {
    const source = await recorded([calc("c1", "2 + 3"), lookup("l1", "fork"), { text: "5, and fork was found." }]);
    const r = await replay(source.sid, source.turn_id, source.scriptId, [{ text: "Cinq." }], { agent: { instructions: "Answer in French." } });

    expect(r.liveModelCalls).toBe(1);
    const diverged = r.log.findIndex((e) => e.type === "replay.diverged");
    expect(r.log[diverged]).toMatchObject({ turn_id: r.turn_id, payload: { step: 1, reason: expect.stringContaining("request differs") } });
    expect(r.log[diverged - 1]).toMatchObject({ type: "model.requested", payload: { step: 1 } });
    expect(r.comparison).toMatchObject({
      diverged: { step: 1 },
      output_changed: true,
      tool_calls_changed: true,
      original: { steps: 3 },
      replay: { steps: 1, output: "Cinq.", tool_calls: [] },
    });
    // The replay session runs the changed agent.
    const [request] = await requests(source.scriptId);
    expect(request.messages[0]).toMatchObject({ role: "system", content: expect.stringContaining("Answer in French.") });
  });

  it("with live tools, diverges at a middle call when a tool's live result differs from the recorded one", async () => {
    // The echo webhook answers with the calling session's id, so the live lookup's result differs from the recording.
    const source = await recorded([calc("c1", "2 + 3"), lookup("l1", "fork"), calc("c2", "5 * 2"), { text: "10." }]);
    const r = await replay(source.sid, source.turn_id, source.scriptId, [calc("c9", "5 * 2"), { text: "10, live." }], { tools: "live" });

    expect(r.webhook).toHaveLength(1); // the lookup ran again
    expect(r.liveModelCalls).toBe(2); // calls 3 and 4
    expect(r.log.filter((e) => e.type === "replay.diverged").map((e) => e.payload.step)).toEqual([3]);
    expect(steps(r.log)).toBe(4);
    expect(r.comparison).toMatchObject({ tools: "live", diverged: { step: 3 }, output_changed: true, replay: { output: "10, live." } });
  });

  it("diverges at the last call when the last tool result changes", async () => {
    const source = await recorded([calc("c1", "2 + 3"), lookup("l1", "fork"), { text: "found" }]);
    const r = await replay(source.sid, source.turn_id, source.scriptId, [{ text: "found" }], { tools: "live" });

    expect(r.liveModelCalls).toBe(1);
    expect(r.comparison).toMatchObject({ diverged: { step: 3 }, output_changed: false, tool_calls_changed: false });
    // The webhook ran again, under an Idempotency-Key of its own: its receiver must not take it for the recorded call.
    const key = (log: any[]) => log.find((e) => e.type === "tool.result" && e.payload.name === "lookup").payload.metadata.receipt.idempotency_key;
    expect(r.webhook).toHaveLength(1);
    expect(key(r.log)).toMatch(/^idk_/);
    expect(key(r.log)).not.toBe(key(source.log));
  });

  it("with recorded tools, a call the recording never made runs only when it is safe; a network call gets an error result", async () => {
    const source = await recorded([calc("c1", "2 + 3"), { text: "5." }]);
    const live: Step[] = [
      {
        tool_calls: [
          { id: "n1", name: "calculator", arguments: { expression: "6 * 7" } },
          { id: "n2", name: "lookup", arguments: { word: "never" } },
        ],
      },
      { text: "done" },
    ];
    const r = await replay(source.sid, source.turn_id, source.scriptId, live, { agent: { instructions: "Changed." } });

    expect(r.webhook).toEqual([]);
    const result = (id: string) => r.log.find((e) => e.type === "tool.result" && e.tool_call_id === id).payload;
    expect(result("n1")).toMatchObject({ is_error: false, output: "42" });
    expect(result("n2")).toMatchObject({ is_error: true, output: expect.stringContaining("was not called with these arguments in the recorded turn") });
  });

  it("goes on from the recording after the replay session restarts while it waits for an approval", async () => {
    const source = await recorded([lookup("l1", "fork"), calc("c1", "1 + 1"), { text: "done" }], { hitl_tools: ["lookup"] });
    await script(source.scriptId, []); // any live model call would fail now
    // The recorded approval of lookup answers its call again; calculator, approved by nobody in the recording, waits.
    const started = await api("POST", `/v1/sessions/${source.sid}/turns/${source.turn_id}/replay`, { agent: { hitl_tools: ["lookup", "calculator"] } });
    expect(started.status).toBe(201);
    const { exec_id, turn_id } = started.body;
    const waiting = await waitForEvent(exec_id, (e) => e.type === "action.required" && e.payload.tool_name === "calculator");
    await abortAllDurableObjects();
    expect((await api("POST", `/v1/sessions/${exec_id}/actions/${waiting.action_id}`, { decision: "approve" })).status).toBe(200);
    const log = await waitForTurnEnd(exec_id, turn_id);

    expect(await requests(source.scriptId)).toEqual([]); // calls 2 and 3, after the restart, came from the recording too
    expect(log.some((e) => e.type === "replay.diverged")).toBe(false);
    const done = await waitForEvent(exec_id, (e) => e.type === "replay.completed");
    expect(done.payload).toMatchObject({ diverged: null, output_changed: false, replay: { status: "completed", steps: 3, output: "done" } });
  });

  /** A session whose one turn was cut: `cut` ends it once `started` (an event of the turn) is in the log. */
  async function cutShort(steps: Step[], started: string, extra: Record<string, unknown> = {}, cut?: (sid: string) => Promise<unknown>) {
    const scriptId = uniqueId("replay-cut");
    await script(scriptId, steps);
    const agent = { name: "cut", model: `openai-compatible:${scriptId}`, tools: ["calculator"], http_tools: [LOOKUP], ...extra };
    const sid = (await api("POST", "/v1/sessions", { agent })).body.session_id as string;
    const { turn_id } = await submitTurn(sid, "what is 2 + 3, and look up fork");
    await waitForEvent(sid, (e) => e.type === started);
    await cut?.(sid);
    const log = await waitForTurnEnd(sid, turn_id);
    return { sid, turn_id, scriptId, log };
  }
  const interrupt = (sid: string) => api("POST", `/v1/sessions/${sid}/interrupt`, {});

  it("of an interrupted turn diverges where the recording was cut and answers that call live, not with the cut text", async () => {
    const source = await cutShort(
      [calc("c1", "2 + 3"), { text: "Five, and the word fork means", chunk_size: 4, stall_after: 2 }],
      "model.delta",
      {},
      interrupt,
    );
    expect(source.log.at(-1).type).toBe("turn.cancelled");
    const r = await replay(source.sid, source.turn_id, source.scriptId, [{ text: "5, and fork was found." }]);

    expect(r.liveModelCalls).toBe(1);
    expect(r.log.filter((e) => e.type === "replay.diverged").map((e) => e.payload)).toEqual([
      { step: 2, reason: expect.stringMatching(/recording ends here: the recorded turn was cancelled \(interrupted by client\)/) },
    ]);
    expect(r.ended).toMatchObject({ type: "turn.completed", payload: { output: "5, and fork was found." } });
    expect(r.comparison).toMatchObject({
      diverged: { step: 2 },
      original: { status: "cancelled", steps: 2 },
      replay: { status: "completed", steps: 2, output: "5, and fork was found." },
    });
  });

  it("of a turn that failed on its wall-clock budget diverges where the recording was cut", async () => {
    const source = await cutShort([calc("c1", "2 + 3"), { text: "Five, and the word fork means", chunk_size: 4, stall_after: 2 }], "model.delta", {
      budget: { max_wall_clock_ms: 1500 },
    });
    expect(source.log.at(-1)).toMatchObject({ type: "turn.failed", payload: { error: { code: "budget_exceeded" } } });
    const r = await replay(source.sid, source.turn_id, source.scriptId, [{ text: "5." }]);

    expect(r.liveModelCalls).toBe(1);
    expect(r.comparison).toMatchObject({
      diverged: { step: 2, reason: expect.stringMatching(/recording ends here: the recorded turn failed \(budget_exceeded/) },
      original: { status: "failed", stop_reason: "budget_exceeded" },
      replay: { status: "completed", output: "5." },
    });
  });

  it("of a turn interrupted in a tool call does not give that call the cut result, and diverges after it", async () => {
    const slow = { ...LOOKUP, url: toolURL("slow?ms=20000") };
    const source = await cutShort([lookup("l1", "fork"), { text: "never asked" }], "tool.started", { http_tools: [slow] }, interrupt);
    expect(source.log.at(-1).type).toBe("turn.cancelled");
    const r = await replay(source.sid, source.turn_id, source.scriptId, [{ text: "I could not look it up." }]);

    const [result] = r.log.filter((e) => e.type === "tool.result");
    expect(result.payload).toMatchObject({ is_error: true, output: expect.stringContaining("cut short") });
    expect(r.comparison).toMatchObject({
      diverged: { step: 2, reason: expect.stringContaining("recording ends here: the recorded turn was cancelled") },
      original: { status: "cancelled", steps: 1 },
      replay: { status: "completed", steps: 2, output: "I could not look it up." },
    });
  });

  it("refuses what it cannot replay, naming why, and creates nothing", async () => {
    const name = `refused-${crypto.randomUUID().slice(0, 8)}`;
    const source = await recorded([{ text: "hi" }], { name });
    expect((await api("POST", `/v1/sessions/ses_000000000000000000000000/turns/${source.turn_id}/replay`, {})).status).toBe(404);
    const unknownTurn = await api("POST", `/v1/sessions/${source.sid}/turns/trn_nope/replay`, {});
    expect(unknownTurn.status).toBe(404);
    expect(unknownTurn.body.error.message).toContain("trn_nope");
    const badTools = await api("POST", `/v1/sessions/${source.sid}/turns/${source.turn_id}/replay`, { tools: "sometimes" });
    expect(badTools.status).toBe(422);
    expect(JSON.stringify(badTools.body)).toContain("tools");
    const noRoom = await api("POST", `/v1/sessions/${source.sid}/turns/${source.turn_id}/replay`, { agent: { budget: { max_history_tokens: 5 } } });
    expect(noRoom.status).toBe(422);
    expect(noRoom.body.error.details[0]).toMatchObject({ path: "agent", reason: expect.stringContaining("max_history_tokens (5)") });
    const badAgent = await api("POST", `/v1/sessions/${source.sid}/turns/${source.turn_id}/replay`, { agent: { max_steps: -1 } });
    expect(badAgent.status).toBe(422);
    expect(JSON.stringify(badAgent.body)).toContain("max_steps");

    // A turn that has not ended (it waits for an approval) cannot be replayed yet.
    const waitingScript = uniqueId("replay-wait");
    await script(waitingScript, [lookup("l1", "fork"), { text: "ok" }]);
    const agent = { name: "waits", model: `openai-compatible:${waitingScript}`, http_tools: [LOOKUP], hitl_tools: ["lookup"] };
    const sid = (await api("POST", "/v1/sessions", { agent })).body.session_id;
    const { turn_id } = await submitTurn(sid, "look it up");
    await waitForEvent(sid, (e) => e.type === "action.required");
    const running = await api("POST", `/v1/sessions/${sid}/turns/${turn_id}/replay`, {});
    expect(running.status).toBe(409);
    expect(running.body.error.message).toContain("has not ended");

    expect((await api("GET", `/v1/replays/${source.sid}`)).status).toBe(404); // a session, but no replay
    expect((await api("GET", "/v1/replays/ses_000000000000000000000000")).status).toBe(404);
    expect((await api("GET", `/v1/sessions?agent=${name}`)).body.sessions.map((s: any) => s.session_id)).toEqual([source.sid]);
  });
});

describe("agent-runtime eval", () => {
  /** A terminal with a file the command reads. */
  const terminal = (files: Record<string, string>) => {
    const io = {
      out: "",
      err: "",
      stdout(t: string) {
        io.out += t;
      },
      stderr(t: string) {
        io.err += t;
      },
      question: async () => null,
      readFile: async (path: string) => files[path] ?? Promise.reject(new Error(`no file ${path}`)),
      onInterrupt: () => () => {},
      env: { AGENT_RUNTIME_KEY: KEY, AGENT_RUNTIME_URL: "https://runtime.test" },
    };
    return io as CliIO & { out: string; err: string };
  };
  const deps = { fetch: (url: string, init?: RequestInit) => SELF.fetch(url, init) };

  it("prints a row per replayed turn and exits 1 when a turn that completed before fails now", async () => {
    const source = await recorded([calc("c1", "2 + 3"), { text: "5." }]);
    await script(source.scriptId, []);
    const same = terminal({ "same.json": JSON.stringify({ max_steps: 8 }) });
    expect(await runCli(["eval", "--session", source.sid, "--agent", "same.json"], same, deps)).toBe(0);
    expect(same.out).toContain(`${source.turn_id}  completed  no divergence  output same  tokens +0`);
    expect(same.out).toContain("1 turns replayed: 0 left the recording, 0 changed their output, 0 completed before and do not now");

    // A prompt change the live model answers with an error: the turn fails now, which is a regression.
    await script(source.scriptId, [{ error: { status: 400, message: "bad prompt" } }]);
    const changed = terminal({ "changed.json": JSON.stringify({ instructions: "Something else." }) });
    expect(await runCli(["eval", "--session", source.sid, "--turns", source.turn_id, "--agent", "changed.json"], changed, deps)).toBe(1);
    expect(changed.out).toContain(`${source.turn_id}  completed -> failed  diverged at call 1  output changed`);
    expect(changed.out).toContain("1 completed before and do not now");

    const client = new RuntimeClient({ url: "https://runtime.test", key: KEY, fetch: deps.fetch });
    const started = await client.replayTurn(source.sid, source.turn_id);
    expect(started.source_turn_id).toBe(source.turn_id);
    expect((await client.getReplay(started.exec_id)).source_session).toBe(source.sid);
  });

  it("refuses a missing session, file or a bad --tools before replaying anything", async () => {
    const io = terminal({ "a.json": "{}" });
    expect(await runCli(["eval", "--agent", "a.json"], io, deps)).toBe(2);
    expect(io.err).toContain("missing --session");
    expect(await runCli(["eval", "--session", "ses_x", "--agent", "a.json", "--tools", "maybe"], io, deps)).toBe(2);
    expect(io.err).toContain("--tools must be recorded or live");
    expect(await runCli(["eval", "--session", "ses_x", "--agent", "nope.json"], io, deps)).toBe(1);
    expect(io.err).toContain("no file nope.json");
  });
});
