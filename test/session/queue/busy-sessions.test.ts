// A message that arrives while a turn runs: on_busy enqueue, reject, interrupt and inject over
// HTTP, the WebSocket and POST /v1/chat, the agent's defaults, with the log and the conversation the next
// model call receives (the fake server's requests) checked exactly. Semantics: docs/guides/busy-sessions.md.
import { abortAllDurableObjects, SELF } from "cloudflare:test";
import { afterEach, describe, expect, it } from "vitest";
import { api, createAgent, createSession, events, expectGapless, KEY, submitTurn, waitForEvent, waitForTurnEnd } from "../../support/api";
import { requests, type Step, script, toolURL, uniqueId } from "../../support/fake-model";
import { tinyPng, toBase64 } from "../../support/files";
import { closeAllSockets, openWs } from "../../support/ws";

afterEach(closeAllSockets);

/** A session of an agent on the fake server with the given script (and config extras). */
async function scriptedSession(steps: Step[], extra: Record<string, unknown> = {}): Promise<{ sid: string; scriptId: string }> {
  const scriptId = uniqueId("busy");
  await script(scriptId, steps);
  const sid = await createSession({ name: "busy", model: `openai-compatible:${scriptId}`, ...extra });
  return { sid, scriptId };
}

/** A model call that streams `text` as one delta and then never finishes: the turn stays running. */
const hanging = (text: string): Step => ({ hang: true, text, chunk_size: 1000 });

/** Submits a turn whose model call hangs after streaming, and waits for that text. */
async function runningTurn(sid: string, input = "first question"): Promise<string> {
  const { turn_id } = await submitTurn(sid, input);
  await waitForEvent(sid, (e) => e.type === "model.delta" && e.turn_id === turn_id);
  return turn_id;
}

const chatBody = (sid: string, text: string, extra: Record<string, unknown> = {}) => ({
  id: sid,
  messages: [{ id: uniqueId("msg"), role: "user", parts: [{ type: "text", text }] }],
  trigger: "submit-message",
  ...extra,
});

describe("on_busy reject", () => {
  it("POST .../turns: 409 session_busy naming the running turn, and nothing stored", async () => {
    const { sid } = await scriptedSession([hanging("thinking")]);
    const running = await runningTurn(sid);
    const before = await events(sid);
    const res = await api("POST", `/v1/sessions/${sid}/turns`, { input: "are you there?", on_busy: "reject", idempotency_key: "k-reject" });
    expect(res.status).toBe(409);
    expect(res.body.error).toEqual({
      code: "session_busy",
      message: `Turn '${running}' is running; on_busy "reject" refuses a new turn meanwhile`,
      details: { running_turn_id: running },
    });
    expect(await events(sid)).toEqual(before);
    // Nothing stored: the refused key is still free once the session is idle.
    await api("POST", `/v1/sessions/${sid}/interrupt`);
    await script((await api("GET", `/v1/sessions/${sid}`)).body.agent.model.split(":")[1], [{ text: "here" }]);
    const later = await submitTurn(sid, "are you there?", { on_busy: "reject", idempotency_key: "k-reject" });
    expect(later).toEqual({ turn_id: expect.stringMatching(/^trn_/), status: "accepted" });
    expect((await waitForTurnEnd(sid, later.turn_id)).at(-1).payload.output).toBe("here");
  });

  it("the WebSocket submit_turn frame: a failed reply with session_busy", async () => {
    const { sid } = await scriptedSession([hanging("thinking")]);
    const running = await runningTurn(sid);
    const ws = await openWs(sid);
    const reply = await ws.command({ type: "submit_turn", input: "hello?", on_busy: "reject", request_id: "r1" });
    expect(reply).toMatchObject({ ok: false, error: { code: "session_busy", message: expect.stringContaining(running) } });
    expect((await events(sid)).filter((e) => e.type === "turn.submitted")).toHaveLength(1);
    await api("POST", `/v1/sessions/${sid}/interrupt`);
  });

  it("the agent's chat_on_busy applies to POST /v1/chat only; on_busy to the turns route", async () => {
    const { sid } = await scriptedSession([hanging("thinking")], { chat_on_busy: "reject" });
    const running = await runningTurn(sid);
    const chat = await api("POST", "/v1/chat", chatBody(sid, "hello?"));
    expect(chat.status).toBe(409);
    expect(chat.body.error).toMatchObject({ code: "session_busy", details: { running_turn_id: running } });
    const turn = await submitTurn(sid, "queued please");
    expect(turn.status).toBe("queued");
    await api("POST", `/v1/sessions/${sid}/interrupt`);
  });

  it("422 for an unknown strategy, in the body and in an agent config", async () => {
    const sid = await createSession({ name: "busy-bad", model: "demo:x" });
    const res = await api("POST", `/v1/sessions/${sid}/turns`, { input: "hi", on_busy: "later" });
    expect(res.status).toBe(422);
    expect(res.body.error.details).toEqual([{ path: "on_busy", reason: expect.stringContaining('"enqueue"') }]);
    const agent = await api("PUT", "/v1/agents/busy-bad", { name: "busy-bad", model: "demo:x", chat_on_busy: "drop" });
    expect(agent.status).toBe(422);
    expect(agent.body.error.details[0].path).toBe("chat_on_busy");
    expect(await events(sid)).toHaveLength(1);
  });
});

