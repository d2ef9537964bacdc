// The AI SDK UI message stream, driven by the AI SDK's own client code: a headless useChat
// (AbstractChat + DefaultChatTransport) against the worker and the scripted fake model. Turns, tools,
// failures, interrupts, sub-agents and bad bodies; approvals and resume are in chat-approvals.test.ts.
import { SELF } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { api, createSession, events } from "../../support/api";
import { HeadlessChat, plain, until } from "../../support/chat-client";
import { chatOn, expectConsistent, partTypes, scriptedAgent, serverMessages, textOf } from "../../support/chat-fixtures";
import { requests } from "../../support/fake-model";
import { shortLivedToken } from "../../support/tokens";

describe("POST /v1/chat: a turn as the UI message stream", () => {
  it("a text turn: streamed text, the turn id as the message id, metadata, and an idempotent retry", async () => {
    const { sid, chat } = await chatOn([{ text: "Hello there, friend.", chunk_size: 3 }]);
    await chat.sendMessage({ text: "hi" });
    expect(chat.status).toBe("ready");
    const [user, assistant] = chat.messages;
    expect(user).toMatchObject({ role: "user", parts: [{ type: "text", text: "hi" }] });
    expect(assistant!.id).toMatch(/^trn_/);
    expect(assistant!.parts).toEqual([{ type: "step-start" }, expect.objectContaining({ type: "text", text: "Hello there, friend.", state: "done" })]);
    expect(assistant!.metadata).toMatchObject({ session_id: sid, stop_reason: "final_answer", usage: { input_tokens: 10, output_tokens: 5 } });

    const [post] = chat.log.exchanges;
    const chunks = await post!.chunks;
    const types = chunks.map((c) => c.type);
    expect(types.slice(0, 3)).toEqual(["start", "start-step", "text-start"]);
    expect(types.slice(-3)).toEqual(["text-end", "finish-step", "finish"]);
    expect(new Set(types.slice(3, -3))).toEqual(new Set(["text-delta"]));
    expect(chunks[0]).toEqual({ type: "start", messageId: assistant!.id, messageMetadata: { session_id: sid } });
    expect(chunks.at(-1)).toMatchObject({ type: "finish", finishReason: "stop" });
    await expectConsistent(chat, sid);

    // The user message's id is the turn's idempotency key: the same POST again makes no second turn and
    // replays the same chunks (part ids derive from sequences).
    const again = await api("POST", "/v1/chat", post!.body);
    expect(again.status).toBe(200);
    expect(again.body).toBe(await post!.raw);
    const log = await events(sid);
    expect(log.filter((e) => e.type === "turn.submitted")).toHaveLength(1);
    expect(log.find((e) => e.type === "turn.submitted").payload.idempotency_key).toBe(user!.id);

    // Nothing runs: resuming finds nothing (204) and changes nothing.
    await chat.resumeStream();
    expect(chat.log.exchanges.at(-1)).toMatchObject({ method: "GET", path: `/v1/chat/${sid}/stream`, status: 204 });
    expect(chat.status).toBe("ready");
    await expectConsistent(chat, sid);
  });

  it("a turn with parallel tool calls: a dynamic tool part per call, with its output or its error", async () => {
    const { sid, chat } = await chatOn(
      [
        {
          tool_calls: [
            { id: "call_ok", name: "calculator", arguments: { expression: "2 * (3 + 4)" } },
            { id: "call_bad", name: "calculator", arguments: { expression: "1 /" } },
          ],
        },
        { text: "14, and one expression was broken." },
      ],
      { tools: ["calculator"] },
    );
    await chat.sendMessage({ text: "compute" });
    const assistant = chat.lastMessage!;
    expect(partTypes(assistant)).toEqual(["step-start", "dynamic-tool", "dynamic-tool", "step-start", "text"]);
    expect(assistant.parts[1]).toMatchObject({
      type: "dynamic-tool",
      toolName: "calculator",
      toolCallId: "call_ok",
      state: "output-available",
      input: { expression: "2 * (3 + 4)" },
      output: "14",
    });
    expect(assistant.parts[2]).toMatchObject({ toolCallId: "call_bad", state: "output-error", errorText: expect.any(String) });
    expect(textOf(assistant)).toBe("14, and one expression was broken.");
    const types = (await chat.log.exchanges[0]!.chunks).map((c) => c.type);
    // Both calls start before either result (they ran in parallel), and a new model call is a new step.
    expect(types.lastIndexOf("tool-input-available")).toBeLessThan(types.indexOf("tool-output-available"));
    expect(types.filter((t) => t === "finish-step")).toHaveLength(2);
    await expectConsistent(chat, sid);
  });

  it("a failing turn: the error chunk carries the code, and the message records it", async () => {
    const { sid, chat } = await chatOn([{ error: { status: 400, message: "the fake model refused" } }]);
    await chat.sendMessage({ text: "fail please" });
    expect(chat.status).toBe("error");
    expect(chat.error?.message).toMatch(/^model_error: .*the fake model refused/);
    const chunks = await chat.log.exchanges[0]!.chunks;
    expect(chunks.slice(-2)).toEqual([
      { type: "message-metadata", messageMetadata: { error: { code: "model_error", message: expect.stringContaining("the fake model refused") } } },
      { type: "error", errorText: expect.stringMatching(/^model_error: /) },
    ]);
    expect(chat.lastMessage?.metadata).toMatchObject({ error: { code: "model_error" } });
    await expectConsistent(chat, sid);
  });

  it("stop() only disconnects (the turn runs on and is resumed); POST .../interrupt cancels: abort + finish", async () => {
    const { sid, chat } = await chatOn([{ text: "A long answer that never ends", chunk_size: 7, hang: true }]);
    const sending = chat.sendMessage({ text: "talk" });
    await until(() => chat.lastMessage?.role === "assistant" && textOf(chat.lastMessage) !== "", "the first text");
    await chat.stop();
    await sending;
    expect(chat.status).toBe("ready");
    expect((await api("GET", `/v1/sessions/${sid}/thread`)).body.status).toBe("running");

    // The running turn is replayed from its start, then followed live.
    const resuming = chat.resumeStream();
    await until(() => chat.log.exchanges.length === 2 && chat.status === "streaming", "the resumed stream");
    const interrupted = await api("POST", `/v1/sessions/${sid}/interrupt`, { reason: "the user pressed stop" });
    expect(interrupted.body).toMatchObject({ interrupted: true });
    await resuming;
    expect(chat.status).toBe("ready");
    const resumed = await chat.log.exchanges[1]!.chunks;
    expect(resumed.slice(-2)).toEqual([
      { type: "abort", reason: "the user pressed stop" },
      { type: "finish", finishReason: "other", messageMetadata: { cancel_reason: "the user pressed stop" } },
    ]);
    expect(chat.messages).toHaveLength(2);
    expect(textOf(chat.lastMessage)).toBe("A long ");
    expect(chat.lastMessage?.metadata).toMatchObject({ cancel_reason: "the user pressed stop" });
    await expectConsistent(chat, sid, new Set([0])); // the stopped POST ends without [DONE]
  });

  it("a message queued behind a turn waiting for approval says so (a transient data-queued part), then streams its turn", async () => {
    const call = { tool_calls: [{ id: "call_0", name: "calculator", arguments: { expression: "6 * 7" } }] };
    const received: unknown[] = [];
    const { sid, chat } = await chatOn(
      [call, { text: "42." }, { text: "Next answer." }],
      { tools: ["calculator"], hitl_tools: ["calculator"] },
      { onData: (part) => received.push(part) },
    );
    await chat.sendMessage({ text: "compute" });
    const [action] = (await api("GET", `/v1/sessions/${sid}/thread`)).body.pending_actions;

    const sending = chat.sendMessage({ text: "and then?" });
    await until(() => received.length > 0, "the queued part");
    const [turnId] = (await api("GET", `/v1/sessions/${sid}/thread`)).body.queued_turns;
    expect(received).toEqual([{ type: "data-queued", id: turnId, data: { turn_id: turnId, position: 1 }, transient: true }]);

    expect((await api("POST", `/v1/sessions/${sid}/actions/${action.action_id}`, { decision: "approve" })).status).toBe(200);
    await sending;
    expect(chat.status).toBe("ready");
    const chunks = await chat.log.exchanges[1]!.chunks;
    expect(chunks.slice(0, 3).map((c) => c.type)).toEqual(["start", "data-queued", "start-step"]);
    expect(chat.lastMessage!.id).toBe(turnId);
    expect(partTypes(chat.lastMessage)).toEqual(["step-start", "text"]); // the transient part is not in the message
    expect(textOf(chat.lastMessage)).toBe("Next answer.");
    expect(chat.log.failures).toEqual([]);
  });

  it("regenerate rolls back the last turn and answers its input again: the model and the reloaded messages no longer have the old answer", async () => {
    const { sid, chat } = await chatOn([{ text: "first answer" }, { text: "second answer" }, { text: "third answer" }]);
    await chat.sendMessage({ text: "question" });
    const first = chat.lastMessage!.id;
    const user = chat.messages[0]!.id;
    await chat.regenerate();
    expect(chat.messages).toHaveLength(2);
    expect(chat.messages[0]!.id).toBe(user);
    const second = chat.lastMessage!.id;
    expect(second).not.toBe(first);
    expect(textOf(chat.lastMessage)).toBe("second answer");
    const log = await events(sid);
    expect(log.filter((e) => e.type === "turn.submitted").map((e) => e.payload.input)).toEqual(["question", "question"]);
    expect(log.find((e) => e.type === "turn.rolled_back").payload).toMatchObject({ turn_id: first, by_turn_id: second });
    const model = (await api("GET", `/v1/sessions/${sid}`)).body.agent.model.split(":")[1];
    expect((await requests(model))[1].messages).toEqual([{ role: "user", content: "question" }]);
    await expectConsistent(chat, sid);

    // The next message's model call has the regenerated answer only; the turns are those the client shows.
    await chat.sendMessage({ text: "and then?" });
    expect((await requests(model))[2].messages).toEqual([
      { role: "user", content: "question" },
      { role: "assistant", content: "second answer" },
      { role: "user", content: "and then?" },
    ]);
    const turns = (await api("GET", `/v1/sessions/${sid}`)).body.turns.map((t: any) => t.turn_id);
    expect(turns).toEqual([second, chat.lastMessage!.id]);
    await expectConsistent(chat, sid);
  });

  it("regenerate of an answer that is not the last one is refused (409 naming the turn), and nothing changes", async () => {
    const { sid, chat } = await chatOn([{ text: "one" }, { text: "two" }]);
    await chat.sendMessage({ text: "a" });
    const first = chat.lastMessage!.id;
    await chat.sendMessage({ text: "b" });
    const before = await events(sid);
    await chat.regenerate({ messageId: first });
    expect(chat.status).toBe("error");
    const res = chat.log.exchanges.at(-1)!;
    expect(res.status).toBe(409);
    expect(await events(sid)).toEqual(before);
  });

  it("a planner's plan is a reasoning part; a sub-agent's work is a data-subagent part of its call", async () => {
    const { sid, chat } = await chatOn(
      [
        { text: "1. Delegate the research." },
        { tool_calls: [{ id: "call_sub", name: "run_subtask", arguments: { title: "Research", instructions: "Find the answer." } }] },
        { text: "The child found it." },
        { text: "All done." },
      ],
      { tools: ["run_subtask"], planning_enabled: true },
    );
    await chat.sendMessage({ text: "research this" });
    const assistant = chat.lastMessage!;
    expect(assistant.parts.find((p) => p.type === "reasoning")).toMatchObject({ text: "1. Delegate the research.", state: "done" });
    expect(assistant.parts.find((p) => p.type === "dynamic-tool")).toMatchObject({
      toolName: "run_subtask",
      toolCallId: "call_sub",
      state: "output-available",
    });
    expect(assistant.parts.find((p) => p.type === "data-subagent")).toMatchObject({
      id: "call_sub",
      data: { tool_call_id: "call_sub", subagents: [{ title: "Research", depth: 1, status: "completed", text: "The child found it." }] },
    });
    expect(textOf(assistant)).toBe("All done.");
    await expectConsistent(chat, sid);
  });
});

