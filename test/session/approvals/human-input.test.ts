// Human input beyond approve/reject, through HTTP: the ask_user tool's question waits like an approval
// (durable, with a deadline), its typed answer is checked against the response schema and becomes the call's result.
import { abortAllDurableObjects, evictDurableObject, runDurableObjectAlarm } from "cloudflare:test";
import { lastAssistantMessageIsCompleteWithToolCalls, type UIMessage } from "ai";
import { afterEach, describe, expect, it } from "vitest";
import { api, events, expectGapless, submitTurn, waitForEvent, waitForTurnEnd } from "../../support/api";
import { until } from "../../support/chat-client";
import { chatOn, expectConsistent, textOf } from "../../support/chat-fixtures";
import { baseURL, requests, script, toolRequests, uniqueId } from "../../support/fake-model";
import { asking, DEPLOY, deployCall, KEY_HASH, only, respond, sleepUntil, stub, toolMessages } from "../../support/hitl";
import { closeAllSockets, openWs } from "../../support/ws";

const PERSON = {
  type: "object",
  properties: { name: { type: "string" }, age: { type: "integer", minimum: 0 }, plan: { enum: ["free", "pro"] }, newsletter: { type: "boolean" } },
  required: ["name", "age"],
  additionalProperties: false,
};

afterEach(async () => {
  await closeAllSockets();
});