describe("on_busy interrupt", () => {
  it("cancels the running turn (superseded, by_turn_id); its partial answer and finished tool results stay; the new turn runs before the queued ones", async () => {
    const { sid, scriptId } = await scriptedSession(
      [
        { tool_calls: [{ id: "call_1", name: "calculator", arguments: { expression: "6 * 7" } }] },
        hanging("It is 42, and"),
        { text: "Paris." },
        { text: "queued ran" },
      ],
      { tools: ["calculator"] },
    );
    const first = await runningTurn(sid, "what is 6 * 7?");
    const queued = await submitTurn(sid, "a queued question");
    expect(queued.status).toBe("queued");
    const res = await api("POST", `/v1/sessions/${sid}/turns`, { input: "actually, the capital of France?", on_busy: "interrupt" });
    expect(res.status).toBe(202);
    expect(res.body).toEqual({ turn_id: expect.stringMatching(/^trn_/), status: "accepted", superseded_turn_id: first });
    const second = res.body.turn_id;

    const log = await waitForTurnEnd(sid, queued.turn_id);
    expectGapless(log);
    expect(log.find((e) => e.type === "turn.cancelled" && e.turn_id === first).payload).toEqual({ reason: "superseded", by_turn_id: second });
    expect(log.filter((e) => e.type === "turn.started").map((e) => e.turn_id)).toEqual([first, second, queued.turn_id]);
    // The new turn's submission, its place at the head of the queue and the cancellation: one moment of the log.
    const at = log.findIndex((e) => e.type === "turn.submitted" && e.turn_id === second);
    expect(log.slice(at, at + 4).map((e) => [e.type, e.turn_id ?? null])).toEqual([
      ["turn.submitted", second],
      ["queue.changed", null],
      ["model.completed", first],
      ["turn.cancelled", first],
    ]);
    expect(log[at + 1].payload.queued).toEqual([second, queued.turn_id]);
    expect(log[at + 2].payload.finish_reason).toBe("cancelled");
    expect(log.find((e) => e.turn_id === second && e.type === "turn.completed").payload.output).toBe("Paris.");

    const reqs = await requests(scriptId);
    expect(reqs).toHaveLength(4);
    expect(reqs[2].messages).toEqual([
      { role: "user", content: "what is 6 * 7?" },
      { role: "assistant", content: null, tool_calls: [expect.objectContaining({ id: "call_1" })] },
      { role: "tool", tool_call_id: "call_1", content: "42" },
      { role: "assistant", content: "It is 42, and" },
      { role: "user", content: "actually, the capital of France?" },
    ]);
    expect(reqs[3].messages.slice(-3)).toEqual([
      { role: "user", content: "actually, the capital of France?" },
      { role: "assistant", content: "Paris." },
      { role: "user", content: "a queued question" },
    ]);
  });

  it("the agent's on_busy default applies to the turns route and the WebSocket frame", async () => {
    const { sid, scriptId } = await scriptedSession([hanging("Let me"), { text: "Done." }], { on_busy: "interrupt" });
    const first = await runningTurn(sid, "long task");
    const ws = await openWs(sid);
    const reply = await ws.command({ type: "submit_turn", input: "short task", request_id: 7 });
    expect(reply).toMatchObject({ ok: true, result: { status: "accepted", superseded_turn_id: first } });
    const end = await ws.waitForTurnEnd(reply.result.turn_id);
    expect(end).toMatchObject({ type: "turn.completed", payload: { output: "Done." } });
    const cancelled = ws.events.find((e) => e.type === "turn.cancelled");
    expect(cancelled).toMatchObject({ turn_id: first, payload: { reason: "superseded", by_turn_id: reply.result.turn_id } });
    expect((await requests(scriptId))[1].messages).toEqual([
      { role: "user", content: "long task" },
      { role: "assistant", content: "Let me" },
      { role: "user", content: "short task" },
    ]);
  });

  it("POST /v1/chat with on_busy interrupt streams the new turn", async () => {
    const { sid, scriptId } = await scriptedSession([hanging("Hmm"), { text: "New answer." }]);
    const first = await runningTurn(sid, "old question");
    const res = await api("POST", "/v1/chat", chatBody(sid, "new question", { on_busy: "interrupt" }));
    expect(res.status).toBe(200);
    const chunks = (res.body as string)
      .split("\n\n")
      .filter((l) => l.startsWith("data: {"))
      .map((l) => JSON.parse(l.slice(6)));
    expect(
      chunks
        .filter((c) => c.type === "text-delta")
        .map((c) => c.delta)
        .join(""),
    ).toBe("New answer.");
    expect(chunks.at(-1)).toMatchObject({ type: "finish", finishReason: "stop" });
    const log = await events(sid);
    const second = log.find((e) => e.type === "turn.submitted" && e.turn_id !== first).turn_id;
    expect(log.find((e) => e.type === "turn.cancelled").payload).toEqual({ reason: "superseded", by_turn_id: second });
    expect((await requests(scriptId))[1].messages.map((m: any) => [m.role, m.content])).toEqual([
      ["user", "old question"],
      ["assistant", "Hmm"],
      ["user", "new question"],
    ]);
  });

  it("the superseded turn's chat stream ends with abort and finish, naming the reason and the new turn", async () => {
    const { sid } = await scriptedSession([hanging("Hmm"), { text: "New." }]);
    await runningTurn(sid, "old question");
    const stream = await SELF.fetch(`https://runtime.test/v1/chat/${sid}/stream`, { headers: { authorization: `Bearer ${KEY}` } });
    expect(stream.status).toBe(200);
    const { turn_id } = await submitTurn(sid, "new question", { on_busy: "interrupt" });
    const chunks = (await stream.text())
      .split("\n\n")
      .filter((l) => l.startsWith("data: {"))
      .map((l) => JSON.parse(l.slice(6)));
    expect(chunks.slice(-2)).toEqual([
      { type: "abort", reason: "superseded" },
      { type: "finish", finishReason: "other", messageMetadata: { cancel_reason: "superseded", superseded_by: turn_id } },
    ]);
  });

  it("with no turn running it is an ordinary turn", async () => {
    const sid = await createSession({ name: "busy-idle", model: "demo:x" });
    const turn = await submitTurn(sid, "hi", { on_busy: "interrupt" });
    expect(turn).toEqual({ turn_id: expect.any(String), status: "accepted" });
    const log = await waitForTurnEnd(sid, turn.turn_id);
    expect(log.filter((e) => e.type === "turn.cancelled")).toEqual([]);
  });

  it("the queue cap still holds", async () => {
    const { sid } = await scriptedSession([hanging("busy")]);
    await runningTurn(sid);
    for (let i = 0; i < 20; i++) await submitTurn(sid, `queued ${i}`);
    const before = await events(sid);
    const res = await api("POST", `/v1/sessions/${sid}/turns`, { input: "now!", on_busy: "interrupt" });
    expect(res.status).toBe(429);
    expect(await events(sid)).toEqual(before);
    await api("POST", `/v1/sessions/${sid}/interrupt`);
  });
});

