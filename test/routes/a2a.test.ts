// A2A 1.0 (docs/guides/a2a.md) through its public surface, with hand-written JSON-RPC over fetch as an A2A
// client sends it: the Agent Card, SendMessage, SendStreamingMessage and SubscribeToTask resumed after
// Last-Event-ID, GetTask, ListTasks, CancelTask, input-required answered by the next message, and refusals as
// JSON-RPC error objects that change nothing.
import { describe, expect, it } from "vitest";
import { lastId, rpc, sse, state, userMessage } from "../support/a2a-rpc";
import { api, apiAs, createAgent, events } from "../support/api";
import { until } from "../support/chat-client";
import { baseURL, gateURL, releaseGate, script, toolURL, uniqueId, waitForGate } from "../support/fake-model";

describe("the Agent Card", () => {
  it("names the JSON-RPC and HTTP+JSON interfaces, the bearer scheme and the agent's tools as skills", async () => {
    await createAgent({ name: "a2a-card", model: "demo:fast", tools: ["calculator"], instructions: "Helps with sums.\nMore." });
    const res = await api("GET", "/a2a/a2a-card/.well-known/agent-card.json");
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({
      name: "a2a-card",
      description: "Helps with sums.",
      supportedInterfaces: [
        { url: "https://runtime.test/a2a/a2a-card", protocolBinding: "JSONRPC", protocolVersion: "1.0" },
        { url: "https://runtime.test/a2a/a2a-card", protocolBinding: "HTTP+JSON", protocolVersion: "1.0" },
      ],
      capabilities: { streaming: true },
      securitySchemes: { bearer: { httpAuthSecurityScheme: { scheme: "Bearer" } } },
    });
    expect(res.body.skills.map((s: any) => s.id)).toEqual(["converse", "tool:calculator"]);
    expect((await api("GET", "/a2a/nobody/.well-known/agent-card.json")).status).toBe(404);
    expect((await apiAs("GET", "/a2a/a2a-card/.well-known/agent-card.json", "wrong")).status).toBe(401);
  });
});