describe("ask_user", () => {
  it("asks a typed question, refuses an answer the schema does not allow (recording nothing), and gives the model a valid one", async () => {
    const { sid, scriptId } = await asking([
      { tool_calls: [{ name: "ask_user", arguments: { question: "Who are you?", response_schema: PERSON } }] },
      { text: "Welcome, Ada." },
    ]);
    const { turn_id } = await submitTurn(sid, "sign me up");
    const required = await waitForEvent(sid, (e) => e.type === "action.required");
    const { action_id, tool_call_id } = required;
    expect(required.payload).toEqual({
      kind: "user_input",
      tool_name: "ask_user",
      args: { question: "Who are you?", response_schema: PERSON },
      injected_args: {},
      question: "Who are you?",
      response_schema: PERSON,
      expires_at: expect.any(Number),
    });
    const thread = await api("GET", `/v1/sessions/${sid}/thread`);
    expect(thread.body).toMatchObject({
      status: "waiting_permission",
      pending_actions: [{ action_id, kind: "user_input", tool_name: "ask_user", question: "Who are you?", response_schema: PERSON }],
    });
    const before = await events(sid);

    // Each refusal names the field at fault and its reason, and changes nothing.
    const wrongType = await respond(sid, action_id, { response: { name: "Ada", age: "thirty" } });
    expect(wrongType.status).toBe(422);
    expect(wrongType.body.error.code).toBe("validation_failed");
    expect(wrongType.body.error.details).toEqual([{ path: "response.age", reason: expect.stringContaining("integer") }]);
    const missing = await respond(sid, action_id, { response: { age: 36, plan: "gold" } });
    expect(missing.status).toBe(422);
    expect(missing.body.error.details.map((d: any) => d.path).sort()).toEqual(["response", "response.plan"]);
    const approval = await respond(sid, action_id, { decision: "approve" });
    expect(approval.status).toBe(422);
    expect(approval.body.error.details).toEqual([{ path: "response", reason: expect.stringContaining("required") }]);
    expect(await events(sid)).toEqual(before);
    expect(await requests(scriptId)).toHaveLength(1);

    const answer = { name: "Ada", age: 36, plan: "pro", newsletter: false };
    const res = await respond(sid, action_id, { response: answer });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toEqual({ action_id, turn_id, tool_call_id, decision: "answered" });

    const log = await waitForTurnEnd(sid, turn_id);
    expectGapless(log);
    expect(only(log, "action.resolved", tool_call_id).payload).toEqual({
      decision: "answered",
      tool_name: "ask_user",
      by: expect.stringMatching(KEY_HASH),
      reason: null,
      response: answer,
    });
    expect(only(log, "tool.result", tool_call_id).payload).toMatchObject({
      name: "ask_user",
      output: answer,
      is_error: false,
      metadata: { status: "success", approval_status: "answered", approval_id: action_id },
    });
    const sent = await requests(scriptId);
    expect(sent).toHaveLength(2);
    expect(toolMessages(sent[1])).toEqual([[tool_call_id, JSON.stringify(answer)]]);
    expect(log.at(-1)).toMatchObject({ type: "turn.completed", payload: { output: "Welcome, Ada." } });

    // A second answer is a conflict, and the first one stands.
    const again = await respond(sid, action_id, { response: { name: "Bob", age: 1 } });
    expect(again.status).toBe(409);
    expect(again.body.error).toMatchObject({ code: "conflict", details: { status: "answered" } });
  });

  it("choices make the answer a pick from the list; a plain question takes a string", async () => {
    const { sid, scriptId } = await asking([
      { tool_calls: [{ name: "ask_user", arguments: { question: "Which size?", choices: ["S", "M", "L"] } }] },
      { tool_calls: [{ name: "ask_user", arguments: { question: "Any note?" } }] },
      { text: "Ordered." },
    ]);
    const { turn_id } = await submitTurn(sid, "order a shirt");
    const pick = await waitForEvent(sid, (e) => e.type === "action.required");
    expect(pick.payload.response_schema).toEqual({ type: "string", enum: ["S", "M", "L"] });
    const bad = await respond(sid, pick.action_id, { response: "XL" });
    expect(bad.status).toBe(422);
    expect(bad.body.error.details).toEqual([{ path: "response", reason: expect.any(String) }]);
    expect((await respond(sid, pick.action_id, { response: "M" })).status).toBe(200);

    const note = await waitForEvent(sid, (e) => e.type === "action.required" && e.action_id !== pick.action_id);
    expect(note.payload.response_schema).toEqual({ type: "string" });
    expect((await respond(sid, note.action_id, { response: 42 })).status).toBe(422);
    expect((await respond(sid, note.action_id, { response: "gift wrap" })).status).toBe(200);
    await waitForTurnEnd(sid, turn_id);
    const sent = await requests(scriptId);
    expect(toolMessages(sent[2])).toEqual([
      [pick.tool_call_id, "M"],
      [note.tool_call_id, "gift wrap"],
    ]);
  });

  it("with no answer before the deadline the model gets a timed_out result it can act on; a late answer is 409", async () => {
    const { sid, scriptId } = await asking(
      [{ tool_calls: [{ name: "ask_user", arguments: { question: "Proceed?", choices: ["yes", "no"] } }] }, { text: "No answer; I stopped." }],
      { approval_timeout_ms: 1000 },
    );
    const { turn_id } = await submitTurn(sid, "go");
    const required = await waitForEvent(sid, (e) => e.type === "action.required");
    await sleepUntil(required.payload.expires_at + 50);
    await runDurableObjectAlarm(stub(sid));
    const log = await waitForTurnEnd(sid, turn_id);
    expectGapless(log);
    expect(only(log, "action.resolved", required.tool_call_id).payload).toMatchObject({ decision: "timed_out", by: "runtime" });
    const result = only(log, "tool.result", required.tool_call_id);
    expect(result.payload).toMatchObject({
      is_error: false,
      output: { status: "timed_out", message: expect.any(String) },
      metadata: { status: "timed_out", approval_status: "timed_out" },
    });
    expect(toolMessages((await requests(scriptId))[1])).toEqual([[required.tool_call_id, JSON.stringify(result.payload.output)]]);
    expect(log.at(-1).payload.output).toBe("No answer; I stopped.");
    const late = await respond(sid, required.action_id, { response: "yes" });
    expect(late.status).toBe(409);
  });

  it("a question survives eviction and a hard restart while it waits; the answer then resumes the turn where it paused", async () => {
    const { sid, scriptId } = await asking([{ tool_calls: [{ name: "ask_user", arguments: { question: "Your name?" } }] }, { text: "Hello, Grace." }]);
    const { turn_id } = await submitTurn(sid, "greet me");
    const required = await waitForEvent(sid, (e) => e.type === "action.required");
    const before = await events(sid);
    await evictDurableObject(stub(sid));
    await abortAllDurableObjects();
    // The alarm (heartbeat or deadline) does not treat the wait as a crash.
    await runDurableObjectAlarm(stub(sid));
    expect(await events(sid)).toEqual(before);
    expect((await api("GET", `/v1/sessions/${sid}/thread`)).body.pending_actions.map((a: any) => a.question)).toEqual(["Your name?"]);

    expect((await respond(sid, required.action_id, { response: "Grace" })).status).toBe(200);
    const log = await waitForTurnEnd(sid, turn_id);
    expectGapless(log);
    expect(log.filter((e) => e.type === "run.status")).toEqual([]);
    expect(only(log, "tool.result", required.tool_call_id).payload.output).toBe("Grace");
    expect(log.at(-1).payload.output).toBe("Hello, Grace.");
    expect(await requests(scriptId)).toHaveLength(2);
  });

  it("a fork cut at a pending question waits for the same question, with its schema", async () => {
    const { sid } = await asking([{ tool_calls: [{ name: "ask_user", arguments: { question: "Which size?", choices: ["S", "M"] } }] }]);
    await submitTurn(sid, "order");
    const required = await waitForEvent(sid, (e) => e.type === "action.required");
    const scriptId = uniqueId("ask-fork");
    await script(scriptId, [{ text: "Size M it is." }]);
    const agent = { name: "asker", model: `openai-compatible:${scriptId}`, tools: ["ask_user"] };
    const res = await api("POST", `/v1/sessions/${sid}/fork`, { at_sequence: required.sequence, agent });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const fork = res.body.session_id;
    const thread = (await api("GET", `/v1/sessions/${fork}/thread`)).body;
    expect(thread.pending_actions).toEqual([
      expect.objectContaining({ kind: "user_input", question: "Which size?", response_schema: { type: "string", enum: ["S", "M"] } }),
    ]);
    const { action_id } = thread.pending_actions[0];
    expect((await respond(fork, action_id, { response: "XL" })).status).toBe(422);
    expect((await respond(fork, action_id, { response: "M" })).status).toBe(200);
    const log = await waitForTurnEnd(fork, thread.active_turn_id);
    expect(log.find((e) => e.type === "tool.result").payload.output).toBe("M");
    expect(log.at(-1).payload.output).toBe("Size M it is.");
  });

  it("reject declines the question: the model hears the user declined", async () => {
    const { sid } = await asking([{ tool_calls: [{ name: "ask_user", arguments: { question: "Your age?" } }] }, { text: "Fine." }]);
    const { turn_id } = await submitTurn(sid, "hi");
    const required = await waitForEvent(sid, (e) => e.type === "action.required");
    expect((await respond(sid, required.action_id, { decision: "reject", reason: "private" })).status).toBe(200);
    const log = await waitForTurnEnd(sid, turn_id);
    expect(only(log, "tool.result", required.tool_call_id).payload).toMatchObject({
      is_error: false,
      output: { status: "rejected", message: expect.stringContaining("private") },
    });
  });
});