describe("on_busy interrupt while a tool call is in flight", () => {
  it("the cut records the call's outcome: the log has a tool.result for every tool.started, and the next model call sees it", async () => {
    const { sid, scriptId } = await scriptedSession([{ tool_calls: [{ id: "call_slow", name: "slow", arguments: {} }] }, { text: "hi" }], {
      http_tools: [{ name: "slow", description: "slow", url: `${toolURL("slow")}?ms=5000`, parameters: { type: "object", properties: {} } }],
    });
    const { turn_id: first } = await submitTurn(sid, "run the slow tool");
    await waitForEvent(sid, (e) => e.type === "tool.started" && e.turn_id === first);
    const res = await api("POST", `/v1/sessions/${sid}/turns`, { input: "never mind, say hi", on_busy: "interrupt" });
    expect(res.status).toBe(202);
    const log = await waitForTurnEnd(sid, res.body.turn_id);
    expectGapless(log);
    const started = log.filter((e) => e.type === "tool.started" && e.turn_id === first).map((e) => e.tool_call_id);
    const results = log.filter((e) => e.type === "tool.result" && e.turn_id === first);
    expect(started).toEqual(["call_slow"]);
    expect(results.map((e) => [e.tool_call_id, e.payload.is_error])).toEqual([["call_slow", true]]);
    const cancelled = log.findIndex((e) => e.type === "turn.cancelled" && e.turn_id === first);
    expect(log.indexOf(results[0])).toBeLessThan(cancelled);
    const [, second] = await requests(scriptId);
    expect(second.messages.find((m: any) => m.role === "tool")).toMatchObject({ tool_call_id: "call_slow" });
  });
});

