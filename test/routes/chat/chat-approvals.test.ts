// The AI SDK UI message stream, continued: approvals answered through addToolApprovalResponse
// with sendAutomaticallyWhen, a reload from GET .../messages while an approval waits, and resuming a
// streaming turn after a dropped connection. The client is the AI SDK's own (test/support/chat-client.ts).
import { lastAssistantMessageIsCompleteWithApprovalResponses, type UIMessage } from "ai";
import { describe, expect, it } from "vitest";
import { api, events } from "../../support/api";
import { HeadlessChat, plain, until } from "../../support/chat-client";
import { chatOn, expectConsistent, partTypes, serverMessages, textOf } from "../../support/chat-fixtures";
import type { Step } from "../../support/fake-model";

const auto = { sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses };
const calls = (...expressions: string[]): Step => ({
  tool_calls: expressions.map((expression, i) => ({ id: `call_${i}`, name: "calculator", arguments: { expression } })),
});
const guarded = { tools: ["calculator"], hitl_tools: ["calculator"] };

type ToolPart = { type: string; toolCallId: string; state: string; approval?: { id: string; approved?: boolean; reason?: string } };
const toolParts = (message: UIMessage | undefined) => (message?.parts ?? []).filter((p) => p.type === "dynamic-tool") as unknown as ToolPart[];

describe("approvals", () => {
  it("one call approved and one denied through addToolApprovalResponse; the rest of the turn streams on the same message", async () => {
    const { sid, chat } = await chatOn([calls("6 * 7", "1 + 1"), { text: "The first is 42; the second was not allowed." }], guarded, auto);
    await chat.sendMessage({ text: "compute two things" });

    // The turn waits: the stream ended with the approval requests and finish (tool-calls).
    expect(chat.status).toBe("ready");
    const turnId = chat.lastMessage!.id;
    const asked = toolParts(chat.lastMessage);
    expect(asked.map((p) => [p.toolCallId, p.state])).toEqual([
      ["call_0", "approval-requested"],
      ["call_1", "approval-requested"],
    ]);
    const first = await chat.log.exchanges[0]!.chunks;
    expect(first.slice(-6).map((c) => c.type)).toEqual([
      "tool-input-available",
      "tool-approval-request",
      "tool-input-available",
      "tool-approval-request",
      "finish-step",
      "finish",
    ]);
    expect(first.at(-1)).toEqual({ type: "finish", finishReason: "tool-calls" });
    const thread = (await api("GET", `/v1/sessions/${sid}/thread`)).body;
    expect(thread.status).toBe("waiting_permission");
    expect(thread.pending_actions.map((a: { action_id: string }) => a.action_id)).toEqual(asked.map((p) => p.approval!.id));

    // One answer is not all of them: nothing is sent yet.
    await chat.addToolApprovalResponse({ id: asked[0]!.approval!.id, approved: true });
    expect(chat.log.exchanges).toHaveLength(1);
    await chat.addToolApprovalResponse({ id: asked[1]!.approval!.id, approved: false, reason: "not this one" });
    await until(() => chat.status === "ready" && textOf(chat.lastMessage).length > 0, "the rest of the turn");

    const decisionPost = chat.log.exchanges[1]!;
    expect(decisionPost.body).toMatchObject({ id: sid, trigger: "submit-message", messageId: turnId });
    const rest = await decisionPost.chunks;
    expect(rest[0]).toEqual({ type: "start", messageId: turnId, messageMetadata: { session_id: sid } });
    expect(rest.map((c) => c.type)).not.toContain("tool-approval-request"); // what the client had is not sent again
    expect(chat.messages).toHaveLength(2);
    const done = chat.lastMessage!;
    expect(done.id).toBe(turnId);
    expect(partTypes(done)).toEqual(["step-start", "dynamic-tool", "dynamic-tool", "step-start", "text"]);
    expect(toolParts(done)).toEqual([
      expect.objectContaining({ toolCallId: "call_0", state: "output-available", output: "42", approval: { id: asked[0]!.approval!.id, approved: true } }),
      expect.objectContaining({
        toolCallId: "call_1",
        state: "output-denied",
        approval: { id: asked[1]!.approval!.id, approved: false, reason: "not this one" },
      }),
    ]);
    expect(textOf(done)).toBe("The first is 42; the second was not allowed.");
    const resolved = (await events(sid)).filter((e) => e.type === "action.resolved");
    expect(resolved.map((e) => [e.payload.decision, e.payload.reason])).toEqual([
      ["approved", null],
      ["rejected", "not this one"],
    ]);
    await expectConsistent(chat, sid);

    // The same decisions again: the actions were resolved already (409), and nothing changes.
    const before = (await events(sid)).length;
    const again = await api("POST", "/v1/chat", decisionPost.body);
    expect(again.status).toBe(409);
    expect(again.body.error.code).toBe("conflict");
    expect(await events(sid)).toHaveLength(before);
  });

  it("one approval answered twice in one message is refused naming the second part, and nothing is recorded", async () => {
    const { sid, chat } = await chatOn([calls("6 * 7"), { text: "done" }], guarded);
    await chat.sendMessage({ text: "compute" });
    const message = chat.lastMessage!;
    const [asked] = toolParts(message);
    const index = message.parts.findIndex((p) => p.type === "dynamic-tool");
    const answered = (approved: boolean) => ({ ...message.parts[index]!, state: "approval-responded", approval: { id: asked!.approval!.id, approved } });
    const twice = { ...message, parts: [...message.parts.slice(0, index), answered(true), answered(false)] };
    const before = (await events(sid)).length;
    const res = await api("POST", "/v1/chat", { id: sid, trigger: "submit-message", messageId: message.id, messages: [chat.messages[0], twice] });
    expect(res.status).toBe(422);
    expect(res.body.error.details).toEqual([
      { path: `messages.1.parts.${index + 1}.approval.id`, reason: "answers an approval an earlier part of this message answers" },
    ]);
    expect(await events(sid)).toHaveLength(before);
    expect((await api("GET", `/v1/sessions/${sid}/thread`)).body.status).toBe("waiting_permission");
  });

  it("a reload while an approval waits: GET .../messages shows it asking, resume finds nothing to stream, and the answer goes on", async () => {
    const { sid, chat: first } = await chatOn([calls("2 ^ 10"), { text: "It is 1024." }], guarded);
    await first.sendMessage({ text: "two to the tenth" });
    expect(toolParts(first.lastMessage).map((p) => p.state)).toEqual(["approval-requested"]);

    // A new page: the messages from the server, then useChat's resume on mount.
    const messages = (await serverMessages(sid)) as UIMessage[];
    expect(messages).toEqual(plain(first.messages));
    const reloaded = new HeadlessChat({ id: sid, messages, ...auto });
    await reloaded.resumeStream();
    expect(reloaded.log.exchanges[0]).toMatchObject({ method: "GET", status: 204 });
    expect(reloaded.messages).toEqual(messages);

    const [asking] = toolParts(reloaded.lastMessage);
    await reloaded.addToolApprovalResponse({ id: asking!.approval!.id, approved: true });
    await until(() => reloaded.status === "ready" && textOf(reloaded.lastMessage).length > 0, "the rest of the turn");
    expect(reloaded.messages).toHaveLength(2);
    expect(toolParts(reloaded.lastMessage)).toEqual([expect.objectContaining({ state: "output-available", output: "1024" })]);
    expect(textOf(reloaded.lastMessage)).toBe("It is 1024.");
    await expectConsistent(reloaded, sid);
  });
});