describe("approvals with edited arguments", () => {
  it("runs the call once with the edited arguments; the log keeps both, the result says who edited", async () => {
    const { sid, scriptId } = await asking([deployCall({ env: "prod", replicas: 10, ticket: "T-9" }), { text: "Deployed." }], {
      http_tools: [DEPLOY],
      hitl_tools: ["deploy"],
      injected_tool_args: { ticket: "The change ticket" },
    });
    const { turn_id } = await submitTurn(sid, "deploy");
    const required = await waitForEvent(sid, (e) => e.type === "action.required");
    const { action_id, tool_call_id } = required;
    expect(required.payload).toMatchObject({ kind: "tool_approval", args: { env: "prod", replicas: 10 }, args_schema: DEPLOY.parameters });
    const before = await events(sid);

    // Edits the tool's schema refuses are 422 naming the field; so is an edit on a rejection. Nothing is recorded.
    const bad = await respond(sid, action_id, { decision: "approve", args: { env: "dev", replicas: "two" } });
    expect(bad.status).toBe(422);
    expect(bad.body.error.details.map((d: any) => d.path).sort()).toEqual(["args.env", "args.replicas"]);
    const missing = await respond(sid, action_id, { decision: "approve", args: { replicas: 2 } });
    expect(missing.body.error.details).toEqual([{ path: "args", reason: expect.stringContaining("env") }]);
    expect((await respond(sid, action_id, { decision: "reject", args: { env: "staging" } })).status).toBe(422);
    expect((await respond(sid, action_id, { response: "yes" })).status).toBe(422);
    expect(await events(sid)).toEqual(before);

    const res = await respond(sid, action_id, { decision: "approve", args: { env: "staging", replicas: 2 }, reason: "not prod on a Friday" });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toEqual({ action_id, turn_id, tool_call_id, decision: "approved" });
    const log = await waitForTurnEnd(sid, turn_id);
    expectGapless(log);
    const resolved = only(log, "action.resolved", tool_call_id).payload;
    expect(resolved).toMatchObject({ decision: "approved", args: { env: "staging", replicas: 2 }, reason: "not prod on a Friday" });
    expect(only(log, "action.required", tool_call_id).payload.args).toEqual({ env: "prod", replicas: 10 });
    expect(only(log, "tool.started", tool_call_id).payload).toEqual({
      name: "deploy",
      args: { env: "staging", replicas: 2 },
      injected_args: { ticket: "T-9" },
    });
    expect(only(log, "tool.result", tool_call_id).payload.metadata).toMatchObject({
      status: "success",
      approval_status: "approved",
      args_edited_by: resolved.by,
      injected_args: { ticket: "T-9" },
    });
    // The tool got the edited arguments, exactly once.
    const calls = (await toolRequests()).filter((r: any) => r?.session_id === sid);
    expect(calls.map((c: any) => c.args)).toEqual([{ env: "staging", replicas: 2 }]);
    expect(toolMessages((await requests(scriptId))[1])[0][1]).toContain('"staging"');
  });

  it("allow_edits: false refuses edits (422) and still takes a plain approval; an unedited result has no args_edited_by", async () => {
    const { sid } = await asking([deployCall({ env: "prod" }), { text: "Done." }], {
      http_tools: [DEPLOY],
      hitl_tools: [{ name: "deploy", allow_edits: false }],
    });
    const { turn_id } = await submitTurn(sid, "deploy");
    const required = await waitForEvent(sid, (e) => e.type === "action.required");
    expect(required.payload.args_schema).toBeUndefined();
    const edit = await respond(sid, required.action_id, { decision: "approve", args: { env: "staging" } });
    expect(edit.status).toBe(422);
    expect(edit.body.error.details).toEqual([{ path: "args", reason: expect.stringContaining("allow_edits") }]);
    expect((await respond(sid, required.action_id, { decision: "approve" })).status).toBe(200);
    const log = await waitForTurnEnd(sid, turn_id);
    const metadata = only(log, "tool.result", required.tool_call_id).payload.metadata;
    expect(metadata.approval_status).toBe("approved");
    expect(metadata).not.toHaveProperty("args_edited_by");
    expect((await toolRequests()).filter((r: any) => r?.session_id === sid).map((c: any) => c.args)).toEqual([{ env: "prod" }]);
  });
});