describe("on_busy interrupt during compaction", () => {
  it("cuts the compaction call; the history stays uncompacted and whole, and the new turn compacts it again", async () => {
    const long1 = `first ${"a".repeat(1600)}`;
    const long2 = `second ${"b".repeat(1600)}`;
    const third = `third ${"c".repeat(1000)}`;
    const { sid, scriptId } = await scriptedSession(
      [{ text: "ok1" }, { text: "ok2" }, { hang: true, text: "SUMM", chunk_size: 1000 }, { text: "SUMMARY-AFTER-CUT" }, { text: "short answer" }],
      { budget_awareness: "limit:50", context_window: 2048 },
    );
    for (const input of [long1, long2]) await waitForTurnEnd(sid, (await submitTurn(sid, input)).turn_id);
    const { turn_id: cut } = await submitTurn(sid, third);
    await waitForEvent(sid, (e) => e.type === "model.requested" && e.turn_id === cut && e.payload.phase === "compaction");
    const res = await api("POST", `/v1/sessions/${sid}/turns`, { input: "a short question", on_busy: "interrupt" });
    expect(res.status).toBe(202);
    const log = await waitForTurnEnd(sid, res.body.turn_id);
    expectGapless(log);

    const ofCut = log.filter((e) => e.turn_id === cut && e.type !== "model.delta").map((e) => e.type);
    expect(ofCut.slice(-4)).toEqual(["context.compaction.started", "model.requested", "model.completed", "turn.cancelled"]);
    expect(log.find((e) => e.type === "model.completed" && e.turn_id === cut).payload.finish_reason).toBe("cancelled");
    expect(log.find((e) => e.type === "turn.cancelled" && e.turn_id === cut).payload).toEqual({ reason: "superseded", by_turn_id: res.body.turn_id });
    // The new turn found the history as it was (the cut compaction replaced nothing), compacted it, and answered.
    const ofNew = log.filter((e) => e.turn_id === res.body.turn_id);
    expect(ofNew.filter((e) => e.type === "model.requested").map((e) => e.payload.phase)).toEqual(["compaction", "executor"]);
    expect(ofNew.at(-1)).toMatchObject({ type: "turn.completed", payload: { output: "short answer" } });
    const [, , , compaction, executor] = await requests(scriptId);
    expect(JSON.stringify(compaction.messages)).toContain(long1);
    expect(JSON.stringify(executor.messages)).toContain("SUMMARY-AFTER-CUT");
    expect(executor.messages.slice(-2)).toEqual([
      { role: "user", content: third },
      { role: "user", content: "a short question" },
    ]);
  });
});