describe("sessions for a chat id", () => {
  it("an unknown id with `agent` opens a session and names it in the start chunk; without `agent` it is a 404", async () => {
    const agent = await scriptedAgent([{ text: "new here" }, { text: "still here" }]);
    const chat = new HeadlessChat({ id: "my-chat-1", body: { agent } });
    await chat.sendMessage({ text: "hello" });
    expect(chat.status).toBe("ready");
    const sid = (chat.lastMessage!.metadata as { session_id: string }).session_id;
    expect(sid).toMatch(/^ses_/);
    expect((await chat.log.exchanges[0]!.chunks)[0]).toMatchObject({ type: "start", messageMetadata: { session_id: sid } });
    expect(textOf(chat.lastMessage)).toBe("new here");
    expect(chat.messages).toHaveLength(2);
    expect(await serverMessages(sid)).toEqual(plain(chat.messages));
    expect((await api("GET", `/v1/sessions/${sid}`)).body.metadata).toEqual({ chat_id: "my-chat-1" });

    // The chat keeps its own id: its next message, and a resume, reach the same session.
    await chat.sendMessage({ text: "again" });
    expect((chat.lastMessage!.metadata as { session_id: string }).session_id).toBe(sid);
    expect(await serverMessages(sid)).toEqual(plain(chat.messages));
    expect((await api("GET", "/v1/chat/my-chat-1/stream")).status).toBe(204);

    const orphan = new HeadlessChat({ id: "my-chat-2" });
    await orphan.sendMessage({ text: "hello" });
    expect(orphan.status).toBe("error");
    expect(orphan.log.exchanges[0]!.status).toBe(404);
    expect(JSON.parse(await orphan.log.exchanges[0]!.raw).error).toMatchObject({ code: "not_found", message: expect.stringContaining('"agent"') });

    const unknownAgent = await api("POST", "/v1/chat", { id: "my-chat-3", messages: [userMessage("hi")], trigger: "submit-message", agent: "no-such-agent" });
    expect(unknownAgent.status).toBe(404);
    expect(unknownAgent.body.error.message).toContain("no-such-agent");
  });
});