describe("every surface", () => {
  it("the WebSocket respond_action frame answers a question (response) and edits an approval (args), with the same checks", async () => {
    const { sid } = await asking(
      [
        { tool_calls: [{ name: "ask_user", arguments: { question: "Which env?", choices: ["staging", "prod"] } }] },
        deployCall({ env: "prod" }),
        { text: "Deployed to staging." },
      ],
      { http_tools: [DEPLOY], hitl_tools: ["deploy"] },
    );
    const ws = await openWs(sid);
    const { turn_id } = await submitTurn(sid, "deploy");
    const question = await ws.waitForEvent((e) => e.type === "action.required", "the question");
    const bad = await ws.command({ type: "respond_action", action_id: question.action_id, response: "dev", request_id: "q0" });
    // A reply carries the code and a sentence naming the field (as every command reply does).
    expect(bad).toMatchObject({ ok: false, error: { code: "validation_failed", message: expect.stringContaining("response:") } });
    const ok = await ws.command({ type: "respond_action", action_id: question.action_id, response: "staging", request_id: "q1" });
    expect(ok).toMatchObject({ ok: true, result: { decision: "answered" } });

    const approval = await ws.waitForEvent((e) => e.type === "action.required" && e.payload.kind === "tool_approval", "the approval");
    const edited = await ws.command({ type: "respond_action", action_id: approval.action_id, decision: "approve", args: { env: "staging" }, request_id: "a0" });
    expect(edited).toMatchObject({ ok: true, result: { decision: "approved" } });
    const log = await waitForTurnEnd(sid, turn_id);
    expect(only(log, "tool.result", question.tool_call_id as string).payload.output).toBe("staging");
    expect(only(log, "tool.started", approval.tool_call_id as string).payload.args).toEqual({ env: "staging" });
  });

  it("useChat: ask_user is a tool part in input-available, answered with addToolOutput; the turn goes on in the same message", async () => {
    const { sid, chat } = await chatOn(
      [{ tool_calls: [{ id: "call_q", name: "ask_user", arguments: { question: "Your name?" } }] }, { text: "Hello, Ada." }],
      { tools: ["ask_user"] },
      { sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithToolCalls },
    );
    await chat.sendMessage({ text: "greet me" });
    expect(chat.status).toBe("ready");
    const turnId = chat.lastMessage!.id;
    const part = (chat.lastMessage as UIMessage).parts.find((p) => p.type === "dynamic-tool") as any;
    expect(part).toMatchObject({ toolCallId: "call_q", toolName: "ask_user", state: "input-available", input: { question: "Your name?" } });
    const first = await chat.log.exchanges[0]!.chunks;
    expect(first.map((c) => c.type)).not.toContain("tool-approval-request");
    expect(first.at(-1)).toEqual({ type: "finish", finishReason: "tool-calls" });

    await chat.addToolOutput({ tool: "ask_user", toolCallId: "call_q", output: "Ada" });
    await until(() => chat.status === "ready" && textOf(chat.lastMessage).length > 0, "the rest of the turn");
    expect(chat.log.exchanges[1]!.body).toMatchObject({ id: sid, trigger: "submit-message", messageId: turnId });
    expect(chat.messages).toHaveLength(2);
    expect(chat.lastMessage!.id).toBe(turnId);
    expect(textOf(chat.lastMessage)).toBe("Hello, Ada.");
    const resolved = (await events(sid)).filter((e) => e.type === "action.resolved");
    expect(resolved.map((e) => [e.payload.decision, e.payload.response])).toEqual([["answered", "Ada"]]);
    await expectConsistent(chat, sid);
  });
});