describe("on_busy rollback", () => {
  it("cancels the running turn and takes it out of the conversation and the read model's turns; the log keeps it, with its side effects listed", async () => {
    const { sid, scriptId } = await scriptedSession(
      [
        { text: "Hello back." },
        { tool_calls: [{ id: "call_r", name: "calculator", arguments: { expression: "6 * 7" } }] },
        hanging("It is 42"),
        { text: "Fresh answer." },
      ],
      { tools: ["calculator"] },
    );
    const hello = await submitTurn(sid, "hello");
    await waitForTurnEnd(sid, hello.turn_id);
    const first = await runningTurn(sid, "what is 6 * 7?");
    const res = await api("POST", `/v1/sessions/${sid}/turns`, { input: "start over: what is new?", on_busy: "rollback" });
    expect(res.status).toBe(202);
    expect(res.body).toEqual({ turn_id: expect.any(String), status: "accepted", superseded_turn_id: first });
    const second = res.body.turn_id;
    const log = await waitForTurnEnd(sid, second);
    expectGapless(log);
    const at = log.findIndex((e) => e.type === "turn.cancelled" && e.turn_id === first);
    expect(log[at].payload).toEqual({ reason: "rolled_back", by_turn_id: second });
    expect(log[at + 1]).toMatchObject({
      type: "turn.rolled_back",
      payload: { turn_id: first, by_turn_id: second, side_effects: [{ tool_call_id: "call_r", name: "calculator", completed: true }] },
    });
    expect(log[at + 1].turn_id).toBeUndefined();
    // The log keeps every event of the rolled-back turn.
    expect(log.filter((e) => e.turn_id === first).map((e) => e.type)).toContain("tool.result");

    expect((await requests(scriptId))[3].messages).toEqual([
      { role: "user", content: "hello" },
      { role: "assistant", content: "Hello back." },
      { role: "user", content: "start over: what is new?" },
    ]);
    const snapshot = (await api("GET", `/v1/sessions/${sid}`)).body;
    expect(snapshot.turns.map((t: any) => [t.turn_id, t.status])).toEqual([
      [hello.turn_id, "completed"],
      [second, "completed"],
    ]);
    const ui = (await api("GET", `/v1/sessions/${sid}/messages`)).body;
    expect(ui.map((m: any) => [m.role, m.parts.find((p: any) => p.type === "text")?.text])).toEqual([
      ["user", "hello"],
      ["assistant", "Hello back."],
      ["user", "start over: what is new?"],
      ["assistant", "Fresh answer."],
    ]);
  });

  it("over the WebSocket and POST /v1/chat", async () => {
    const { sid, scriptId } = await scriptedSession([hanging("Thinking"), hanging("Still thinking"), { text: "Third." }]);
    const first = await runningTurn(sid, "one");
    const ws = await openWs(sid);
    const reply = await ws.command({ type: "submit_turn", input: "two", on_busy: "rollback", request_id: "rb" });
    expect(reply).toMatchObject({ ok: true, result: { superseded_turn_id: first } });
    const second = reply.result.turn_id;
    await ws.waitForEvent((e) => e.type === "model.delta" && e.turn_id === second);
    const res = await api("POST", "/v1/chat", chatBody(sid, "three", { on_busy: "rollback" }));
    expect(res.status).toBe(200);
    const log = await events(sid);
    expect(log.filter((e) => e.type === "turn.rolled_back").map((e) => e.payload.turn_id)).toEqual([first, second]);
    expect((await requests(scriptId))[2].messages).toEqual([{ role: "user", content: "three" }]);
  });
});

describe("on_busy interrupt while the turn waits for an approval", () => {
  it("rejects the pending action for the runtime and answers the call; the new turn sees it", async () => {
    const { sid, scriptId } = await scriptedSession(
      [{ tool_calls: [{ id: "call_a", name: "calculator", arguments: { expression: "1 + 1" } }] }, { text: "Skipped it." }],
      { tools: ["calculator"], hitl_tools: ["calculator"] },
    );
    const { turn_id: first } = await submitTurn(sid, "add with approval");
    await waitForEvent(sid, (e) => e.type === "action.required");
    const res = await api("POST", `/v1/sessions/${sid}/turns`, { input: "forget it", on_busy: "interrupt" });
    expect(res.body).toMatchObject({ status: "accepted", superseded_turn_id: first });
    const log = await waitForTurnEnd(sid, res.body.turn_id);
    expectGapless(log);
    expect(log.find((e) => e.type === "action.resolved").payload).toMatchObject({ decision: "rejected", by: "runtime" });
    expect(log.find((e) => e.type === "turn.cancelled").payload).toEqual({ reason: "superseded", by_turn_id: res.body.turn_id });
    expect((await requests(scriptId))[1].messages).toEqual([
      { role: "user", content: "add with approval" },
      { role: "assistant", content: null, tool_calls: [expect.objectContaining({ id: "call_a" })] },
      { role: "tool", tool_call_id: "call_a", content: "Tool call not executed: the turn was cancelled" },
      { role: "user", content: "forget it" },
    ]);
  });
});