describe("SendMessage", () => {
  it("runs a turn and answers the completed task; the next message with its contextId continues the session", async () => {
    await createAgent({ name: "a2a-send", model: "demo:fast", tools: ["calculator"] });
    const res = await rpc("a2a-send", "SendMessage", { message: userMessage("what is 6 * 7?") });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ jsonrpc: "2.0", id: lastId() });
    const task = res.body.result.task;
    expect(task).toMatchObject({ status: { state: "TASK_STATE_COMPLETED" }, contextId: expect.stringMatching(/^ses_/) });
    expect(task.id).toMatch(/^task_[0-9a-f]{48}$/);
    expect(task.artifacts.map((a: any) => a.parts[0].text).join("")).toBe("The answer is 42.");
    expect(task.history[0]).toMatchObject({ role: "ROLE_USER", parts: [{ text: "what is 6 * 7?" }] });
    // Opened on the agent's current version, as any new session is.
    expect((await api("GET", `/v1/sessions/${task.contextId}`)).body.agent_version).toBe(1);
    const got = await rpc("a2a-send", "GetTask", { id: task.id });
    expect(got.body.result).toEqual(task);
    expect((await rpc("a2a-send", "GetTask", { id: task.id, historyLength: 0 })).body.result.history).toEqual([]);

    const second = await rpc("a2a-send", "SendMessage", { message: userMessage("hello", { contextId: task.contextId }) });
    expect(second.body.result.task).toMatchObject({ contextId: task.contextId, status: { state: "TASK_STATE_COMPLETED" } });
    const listed = await rpc("a2a-send", "ListTasks", { contextId: task.contextId, includeArtifacts: true });
    expect(listed.body.result).toMatchObject({ totalSize: 2, nextPageToken: "" });
    expect(listed.body.result.tasks.map((t: any) => t.id)).toEqual([second.body.result.task.id, task.id]);
    const paged = await rpc("a2a-send", "ListTasks", { contextId: task.contextId, pageSize: 1 });
    expect(paged.body.result.tasks).toHaveLength(1);
    const rest = await rpc("a2a-send", "ListTasks", { contextId: task.contextId, pageSize: 1, pageToken: paged.body.result.nextPageToken });
    expect(rest.body.result.tasks.map((t: any) => t.id)).toEqual([task.id]);

    // Message ids are the same at every read and repeat in no other context (a client may key messages by them).
    const other = (await rpc("a2a-send", "SendMessage", { message: userMessage("what is 6 * 7?") })).body.result.task;
    const ids = (t: any) => [...t.history.map((m: any) => m.messageId), t.status.message?.messageId].filter(Boolean);
    expect(ids(task)).toEqual(ids(got.body.result));
    expect(ids(task).length).toBeGreaterThan(0);
    expect(ids(other).filter((id: string) => ids(task).includes(id))).toEqual([]);
    expect(new Set([...ids(task), ...ids(second.body.result.task)]).size).toBe(ids(task).length + ids(second.body.result.task).length);
  });

  it("a contextId of the client's own opens a session, and the same contextId finds it again", async () => {
    await createAgent({ name: "a2a-ctx", model: "demo:fast" });
    const first = (await rpc("a2a-ctx", "SendMessage", { message: userMessage("hi", { contextId: "client-context-1" }) })).body.result.task;
    const second = (await rpc("a2a-ctx", "SendMessage", { message: userMessage("again", { contextId: "client-context-1" }) })).body.result.task;
    expect(second.contextId).toBe(first.contextId);
    expect((await api("GET", `/v1/sessions/${first.contextId}`)).body.turn_count).toBe(2);
    // ListTasks finds it by the client's contextId too.
    const listed = (await rpc("a2a-ctx", "ListTasks", { contextId: "client-context-1" })).body.result;
    expect(listed.tasks.map((t: any) => t.id)).toEqual([second.id, first.id]);
  });

  it("returnImmediately answers the task at once; CancelTask cancels it, and a second cancel is TaskNotCancelable", async () => {
    await createAgent({ name: "a2a-cancel", model: "demo:slow" });
    const res = await rpc("a2a-cancel", "SendMessage", { message: userMessage("hello"), configuration: { returnImmediately: true } });
    const task = res.body.result.task;
    expect(["TASK_STATE_SUBMITTED", "TASK_STATE_WORKING"]).toContain(task.status.state);
    const cancelled = await rpc("a2a-cancel", "CancelTask", { id: task.id });
    expect(cancelled.body.result).toMatchObject({ id: task.id, status: { state: "TASK_STATE_CANCELED" } });
    const again = await rpc("a2a-cancel", "CancelTask", { id: task.id });
    expect(again.body).toMatchObject({ error: { code: -32002 } });
    expect((await rpc("a2a-cancel", "SubscribeToTask", { id: task.id })).body).toMatchObject({ error: { code: -32004 } });
  });
});

describe("SendStreamingMessage", () => {
  it("streams the task, its status updates and the answer as artifact chunks; resumed after any event, exactly the rest", async () => {
    await createAgent({ name: "a2a-stream", model: "demo:fast" });
    const res = await rpc("a2a-stream", "SendStreamingMessage", { message: userMessage("hello") });
    expect(res.headers.get("content-type")).toContain("text/event-stream");
    const got = sse(res.body);
    expect(got.map((e) => e.id)).toEqual(got.map((_, i) => i));
    expect(got.every((e) => e.rpcId === lastId())).toBe(true);
    expect(state(got[0]!)).toBe("TASK_STATE_SUBMITTED");
    expect(state(got.at(-1)!)).toBe("TASK_STATE_COMPLETED");
    const text = got.flatMap((e) => (e.result.artifactUpdate ? [e.result.artifactUpdate.artifact.parts[0].text] : [])).join("");
    expect(text).toMatch(/^You said: "hello"/);
    const id = got[0]!.result.task.id;
    // A dropped connection resubscribes with the last id it read: nothing lost, nothing repeated.
    for (const n of [0, 2, got.length - 2]) {
      const resumed = await rpc("a2a-stream", "SubscribeToTask", { id }, { "last-event-id": String(n) });
      expect(sse(resumed.body).map((e) => e.result)).toEqual(got.slice(n + 1).map((e) => e.result));
    }
    const past = await rpc("a2a-stream", "SubscribeToTask", { id }, { "last-event-id": String(got.length) });
    expect(past.body).toMatchObject({ error: { code: -32602 } });
  });

  it("SubscribeToTask to a running task begins with the task as it is, then what follows, to the end", async () => {
    await createAgent({ name: "a2a-sub", model: "demo:slow" });
    const task = (await rpc("a2a-sub", "SendMessage", { message: userMessage("hello"), configuration: { returnImmediately: true } })).body.result.task;
    const sub = sse((await rpc("a2a-sub", "SubscribeToTask", { id: task.id })).body);
    expect(sub[0]!.result.task.id).toBe(task.id);
    expect(state(sub.at(-1)!)).toBe("TASK_STATE_COMPLETED");
    const full = sse((await rpc("a2a-sub", "SubscribeToTask", { id: task.id }, { "last-event-id": "-1" })).body);
    // After the snapshot, the same events as the whole stream from that point.
    const plain = (list: typeof sub) => list.map(({ id, result }) => ({ id, result }));
    expect(plain(sub.slice(1))).toEqual(plain(full.slice(sub[0]!.id + 1)));
  });
});