describe("approval deadlines and structured outputs", () => {
  it("an approval that times out becomes output-denied, and the turn goes on to its answer", async () => {
    const { sid, chat } = await chatOn([calls("5 + 5"), { text: "Nobody answered, so I did not compute it." }], { ...guarded, approval_timeout_ms: 1000 });
    await chat.sendMessage({ text: "add five and five" });
    expect(toolParts(chat.lastMessage).map((p) => p.state)).toEqual(["approval-requested"]);
    await until(async () => (await events(sid)).at(-1)?.type === "turn.completed", "the turn to end after the deadline", 15_000);
    const [, assistant] = (await serverMessages(sid)) as UIMessage[];
    expect(toolParts(assistant).map((p) => p.state)).toEqual(["output-denied"]);
    expect(textOf(assistant)).toBe("Nobody answered, so I did not compute it.");
  });

  it("a structured output_schema answer is sent as the message's text and in its metadata", async () => {
    const schema = { type: "object", properties: { answer: { type: "string" } }, required: ["answer"] };
    const { sid, chat } = await chatOn([{ text: '{"answer":"yes"}' }], { output_schema: schema });
    await chat.sendMessage({ text: "well?" });
    expect(textOf(chat.lastMessage)).toContain('"answer":"yes"');
    expect(chat.lastMessage!.metadata).toMatchObject({ session_id: sid, output: { answer: "yes" } });
    await expectConsistent(chat, sid);
  });
});

describe("resume (GET /v1/chat/:sid/stream)", () => {
  const slowTurn: Step[] = [calls("3 * 3"), { text: "Nine is three times three, and here is a longer tail of text.", chunk_size: 2, delay_ms: 40 }];

  it("after a dropped connection the running turn is replayed from its start: the message equals an undisturbed client's", async () => {
    const steady = await chatOn(slowTurn, { tools: ["calculator"] });
    await steady.chat.sendMessage({ text: "nine?" });

    const { sid, chat } = await chatOn(slowTurn, { tools: ["calculator"] }, { dropAfter: 9 });
    await chat.sendMessage({ text: "nine?" });
    expect(chat.status).toBe("error"); // the network error of the cut connection
    expect((await api("GET", `/v1/sessions/${sid}/thread`)).body.status).toBe("running");
    const partial = textOf(chat.lastMessage);
    expect(partial.length).toBeGreaterThan(0);
    expect(partial.length).toBeLessThan(20); // cut in the middle of the text

    await chat.resumeStream();
    expect(chat.status).toBe("ready");
    expect(chat.log.exchanges[1]).toMatchObject({ method: "GET", path: `/v1/chat/${sid}/stream`, status: 200 });
    expect(textOf(chat.lastMessage)).toBe("Nine is three times three, and here is a longer tail of text.");
    const normalize = (m: UIMessage) => plain({ ...m, id: "turn", metadata: { ...(m.metadata as object), session_id: "session" } });
    expect(chat.messages.map((m) => m.role)).toEqual(["user", "assistant"]);
    expect(normalize(chat.lastMessage!)).toEqual(normalize(steady.chat.lastMessage!));

    // The replay repeats exactly what the cut connection had delivered (ids come from the log's sequences).
    const [cut, resumed] = await chat.allChunks();
    expect(cut).toHaveLength(9);
    expect(resumed!.slice(0, 9)).toEqual(cut);
    await expectConsistent(chat, sid, new Set([0]));
    await expectConsistent(steady.chat, steady.sid);
  });
});