describe("reminders", () => {
  it("remind_after_ms emits action.reminder while the call waits, delivered to a subscription; the decision stops them", async () => {
    const rcv = `${baseURL}/_receiver/${uniqueId("rcv")}`;
    await fetch(`${rcv}/plan`, { method: "PUT", body: JSON.stringify({}) });
    const { sid } = await asking([deployCall({ env: "prod" }), { text: "Deployed." }], {
      http_tools: [DEPLOY],
      hitl_tools: [{ name: "deploy", remind_after_ms: 1000 }],
      approval_timeout_ms: 60_000,
    });
    const sub = await api("POST", `/v1/sessions/${sid}/subscriptions`, { url: rcv, secret: "a-test-secret-of-some-length", types: ["action.reminder"] });
    expect(sub.status, JSON.stringify(sub.body)).toBe(201);
    const { turn_id } = await submitTurn(sid, "deploy");
    const required = await waitForEvent(sid, (e) => e.type === "action.required");
    expect(required.payload.remind_after_ms).toBe(1000);
    await sleepUntil(required.timestamp + 1050);
    // The alarm may have fired on its own already; running it makes sure the due reminder is out.
    await runDurableObjectAlarm(stub(sid));
    const reminder = await waitForEvent(sid, (e) => e.type === "action.reminder");
    expect(reminder).toMatchObject({ turn_id, action_id: required.action_id, tool_call_id: required.tool_call_id });
    expect(reminder.payload).toEqual({ kind: "tool_approval", tool_name: "deploy", expires_at: required.payload.expires_at, next_at: expect.any(Number) });
    // The next reminder is remind_after_ms after this one (the clock read for it and the event's timestamp may differ by a few ms).
    expect(Math.abs(reminder.payload.next_at - reminder.timestamp - 1000)).toBeLessThan(50);

    // The subscription delivers it, so a webhook can page someone.
    const delivered = async () => {
      const got = (await (await fetch(`${rcv}/requests`)).json()) as { body: string; answered: number }[];
      return got.filter((r) => r.answered === 200).flatMap((r) => JSON.parse(r.body).events);
    };
    await until(async () => (await delivered()).some((e: any) => e.event_id === reminder.event_id), "the reminder's delivery");
    expect((await delivered()).every((e: any) => e.type === "action.reminder")).toBe(true);

    expect((await respond(sid, required.action_id, { decision: "approve" })).status).toBe(200);
    const log = await waitForTurnEnd(sid, turn_id);
    expectGapless(log);
    const count = log.filter((e) => e.type === "action.reminder").length;
    const resolvedAt = log.findIndex((e) => e.type === "action.resolved");
    expect(log.findLastIndex((e) => e.type === "action.reminder")).toBeLessThan(resolvedAt);
    await sleepUntil(Date.now() + 1100);
    await runDurableObjectAlarm(stub(sid));
    expect((await events(sid)).filter((e) => e.type === "action.reminder")).toHaveLength(count);
  });
});