describe("input-required", () => {
  it("an approval pauses the task; the next message on the task approves it and the task completes", async () => {
    await createAgent({ name: "a2a-careful", model: "demo:fast", tools: ["calculator"], hitl_tools: ["calculator"] });
    const res = await rpc("a2a-careful", "SendMessage", { message: userMessage("what is 6 * 7?") });
    const task = res.body.result.task;
    expect(task.status.state).toBe("TASK_STATE_INPUT_REQUIRED");
    expect(task.status.message.parts[1].data.actions[0]).toMatchObject({ kind: "tool_approval", tool_name: "calculator" });
    const bad = await rpc("a2a-careful", "SendMessage", { message: userMessage("maybe", { taskId: task.id }) });
    expect(bad.body).toMatchObject({ error: { code: -32602 } });
    const done = await rpc("a2a-careful", "SendMessage", { message: userMessage("approve", { taskId: task.id }) });
    expect(done.body.result.task).toMatchObject({ id: task.id, status: { state: "TASK_STATE_COMPLETED" } });
    expect(done.body.result.task.artifacts.at(-1).parts[0].text).toBe("The answer is 42.");
    const late = await rpc("a2a-careful", "SendMessage", { message: userMessage("approve", { taskId: task.id }) });
    expect(late.body).toMatchObject({ error: { code: -32004 } });
  });

  it("a question pauses the streamed task; the answer, streamed, continues it to the end", async () => {
    await createAgent({ name: "a2a-asker", model: "demo:fast", tools: ["ask_user"] });
    const first = sse((await rpc("a2a-asker", "SendStreamingMessage", { message: userMessage("ask me what colour?") })).body);
    expect(state(first.at(-1)!)).toBe("TASK_STATE_INPUT_REQUIRED");
    const id = first[0]!.result.task.id;
    const second = sse((await rpc("a2a-asker", "SendStreamingMessage", { message: userMessage("blue", { taskId: id }) })).body);
    expect(second[0]!.result.task.id).toBe(id);
    expect(state(second.at(-1)!)).toBe("TASK_STATE_COMPLETED");
    const task = (await rpc("a2a-asker", "GetTask", { id })).body.result;
    expect(task.artifacts.at(-1).parts[0].text).toBe("You answered: blue");
  });
});