describe("chat with a browser token", () => {
  const post = async (token: string, body: unknown) => {
    const res = await SELF.fetch("https://runtime.test/v1/chat", {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    return { status: res.status, text: await res.text() };
  };
  const mint = async (body: Record<string, unknown>) => (await api("POST", "/v1/tokens", { ttl_s: 600, ...body })).body.token as string;

  it("an agent-bound token opens its subject's session for a chat id; other subjects and other sessions are refused", async () => {
    const agent = await scriptedAgent([{ text: "yours" }, { text: "yours too" }]);
    const alice = await mint({ subject: "alice", agent });
    const first = await post(alice, { id: "shared-chat", messages: [userMessage("hi")], trigger: "submit-message", agent });
    expect(first.status).toBe(200);
    const sid = /"session_id":"(ses_[0-9a-f]+)"/.exec(first.text)![1]!;
    expect((await api("GET", `/v1/sessions/${sid}`)).body).toMatchObject({ owner: "alice", metadata: { chat_id: "shared-chat" } });

    // Bob's token and the same chat id reach a session of his own, not Alice's.
    const bob = await mint({ subject: "bob", agent });
    const other = await post(bob, { id: "shared-chat", messages: [userMessage("hi")], trigger: "submit-message", agent });
    expect(other.status).toBe(200);
    expect(other.text).not.toContain(sid);
    // Naming Alice's session directly is refused; so is another agent, and a token bound to one session opens none.
    expect((await post(bob, { id: sid, messages: [userMessage("hi")], trigger: "submit-message" })).status).toBe(403);
    expect((await post(alice, { id: "c2", messages: [userMessage("hi")], trigger: "submit-message", agent: "other" })).status).toBe(403);
    const bound = await mint({ subject: "carol", session_id: sid });
    expect((await post(bound, { id: "c3", messages: [userMessage("hi")], trigger: "submit-message", agent })).status).toBe(403);
    expect((await events(sid)).filter((e) => e.type === "turn.submitted")).toHaveLength(1);
  });
});

describe("chat streams opened with a browser token", () => {
  it("end at the token's expiry with a token_expired error chunk, the POST and the resume alike; the turn runs on", async () => {
    const sid = await createSession(await scriptedAgent([{ text: "A long answer that never ends", chunk_size: 7, hang: true }]));
    const first = await shortLivedToken({ subject: "dana", session_id: sid }, 3);
    const res = await SELF.fetch("https://runtime.test/v1/chat", {
      method: "POST",
      headers: { authorization: `Bearer ${first.token}`, "content-type": "application/json" },
      body: JSON.stringify({ id: sid, messages: [userMessage("talk")], trigger: "submit-message" }),
    });
    expect(res.status).toBe(200);
    const expired = 'data: {"type":"error","errorText":"token_expired: The token has expired; ask for a new one and reconnect"}\n\ndata: [DONE]\n\n';
    const posted = await res.text();
    expect(posted).toContain('"type":"text-delta"');
    expect(posted.endsWith(expired)).toBe(true);

    const second = await shortLivedToken({ subject: "dana", session_id: sid }, 2);
    const resumed = await SELF.fetch(`https://runtime.test/v1/chat/${sid}/stream?access_token=${second.token}`);
    expect(resumed.status).toBe(200);
    expect((await resumed.text()).endsWith(expired)).toBe(true);
    expect((await api("GET", `/v1/sessions/${sid}/thread`)).body.status).toBe("running");
    await api("POST", `/v1/sessions/${sid}/interrupt`, {});
  });
});

const userMessage = (text: string, id = crypto.randomUUID()) => ({ id, role: "user", parts: [{ type: "text", text }] });

describe("bad bodies: 4xx JSON errors naming the field, and nothing changes", () => {
  it("refuses each bad body", async () => {
    const { sid, chat } = await chatOn([{ text: "ok" }]);
    await chat.sendMessage({ text: "first" });
    const before = (await events(sid)).length;
    const post = (body: unknown) => api("POST", "/v1/chat", body);
    const refused = async (body: unknown, status: number, path?: string) => {
      const res = await post(body);
      expect(res.status, JSON.stringify(res.body)).toBe(status);
      if (path) expect(res.body.error.details.map((d: { path: string }) => d.path)).toContain(path);
      return res;
    };
    await refused({}, 422, "messages");
    await refused({ id: sid, messages: [], trigger: "submit-message" }, 422, "messages");
    await refused({ id: sid, messages: [userMessage("x")], trigger: "resume" }, 422, "trigger");
    await refused({ id: sid, messages: [userMessage("   ")], trigger: "submit-message" }, 422, "messages.0.parts");
    await refused(
      { id: sid, messages: [{ id: "u", role: "user", parts: [{ type: "banana", text: "x" }] }], trigger: "submit-message" },
      422,
      "messages.0.parts.0.type",
    );
    // File parts are taken (test/session/files/turn-files.test.ts); one whose data URL is not base64 is not.
    const file = { type: "file", url: "data:text/plain,x", mediaType: "text/plain" };
    await refused({ id: sid, messages: [{ id: "u", role: "user", parts: [file] }], trigger: "submit-message" }, 422, "messages.0.parts.0.url");
    const assistantLast = { id: "a", role: "assistant", parts: [{ type: "text", text: "hi" }] };
    await refused({ id: sid, messages: [userMessage("x"), assistantLast], trigger: "submit-message" }, 422, "messages");
    await refused({ id: sid, messages: [userMessage("x".repeat(1024 * 1024))], trigger: "submit-message" }, 413);
    expect((await api("POST", "/v1/chat", "{not json")).status).toBe(400);
    const noKey = await api("POST", "/v1/chat", { id: sid, messages: [userMessage("x")], trigger: "submit-message" }, { authorization: "" });
    expect(noKey.status).toBe(401);
    // The id of an earlier message with another text is an idempotency key reused with another body.
    const reused = await refused({ id: sid, messages: [{ ...userMessage("changed"), id: chat.messages[0]!.id }], trigger: "submit-message" }, 409);
    expect(reused.body.error.code).toBe("conflict");
    expect(await events(sid)).toHaveLength(before);
  });

  it("an input over the agent's max_history_tokens is refused before a chat id opens a session", async () => {
    const agent = await scriptedAgent([{ text: "ok" }], { budget: { max_history_tokens: 50 } });
    const body = { id: `too-long-${crypto.randomUUID()}`, messages: [userMessage("x".repeat(2000))], trigger: "submit-message", agent };
    const refused = await api("POST", "/v1/chat", body);
    expect(refused.status, JSON.stringify(refused.body)).toBe(422);
    expect(refused.body.error.details[0]).toMatchObject({ path: "messages.0.parts", reason: expect.stringContaining("max_history_tokens (50)") });
    expect((await api("GET", `/v1/sessions?agent=${agent}`)).body.sessions).toEqual([]);
    // So is a file off the URL allowlist (before, the session stayed, empty, under the chat id).
    const file = { type: "file", mediaType: "text/plain", url: "http://not-allowed.example/x.txt" };
    const offList = await api("POST", "/v1/chat", { ...body, messages: [{ ...userMessage("see"), parts: [{ type: "text", text: "see" }, file] }] });
    expect(offList.status, JSON.stringify(offList.body)).toBe(422);
    expect(offList.body.error.details).toEqual([{ path: "messages.0.parts.1.url", reason: "is not under TOOL_URL_ALLOWLIST" }]);
    expect((await api("GET", `/v1/chat/${body.id}/stream`)).status).toBe(404);
    // The same chat id with a short input then opens its session, and the session's log starts there.
    const ok = await api("POST", "/v1/chat", { ...body, messages: [userMessage("hi")] });
    expect(ok.status).toBe(200);
    const [session] = (await api("GET", `/v1/sessions?agent=${agent}`)).body.sessions;
    expect((await events(session.session_id)).map((e) => e.type).slice(0, 2)).toEqual(["session.created", "turn.submitted"]);
  });

  it("resume and messages of an unknown session are 404", async () => {
    expect((await api("GET", "/v1/chat/ses_000000000000000000000000/stream")).status).toBe(404);
    expect((await api("GET", "/v1/sessions/ses_000000000000000000000000/messages")).status).toBe(404);
  });
});