describe("on_busy inject", () => {
  it("joins the running turn as a live message; no new turn", async () => {
    const { sid, scriptId } = await scriptedSession([{ text: "A slow first answer.", chunk_size: 2, delay_ms: 60 }, { text: "With the follow-up." }]);
    const { turn_id } = await submitTurn(sid, "question", { idempotency_key: "q1" });
    await waitForEvent(sid, (e) => e.type === "model.delta" && e.turn_id === turn_id);
    const res = await api("POST", `/v1/sessions/${sid}/turns`, { input: "follow-up", on_busy: "inject" });
    expect(res.status).toBe(202);
    expect(res.body).toEqual({ turn_id, status: "injected", message_id: expect.stringMatching(/^msg_/) });
    const log = await waitForTurnEnd(sid, turn_id);
    expect(log.filter((e) => e.type === "turn.submitted")).toHaveLength(1);
    expect(log.find((e) => e.type === "message.injected").payload).toMatchObject({ message_id: res.body.message_id, content: "follow-up" });
    // A retry whose key already made a turn answers that turn; nothing is injected.
    const retry = await api("POST", `/v1/sessions/${sid}/turns`, { input: "question", idempotency_key: "q1", on_busy: "inject" });
    expect(retry.body).toEqual({ turn_id, status: "accepted", duplicate: true });
    expect((await events(sid)).filter((e) => e.type === "message.injected")).toHaveLength(1);
    expect((await requests(scriptId))[1].messages).toEqual([
      { role: "user", content: "question" },
      { role: "assistant", content: "A slow first answer." },
      { role: "user", content: "follow-up" },
    ]);
  });

  it("files travel with the live message: the running turn's next model call gets them, the log names them", async () => {
    const { sid, scriptId } = await scriptedSession([{ text: "A slow first answer.", chunk_size: 2, delay_ms: 60 }, { text: "A dot." }]);
    const { turn_id } = await submitTurn(sid, "question");
    await waitForEvent(sid, (e) => e.type === "model.delta" && e.turn_id === turn_id);
    const png = await tinyPng(2);
    const input = [
      { type: "text", text: "and this?" },
      { type: "file", data: toBase64(png), media_type: "image/png", filename: "dot.png" },
    ];
    const res = await api("POST", `/v1/sessions/${sid}/turns`, { input, on_busy: "inject" });
    expect(res.body).toEqual({ turn_id, status: "injected", message_id: expect.stringMatching(/^msg_/) });
    const log = await waitForTurnEnd(sid, turn_id);
    expect(log.filter((e) => e.type === "turn.submitted")).toHaveLength(1);
    const [file] = (await api("GET", `/v1/sessions/${sid}/files`)).body.files;
    expect(log.find((e) => e.type === "message.injected").payload).toEqual({
      message_id: res.body.message_id,
      content: "and this?",
      files: [{ file_id: file.file_id, media_type: "image/png", filename: "dot.png", size: png.length }],
    });
    expect((await requests(scriptId))[1].messages.at(-1)).toEqual({
      role: "user",
      content: [
        { type: "text", text: "and this?" },
        { type: "image_url", image_url: { url: `data:image/png;base64,${toBase64(png)}` } },
      ],
    });
  });

  it("over the WebSocket, and a new turn when none runs", async () => {
    const sid = await createSession({ name: "busy-inject-idle", model: "demo:x" });
    const ws = await openWs(sid);
    const reply = await ws.command({ type: "submit_turn", input: "hi", on_busy: "inject", request_id: "i1" });
    expect(reply).toMatchObject({ ok: true, result: { status: "accepted" } });
    await ws.waitForTurnEnd(reply.result.turn_id);
    expect((await events(sid)).filter((e) => e.type === "turn.submitted")).toHaveLength(1);
  });
});