describe("files tools return", () => {
  it("are artifacts of the task with a file part naming the session file, in the task and its stream", async () => {
    const id = uniqueId("a2a-files");
    const files = [{ data: btoa("a,b\n1,2\n"), media_type: "text/csv", filename: "table.csv" }];
    await script(id, [{ tool_calls: [{ name: "make_files", arguments: { files } }] }, { text: "Here is the table." }, { text: "A table." }]);
    await createAgent({ name: "a2a-files", model: `openai-compatible:${id}`, http_tools: [{ name: "make_files", url: toolURL("files") }] });
    const res = await rpc("a2a-files", "SendStreamingMessage", { message: userMessage("make a table") });
    const got = sse(res.body);
    const updates = got.flatMap((e) => (e.result.artifactUpdate ? [e.result.artifactUpdate] : []));
    const file = updates.find((u) => u.artifact.artifactId.startsWith("file-"));
    const taskId = got[0]!.result.task.id;
    const contextId = got[0]!.result.task.contextId;
    expect(file).toMatchObject({ taskId, append: false, lastChunk: true, artifact: { name: "table.csv" } });
    const [part] = file.artifact.parts;
    // An absolute URL, under the origin the request reached the runtime at.
    const url = new RegExp(`^https://runtime\\.test/v1/sessions/${contextId}/files/file_`);
    expect(part).toEqual({ url: expect.stringMatching(url), mediaType: "text/csv", filename: "table.csv" });
    expect((await api("GET", new URL(part.url).pathname)).body).toBe("a,b\n1,2\n");
    const task = (await rpc("a2a-files", "GetTask", { id: taskId })).body.result;
    expect(task.status.state).toBe("TASK_STATE_COMPLETED");
    expect(task.artifacts.map((a: any) => a.name)).toEqual(["table.csv", "answer"]);
    expect(task.artifacts[0]).toEqual(file.artifact);
    const listed = (await rpc("a2a-files", "ListTasks", { includeArtifacts: true })).body.result.tasks;
    expect(listed.find((t: any) => t.id === taskId).artifacts[0]).toEqual(file.artifact);

    // A file the user sent is a file part of the task's history with its absolute URL too.
    const sent = [{ text: "what is this?" }, { raw: btoa("x,y\n"), mediaType: "text/csv", filename: "mine.csv" }];
    const asked = await rpc("a2a-files", "SendMessage", { message: { ...userMessage("x"), parts: sent, contextId } });
    const filePart = asked.body.result.task.history[0].parts.find((p: any) => p.url);
    expect(filePart).toMatchObject({ url: expect.stringMatching(url), mediaType: "text/csv", filename: "mine.csv" });
  });
});

describe("ListTasks without contextId", () => {
  it("lists the tasks of every session of the agent the caller reaches, the most recently updated first, paged and filtered by status", async () => {
    await createAgent({ name: "a2a-list-all", model: "demo:fast" });
    const first = (await rpc("a2a-list-all", "SendMessage", { message: userMessage("one") })).body.result.task;
    const third = (await rpc("a2a-list-all", "SendMessage", { message: userMessage("three") })).body.result.task;
    // The older session's second task is the newest: it comes first, though its session was opened first.
    const second = (await rpc("a2a-list-all", "SendMessage", { message: userMessage("two", { contextId: first.contextId }) })).body.result.task;
    await createAgent({ name: "a2a-list-other", model: "demo:fast" });
    await rpc("a2a-list-other", "SendMessage", { message: userMessage("elsewhere") });
    /** The index is written within a second of a session's change. */
    const indexed = (turns: number) =>
      until(async () => {
        const rows = (await api("GET", "/v1/sessions?agent=a2a-list-all")).body.sessions;
        return rows.length === 2 && rows.every((r: any) => r.turns > 0) && rows.reduce((n: number, r: any) => n + r.turns, 0) === turns;
      }, "the index lists both sessions");
    await indexed(3);
    const all = (await rpc("a2a-list-all", "ListTasks", {})).body.result;
    expect(all).toMatchObject({ nextPageToken: "", pageSize: 20, totalSize: 3 });
    expect(all.tasks.map((t: any) => t.id)).toEqual([second.id, third.id, first.id]);
    const times = all.tasks.map((t: any) => Date.parse(t.status.timestamp));
    expect(times).toEqual([...times].sort((a, b) => b - a));
    expect(all.tasks.every((t: any) => t.artifacts.length === 0)).toBe(true);

    const page1 = (await rpc("a2a-list-all", "ListTasks", { pageSize: 2 })).body.result;
    expect(page1.tasks.map((t: any) => t.id)).toEqual([second.id, third.id]);
    // A task updated between pages moves ahead of the token: the next page neither repeats nor skips one.
    const fourth = (await rpc("a2a-list-all", "SendMessage", { message: userMessage("four", { contextId: third.contextId }) })).body.result.task;
    await indexed(4);
    const page2 = (await rpc("a2a-list-all", "ListTasks", { pageSize: 2, pageToken: page1.nextPageToken })).body.result;
    expect(page2).toMatchObject({ nextPageToken: "", tasks: [{ id: first.id }] });
    expect((await rpc("a2a-list-all", "ListTasks", { pageSize: 1 })).body.result.tasks.map((t: any) => t.id)).toEqual([fourth.id]);
    expect((await rpc("a2a-list-all", "ListTasks", { status: "TASK_STATE_FAILED" })).body.result.tasks).toEqual([]);
    expect((await rpc("a2a-list-all", "ListTasks", { status: "TASK_STATE_COMPLETED" })).body.result.tasks).toHaveLength(4);
    expect((await rpc("a2a-list-all", "ListTasks", { pageToken: "nope" })).body.error.code).toBe(-32602);

    // A token bound to one session sees that session's tasks only.
    const token = (await api("POST", "/v1/tokens", { subject: "lister", session_id: first.contextId, ttl_s: 600 })).body.token;
    const scoped = await apiAs("POST", "/a2a/a2a-list-all", token, { jsonrpc: "2.0", id: 1, method: "ListTasks", params: {} });
    expect(scoped.body.result).toMatchObject({ totalSize: 2, nextPageToken: "" });
    expect(scoped.body.result.tasks.map((t: any) => t.id)).toEqual([second.id, first.id]);
  });
});