describe("on_busy enqueue", () => {
  it("is what an agent without on_busy does, as before", async () => {
    await createAgent({ name: "busy-enqueue", model: "demo:x" });
    const agent = (await api("GET", "/v1/agents/busy-enqueue")).body;
    expect(agent.on_busy).toBeUndefined();
    const { sid } = await scriptedSession([hanging("one"), { text: "two" }]);
    const first = await runningTurn(sid);
    const second = await submitTurn(sid, "next", { on_busy: "enqueue" });
    expect(second.status).toBe("queued");
    await api("POST", `/v1/sessions/${sid}/interrupt`, { reason: "stop" });
    const log = await waitForTurnEnd(sid, second.turn_id);
    expect(log.find((e) => e.type === "turn.cancelled" && e.turn_id === first).payload).toEqual({ reason: "stop" });
  });
});

describe("a restart in the middle of an interrupt or a rollback", () => {
  it.each([
    [
      "interrupt",
      [
        { role: "user", content: "old" },
        { role: "assistant", content: "Partial" },
        { role: "user", content: "new" },
      ],
    ],
    ["rollback", [{ role: "user", content: "new" }]],
  ])("%s: the new turn resumes with the same conversation; the old turn stays ended once", async (onBusy, conversation) => {
    const { sid, scriptId } = await scriptedSession([hanging("Partial"), hanging("Cut by the restart"), { text: "Done after the restart." }]);
    const first = await runningTurn(sid, "old");
    const res = await api("POST", `/v1/sessions/${sid}/turns`, { input: "new", on_busy: onBusy });
    const second = res.body.turn_id;
    await waitForEvent(sid, (e) => e.type === "model.delta" && e.turn_id === second);
    await abortAllDurableObjects();
    const log = await waitForTurnEnd(sid, second);
    expectGapless(log);
    expect(log.find((e) => e.turn_id === second && e.type === "run.status")?.payload.phase).toBe("recovering");
    expect(log.at(-1)).toMatchObject({ type: "turn.completed", turn_id: second, payload: { output: "Done after the restart." } });
    expect(log.filter((e) => e.type === "turn.cancelled").map((e) => [e.turn_id, e.payload.by_turn_id])).toEqual([[first, second]]);
    expect(log.filter((e) => e.type === "turn.rolled_back")).toHaveLength(onBusy === "rollback" ? 1 : 0);
    const reqs = await requests(scriptId);
    expect(reqs[1].messages).toEqual(conversation);
    expect(reqs[2].messages).toEqual(conversation);
  });
});