describe("refusals", () => {
  it("malformed JSON-RPC, unknown methods and versions, bad params and unknown tasks are JSON-RPC errors that change nothing", async () => {
    await createAgent({ name: "a2a-bad", model: "demo:fast" });
    const before = (await api("GET", "/v1/sessions?agent=a2a-bad")).body.sessions.length;
    const raw = await api("POST", "/a2a/a2a-bad", "{not json");
    expect(raw).toMatchObject({ status: 200, body: { jsonrpc: "2.0", id: null, error: { code: -32700 } } });
    expect((await api("POST", "/a2a/a2a-bad", { id: 1, method: "GetTask" })).body).toMatchObject({ id: 1, error: { code: -32600 } });
    expect((await rpc("a2a-bad", "message/send", {})).body).toMatchObject({ error: { code: -32601 } });
    // A name every object has is no method either: "constructor" used to answer the call itself, secrets and all.
    for (const method of ["constructor", "toString", "__proto__", "hasOwnProperty", "valueOf"]) {
      const res = await rpc("a2a-bad", method, {});
      expect(res.body, method).toEqual({ jsonrpc: "2.0", id: lastId(), error: { code: -32601, message: expect.stringContaining(`no method '${method}'`) } });
    }
    expect((await rpc("a2a-bad", "GetTask", { id: "t" }, { "a2a-version": "0.3" })).body).toMatchObject({ error: { code: -32009 } });
    expect((await rpc("a2a-bad", "SendMessage", { message: { role: "ROLE_USER", parts: [] } })).body).toMatchObject({ error: { code: -32602 } });
    // A message of blanks only says nothing: no task, no session.
    for (const parts of [[{ text: "  " }], [{ text: "" }, { text: "\n" }]]) {
      const blank = await rpc("a2a-bad", "SendMessage", { message: { messageId: uniqueId("m"), role: "ROLE_USER", parts } });
      expect(blank.body.error).toMatchObject({ code: -32602, data: [{ path: "params.message.parts", reason: "must have some text or a file" }] });
    }
    // Every refusal of params names the field from params, in its message and its data.
    const rawOnly = await rpc("a2a-bad", "SendMessage", { message: { messageId: "m-raw", role: "ROLE_USER", parts: [{ raw: "AAAA" }] } });
    expect(rawOnly.body.error).toEqual({
      code: -32602,
      message: "params.message.parts.0.mediaType: is required with raw",
      data: [{ path: "params.message.parts.0.mediaType", reason: "is required with raw" }],
    });
    expect((await rpc("a2a-bad", "SendMessage", { message: userMessage("x", { role: "ROLE_AGENT" }) })).body).toMatchObject({ error: { code: -32602 } });
    expect((await rpc("a2a-bad", "GetTask", { id: "task_nope" })).body).toMatchObject({ error: { code: -32001 } });
    expect((await rpc("a2a-bad", "GetTask", { id: `task_${"0".repeat(48)}` })).body).toMatchObject({ error: { code: -32001 } });
    expect((await rpc("a2a-bad", "CreateTaskPushNotificationConfig", { taskId: "x", url: "https://x" })).body).toMatchObject({ error: { code: -32001 } });
    expect((await rpc("a2a-bad", "ListTasks", { pageSize: 0 })).body).toMatchObject({ error: { code: -32602 } });
    expect((await rpc("a2a-bad", "ListTasks", { statusTimestampAfter: "yesterday" })).body).toMatchObject({ error: { code: -32602 } });
    expect((await rpc("a2a-bad", "GetExtendedAgentCard", {})).body).toMatchObject({ error: { code: -32007 } });
    expect((await api("GET", "/v1/sessions?agent=a2a-bad")).body.sessions.length).toBe(before);
  });

  it("a file part refused is named as the message has it (params.message.parts.<i>.raw or .url)", async () => {
    await createAgent({ name: "a2a-bad-file", model: "demo:fast" });
    const sessions = async () => (await api("GET", "/v1/sessions?agent=a2a-bad-file")).body.sessions;
    const send = (part: Record<string, unknown>) =>
      rpc("a2a-bad-file", "SendMessage", { message: { messageId: uniqueId("m"), role: "ROLE_USER", parts: [{ text: "see" }, part] } });
    const raw = (await send({ raw: "!!!", mediaType: "image/png" })).body.error;
    expect(raw).toMatchObject({ code: -32602, data: [{ path: "params.message.parts.1.raw", reason: "is not valid base64" }] });
    expect(raw.message).toBe("Validation failed: params.message.parts.1.raw: is not valid base64");
    const url = (await send({ url: "http://not-allowed.example/x.png" })).body.error;
    expect(url).toMatchObject({ code: -32602, data: [{ path: "params.message.parts.1.url", reason: "is not under TOOL_URL_ALLOWLIST" }] });
    // The sessions the refused messages opened are gone: once a later message's session is listed (the index is
    // written off the request's path), it is the only one.
    const ok = (await rpc("a2a-bad-file", "SendMessage", { message: userMessage("hello") })).body.result.task;
    await until(async () => (await sessions()).length > 0, "a session listed");
    expect((await sessions()).map((s: any) => s.session_id)).toEqual([ok.contextId]);
  });

  it("a refused first message with the client's own contextId leaves nothing: the context is new again for the next message", async () => {
    await createAgent({ name: "a2a-bad-ctx", model: "demo:fast" });
    const sessions = async () => ((await api("GET", "/v1/sessions?agent=a2a-bad-ctx")).body.sessions as any[]).map((s) => s.session_id).sort();
    const badFile = { url: "http://not-allowed.example/x.png" };
    const refused = await rpc("a2a-bad-ctx", "SendMessage", {
      message: { messageId: uniqueId("m"), role: "ROLE_USER", parts: [{ text: "see" }, badFile], contextId: "ctx-refused" },
    });
    expect(refused.body.error).toMatchObject({ code: -32602, data: [{ path: "params.message.parts.1.url" }] });
    // Once another context's session is listed (the index is written off the request's path), it is the only one.
    const other = (await rpc("a2a-bad-ctx", "SendMessage", { message: userMessage("hello", { contextId: "ctx-other" }) })).body.result.task;
    await until(async () => (await sessions()).length > 0, "a session listed");
    expect(await sessions()).toEqual([other.contextId]);
    expect((await rpc("a2a-bad-ctx", "ListTasks", {})).body.result.tasks.map((t: any) => t.id)).toEqual([other.id]);
    expect((await rpc("a2a-bad-ctx", "ListTasks", { contextId: "ctx-refused" })).body.result).toMatchObject({ tasks: [], totalSize: 0 });
    // The same contextId then opens a session as a new context does, listed like any other.
    const later = (await rpc("a2a-bad-ctx", "SendMessage", { message: userMessage("hi", { contextId: "ctx-refused" }) })).body.result.task;
    expect(later.status.state).toBe("TASK_STATE_COMPLETED");
    expect((await api("GET", `/v1/sessions/${later.contextId}`)).body.turn_count).toBe(1);
    await until(async () => (await sessions()).length === 2, "the later context listed");
    expect(await sessions()).toEqual([other.contextId, later.contextId].sort());
    const again = (await rpc("a2a-bad-ctx", "SendMessage", { message: userMessage("again", { contextId: "ctx-refused" }) })).body.result.task;
    expect(again.contextId).toBe(later.contextId);
    expect((await rpc("a2a-bad-ctx", "ListTasks", { contextId: "ctx-refused" })).body.result.tasks.map((t: any) => t.id)).toEqual([again.id, later.id]);
    // A context whose session was erased by hand is new again too (it used to fail on the erased session).
    expect((await api("DELETE", `/v1/sessions/${later.contextId}`)).status).toBe(204);
    const renewed = (await rpc("a2a-bad-ctx", "SendMessage", { message: userMessage("anew", { contextId: "ctx-refused" }) })).body.result.task;
    expect(renewed).toMatchObject({ status: { state: "TASK_STATE_COMPLETED" }, history: [{ parts: [{ text: "anew" }] }] });
    expect(renewed.contextId).not.toBe(later.contextId);
  });

  it("first messages of one new contextId at once: both go to the one session; a refused one erases none another reached", async () => {
    await createAgent({ name: "a2a-ctx-race", model: "demo:fast" });
    const both = await Promise.all(["one", "two"].map((text) => rpc("a2a-ctx-race", "SendMessage", { message: userMessage(text, { contextId: "ctx-race" }) })));
    const tasks = both.map((r) => r.body.result?.task);
    expect(tasks.map((t) => t?.status.state)).toEqual(["TASK_STATE_COMPLETED", "TASK_STATE_COMPLETED"]);
    expect(tasks[1].contextId).toBe(tasks[0].contextId);
    expect((await api("GET", `/v1/sessions/${tasks[0].contextId}`)).body.turn_count).toBe(2);

    // A first message whose file is held at its fetch opens the session; another message reaches it meanwhile.
    const gate = uniqueId("a2a-ctx-held");
    const held = rpc("a2a-ctx-race", "SendMessage", {
      message: {
        messageId: uniqueId("m"),
        role: "ROLE_USER",
        parts: [{ text: "see" }, { url: gateURL(gate), mediaType: "application/pdf" }],
        contextId: "ctx-held",
      },
    });
    await waitForGate(gate, (g) => g.held === 1, "the file was never fetched");
    const reached = (await rpc("a2a-ctx-race", "SendMessage", { message: userMessage("hello", { contextId: "ctx-held" }) })).body.result.task;
    expect(reached.status.state).toBe("TASK_STATE_COMPLETED");
    // The held file is no PDF: its message is refused, and the session the other message's turn is in stays.
    await releaseGate(gate, { not: "a pdf" });
    expect((await held).body.error.data).toEqual([
      { path: "params.message.parts.1", reason: "does not look like application/pdf (its first bytes do not match)" },
    ]);
    expect((await api("GET", `/v1/sessions/${reached.contextId}`)).body.turn_count).toBe(1);

    // Nor one another message is still being submitted to (its own file held at its fetch) when the refusal comes.
    const [first, second] = [uniqueId("a2a-ctx-first"), uniqueId("a2a-ctx-second")];
    const withFile = (url: string, mediaType: string) =>
      rpc("a2a-ctx-race", "SendMessage", {
        message: { messageId: uniqueId("m"), role: "ROLE_USER", parts: [{ text: "see" }, { url, mediaType }], contextId: "ctx-in-flight" },
      });
    const refusedLater = withFile(gateURL(first), "application/pdf");
    await waitForGate(first, (g) => g.held === 1, "the first file was never fetched");
    const inFlight = withFile(gateURL(second), "text/plain");
    await waitForGate(second, (g) => g.held === 1, "the second file was never fetched");
    await releaseGate(first, { not: "a pdf" });
    expect((await refusedLater).body.error.data).toMatchObject([{ path: "params.message.parts.1" }]);
    await releaseGate(second, { notes: "some" });
    const task = (await inFlight).body.result?.task;
    expect(task?.status.state).toBe("TASK_STATE_COMPLETED");
    expect((await api("GET", `/v1/sessions/${task.contextId}`)).body.turn_count).toBe(1);
  });

  it("a client contextId whose sessions were all erased is refused naming the field each method reads it from", async () => {
    await createAgent({ name: "a2a-worn-ctx", model: "demo:fast" });
    const send = (url: string) =>
      rpc("a2a-worn-ctx", "SendMessage", {
        message: { messageId: uniqueId("m"), role: "ROLE_USER", parts: [{ text: "see" }, { url, mediaType: "text/plain" }], contextId: "ctx-worn" },
      });
    // A refusal that needs no fetch comes before the session is opened: it opens and erases nothing.
    for (let i = 0; i < 25; i++)
      expect((await send("http://not-allowed.example/x.png")).body.error.data).toMatchObject([{ path: "params.message.parts.1.url" }]);
    // One only the fetch tells erases the session it opened; the twentieth uses the last id the context may take.
    for (let i = 0; i < 20; i++) {
      expect((await send(`${baseURL}/_files/missing`)).body.error.data).toEqual([
        { path: "params.message.parts.1.url", reason: "could not be fetched (HTTP 404)" },
      ]);
    }
    const reason = "20 sessions of this context were erased; send another contextId";
    const sent = await rpc("a2a-worn-ctx", "SendMessage", { message: userMessage("hi", { contextId: "ctx-worn" }) });
    expect(sent.body.error).toMatchObject({
      code: -32602,
      message: `params.message.contextId: ${reason}`,
      data: [{ path: "params.message.contextId", reason }],
    });
    const listed = await rpc("a2a-worn-ctx", "ListTasks", { contextId: "ctx-worn" });
    expect(listed.body.error).toMatchObject({ code: -32602, message: `params.contextId: ${reason}`, data: [{ path: "params.contextId", reason }] });
  });

  it("a task of another agent is not found through this agent; a read key cannot send", async () => {
    await createAgent({ name: "a2a-one", model: "demo:fast" });
    await createAgent({ name: "a2a-two", model: "demo:fast" });
    const task = (await rpc("a2a-one", "SendMessage", { message: userMessage("hi") })).body.result.task;
    expect((await rpc("a2a-two", "GetTask", { id: task.id })).body).toMatchObject({ error: { code: -32001 } });
    const read = await apiAs("POST", "/a2a/a2a-one", "read-key", { jsonrpc: "2.0", id: 1, method: "SendMessage", params: { message: userMessage("x") } });
    expect(read.status).toBe(403);
    const readGet = await apiAs("POST", "/a2a/a2a-one", "read-key", { jsonrpc: "2.0", id: 1, method: "GetTask", params: { id: task.id } });
    expect(readGet.body.result.id).toBe(task.id);
    expect((await events(task.contextId)).filter((e) => e.type === "turn.submitted")).toHaveLength(1);
  });
});

describe("a2a_agents in an agent's config", () => {
  it("keeps header values write-only, takes its placeholder back as the stored value, and refuses a URL off the allowlist or a clashing name", async () => {
    const entry = { name: "helper", url: `${new URL(baseURL).origin}/a2a/other`, headers: { authorization: "Bearer remote-secret" } };
    const put = await api("PUT", "/v1/agents/a2a-caller", { model: "demo:fast", a2a_agents: [entry] });
    expect(put.status, JSON.stringify(put.body)).toBe(201);
    const read = await api("GET", "/v1/agents/a2a-caller");
    expect(read.body.a2a_agents).toEqual([expect.objectContaining({ name: "helper", headers: { authorization: "[redacted]" } })]);
    expect(JSON.stringify(read.body)).not.toContain("remote-secret");
    expect((await api("PUT", "/v1/agents/a2a-caller", read.body)).status).toBe(200);
    const tools = await api("POST", "/v1/sessions", { agent: "a2a-caller" });
    const listed = await api("GET", `/v1/sessions/${tools.body.session_id}/tools`);
    expect(JSON.stringify(listed.body)).toContain('"helper"');
    const offList = await api("PUT", "/v1/agents/a2a-caller", { model: "demo:fast", a2a_agents: [{ ...entry, url: "https://elsewhere.example/a2a" }] });
    expect(offList.status).toBe(422);
    expect(JSON.stringify(offList.body)).toContain("a2a_agents.0.url");
    const clash = await api("PUT", "/v1/agents/a2a-caller", { model: "demo:fast", a2a_agents: [{ ...entry, name: "calculator" }] });
    expect(JSON.stringify(clash.body)).toContain("a2a_agents.0.name");
  });
});