describe("debounce_ms", () => {
  it("messages of the same strategy within the window join the first turn, in order, before it starts", async () => {
    const { sid, scriptId } = await scriptedSession([{ text: "All three." }]);
    const a = await api("POST", `/v1/sessions/${sid}/turns`, { input: "one", debounce_ms: 1500 });
    const b = await api("POST", `/v1/sessions/${sid}/turns`, { input: "two", debounce_ms: 1500 });
    const c = await api("POST", `/v1/sessions/${sid}/turns`, { input: "three", debounce_ms: 1500 });
    const turn_id = a.body.turn_id;
    expect(a.body).toEqual({ turn_id, status: "queued" });
    for (const r of [b, c]) expect(r.body).toEqual({ turn_id, status: "injected", message_id: expect.stringMatching(/^msg_/) });
    const log = await waitForTurnEnd(sid, turn_id);
    expectGapless(log);
    expect(log.filter((e) => e.type === "turn.submitted").map((e) => e.payload)).toEqual([
      // `by`: who submitted it, the admin key's id (what a quota's key scope counts).
      { input: "one", queued: true, on_busy: "enqueue", debounce_ms: 1500, by: expect.stringMatching(/^key_[0-9a-f]{16}$/) },
    ]);
    expect(log.filter((e) => e.type === "message.injected").map((e) => e.payload.message_id)).toEqual([b.body.message_id, c.body.message_id]);
    expect(log.findIndex((e) => e.type === "message.injected")).toBeLessThan(log.findIndex((e) => e.type === "model.requested"));
    const reqs = await requests(scriptId);
    expect(reqs).toHaveLength(1);
    expect(reqs[0].messages).toEqual([
      { role: "user", content: "one" },
      { role: "user", content: "two" },
      { role: "user", content: "three" },
    ]);
  });

  it("a message with files joins the waiting turn like any other: its first model call gets them", async () => {
    const { sid, scriptId } = await scriptedSession([{ text: "Both." }]);
    const a = await api("POST", `/v1/sessions/${sid}/turns`, { input: "one", debounce_ms: 1000 });
    const png = await tinyPng(2);
    const file = { type: "file", data: toBase64(png), media_type: "image/png" };
    const b = await api("POST", `/v1/sessions/${sid}/turns`, { input: [{ type: "text", text: "two" }, file], debounce_ms: 1000 });
    expect(b.body).toEqual({ turn_id: a.body.turn_id, status: "injected", message_id: expect.stringMatching(/^msg_/) });
    const log = await waitForTurnEnd(sid, a.body.turn_id);
    expect(log.filter((e) => e.type === "turn.submitted")).toHaveLength(1);
    expect(log.find((e) => e.type === "message.injected").payload.files).toHaveLength(1);
    expect((await requests(scriptId))[0].messages).toEqual([
      { role: "user", content: "one" },
      {
        role: "user",
        content: [
          { type: "text", text: "two" },
          { type: "image_url", image_url: { url: `data:image/png;base64,${toBase64(png)}` } },
        ],
      },
    ]);
  });

  it("another strategy or window does not join; interrupt with debounce_ms cancels the running turn once and the rest join its successor", async () => {
    const { sid, scriptId } = await scriptedSession([hanging("Work"), { text: "Merged." }, { text: "Own turn." }]);
    const first = await runningTurn(sid, "long job");
    const x = await api("POST", `/v1/sessions/${sid}/turns`, { input: "stop, do x", on_busy: "interrupt", debounce_ms: 1500 });
    const y = await api("POST", `/v1/sessions/${sid}/turns`, { input: "and y", on_busy: "interrupt", debounce_ms: 1500 });
    const z = await api("POST", `/v1/sessions/${sid}/turns`, { input: "z later", debounce_ms: 1500 });
    expect(x.body).toEqual({ turn_id: expect.any(String), status: "queued", superseded_turn_id: first });
    expect(y.body).toMatchObject({ turn_id: x.body.turn_id, status: "injected" });
    expect(z.body).toEqual({ turn_id: expect.any(String), status: "queued" });
    expect(z.body.turn_id).not.toBe(x.body.turn_id);
    const log = await waitForTurnEnd(sid, z.body.turn_id);
    expectGapless(log);
    expect(log.filter((e) => e.type === "turn.cancelled").map((e) => e.turn_id)).toEqual([first]);
    const reqs = await requests(scriptId);
    expect(reqs[1].messages).toEqual([
      { role: "user", content: "long job" },
      { role: "assistant", content: "Work" },
      { role: "user", content: "stop, do x" },
      { role: "user", content: "and y" },
    ]);
    expect(reqs[2].messages.at(-1)).toEqual({ role: "user", content: "z later" });
  });

  it("a restart during the window keeps it: the turn starts with what joined it", async () => {
    const { sid, scriptId } = await scriptedSession([{ text: "After the restart." }]);
    const a = await api("POST", `/v1/sessions/${sid}/turns`, { input: "first", debounce_ms: 1500 });
    await api("POST", `/v1/sessions/${sid}/turns`, { input: "second", debounce_ms: 1500 });
    await abortAllDurableObjects();
    const log = await waitForTurnEnd(sid, a.body.turn_id);
    expect(log.at(-1)).toMatchObject({ type: "turn.completed", payload: { output: "After the restart." } });
    expect((await requests(scriptId))[0].messages).toEqual([
      { role: "user", content: "first" },
      { role: "user", content: "second" },
    ]);
  });

  it("removing a waiting turn takes what joined it along; 422 for a bad window", async () => {
    const sid = await createSession({ name: "busy-debounce-rm", model: "demo:x" });
    const a = await api("POST", `/v1/sessions/${sid}/turns`, { input: "first", debounce_ms: 5000 });
    await api("POST", `/v1/sessions/${sid}/turns`, { input: "second", debounce_ms: 5000 });
    expect((await api("DELETE", `/v1/sessions/${sid}/queue/${a.body.turn_id}`)).status).toBe(200);
    const next = await submitTurn(sid, "fresh");
    expect(next.status).toBe("accepted");
    const log = await waitForTurnEnd(sid, next.turn_id);
    expect(log.filter((e) => e.type === "message.injected")).toEqual([]);
    const bad = await api("POST", `/v1/sessions/${sid}/turns`, { input: "x", debounce_ms: 60_001 });
    expect(bad.status).toBe(422);
    expect(bad.body.error.details).toEqual([{ path: "debounce_ms", reason: "must be at most 60000" }]);
  });
});
