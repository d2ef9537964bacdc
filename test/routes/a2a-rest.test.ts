// A2A 1.0's HTTP+JSON binding (docs/guides/a2a.md, "HTTP+JSON") with hand-written requests: the same methods as
// the JSON-RPC endpoint at REST paths, streams whose events are the StreamResponses alone, and refusals in the
// binding's error shape (an HTTP status, google.rpc.Status with an ErrorInfo naming the A2A error) that change
// nothing and are never a 5xx. (The A2A SDK's own client drives this binding in test/node/a2a-sdk.test.ts.)
import { describe, expect, it } from "vitest";
import { userMessage } from "../support/a2a-rpc";
import { api, apiAs, createAgent } from "../support/api";

/** The events of an HTTP+JSON stream: each `id:` and the StreamResponse it carries. */
const events = (text: string | null) =>
  (text ?? "")
    .split("\n\n")
    .filter((b) => b.startsWith("id: "))
    .map((b) => {
      const [head, data] = b.split("\n");
      return { id: Number(head!.slice(4)), event: JSON.parse(data!.slice(6)) };
    });

/** The binding's error: its status, code name and the ErrorInfo's reason. */
const refused = (http: number, status: string, reason?: string) => ({
  status: http,
  body: { error: { code: http, status, details: reason ? [{ "@type": "type.googleapis.com/google.rpc.ErrorInfo", reason, domain: "a2a-protocol.org" }] : [] } },
});

describe("the HTTP+JSON binding", () => {
  it("sends, gets, lists, streams, subscribes and cancels at the binding's paths", async () => {
    await createAgent({ name: "rest-ok", model: "demo:fast" });
    const sent = await api("POST", "/a2a/rest-ok/message:send", { message: userMessage("hello") });
    expect(sent.status, JSON.stringify(sent.body)).toBe(200);
    const task = sent.body.task;
    expect(task.status.state).toBe("TASK_STATE_COMPLETED");
    expect((await api("GET", `/a2a/rest-ok/tasks/${task.id}?historyLength=0`)).body).toEqual({ ...task, history: [] });
    const listed = await api("GET", `/a2a/rest-ok/tasks?contextId=${task.contextId}&pageSize=5&includeArtifacts=false`);
    expect(listed.body).toMatchObject({ tasks: [{ id: task.id, artifacts: [] }], nextPageToken: "", pageSize: 5, totalSize: 1 });

    const streamed = await api("POST", "/a2a/rest-ok/message:stream", { message: userMessage("again", { contextId: task.contextId }) });
    expect(streamed.headers.get("content-type")).toContain("text/event-stream");
    const got = events(streamed.body);
    expect(got.map((e) => e.id)).toEqual(got.map((_, i) => i));
    // Each event is the StreamResponse itself, not a JSON-RPC response.
    expect(got[0]!.event.task.status.state).toBe("TASK_STATE_SUBMITTED");
    expect(got.at(-1)!.event.statusUpdate.status.state).toBe("TASK_STATE_COMPLETED");
    const id = got[0]!.event.task.id;
    const resumed = await api("GET", `/a2a/rest-ok/tasks/${id}:subscribe`, undefined, { "last-event-id": "1" });
    expect(events(resumed.body).map((e) => e.event)).toEqual(got.slice(2).map((e) => e.event));

    await createAgent({ name: "rest-slow", model: "demo:slow" });
    const running = (await api("POST", "/a2a/rest-slow/message:send", { message: userMessage("hi"), configuration: { returnImmediately: true } })).body.task;
    const cancelled = await api("POST", `/a2a/rest-slow/tasks/${running.id}:cancel`);
    expect(cancelled.body).toMatchObject({ id: running.id, status: { state: "TASK_STATE_CANCELED" } });
    expect(await api("POST", `/a2a/rest-slow/tasks/${running.id}:cancel`)).toMatchObject(refused(409, "FAILED_PRECONDITION", "TASK_NOT_CANCELABLE"));
    expect(await api("POST", `/a2a/rest-slow/tasks/${running.id}:subscribe`)).toMatchObject(refused(400, "FAILED_PRECONDITION", "UNSUPPORTED_OPERATION"));
  });

  it("refuses bad input with the binding's 4xx, changing nothing", async () => {
    await createAgent({ name: "rest-bad", model: "demo:fast" });
    const before = (await api("GET", "/v1/sessions?agent=rest-bad")).body.sessions.length;
    const send = (body: unknown, headers: Record<string, string> = {}) => api("POST", "/a2a/rest-bad/message:send", body, headers);
    expect(await send("{not json")).toMatchObject(refused(400, "INVALID_ARGUMENT", "INVALID_PARAMS"));
    expect(await send("[1]")).toMatchObject(refused(400, "INVALID_ARGUMENT", "INVALID_PARAMS"));
    expect(await send("hello", { "content-type": "text/plain" })).toMatchObject(refused(415, "INVALID_ARGUMENT", "CONTENT_TYPE_NOT_SUPPORTED"));
    const empty = await send({ message: { messageId: "m", role: "ROLE_USER", parts: [] } });
    expect(empty).toMatchObject(refused(400, "INVALID_ARGUMENT", "INVALID_PARAMS"));
    expect(empty.body.error.message).toMatch(/^params\.message\.parts: /);
    expect(await send({ message: userMessage("x", { role: "ROLE_AGENT" }) })).toMatchObject(refused(400, "INVALID_ARGUMENT", "INVALID_PARAMS"));
    expect(await send({ message: userMessage("x") }, { "a2a-version": "0.3" })).toMatchObject(refused(400, "FAILED_PRECONDITION", "VERSION_NOT_SUPPORTED"));
    expect(await send({})).toMatchObject(refused(400, "INVALID_ARGUMENT", "INVALID_PARAMS"));

    expect(await api("GET", "/a2a/rest-bad/tasks/task_nope")).toMatchObject(refused(404, "NOT_FOUND", "TASK_NOT_FOUND"));
    expect(await api("GET", `/a2a/rest-bad/tasks/${"t".repeat(300)}`)).toMatchObject(refused(400, "INVALID_ARGUMENT", "INVALID_PARAMS"));
    expect((await api("GET", "/a2a/rest-bad/tasks/%E0%A4%A")).status).toBeLessThan(500);
    const negative = await api("GET", "/a2a/rest-bad/tasks/task_nope?historyLength=-1");
    expect(negative).toMatchObject(refused(400, "INVALID_ARGUMENT", "INVALID_PARAMS"));
    // The reason is the value's, not the query string's type ("expected number, received string").
    expect(negative.body.error.message).toBe("params.historyLength: must be an integer at least 0, written as plain decimal digits");
    expect(JSON.parse(negative.body.error.details[0].metadata.data)).toEqual([
      { path: "params.historyLength", reason: "must be an integer at least 0, written as plain decimal digits" },
    ]);
    const flag = await api("GET", "/a2a/rest-bad/tasks?includeArtifacts=yes");
    expect(flag.body.error.message).toBe("params.includeArtifacts: must be true or false");
    expect(await send({ message: null })).toMatchObject(refused(400, "INVALID_ARGUMENT", "INVALID_PARAMS"));
    expect(await api("GET", `/a2a/rest-bad/tasks/task_${"0".repeat(48)}:subscribe`)).toMatchObject(refused(404, "NOT_FOUND", "TASK_NOT_FOUND"));
    expect(await api("POST", "/a2a/rest-bad/tasks/task_nope:cancel")).toMatchObject(refused(404, "NOT_FOUND", "TASK_NOT_FOUND"));
    for (const query of ["pageSize=0", "pageSize=many", "status=DONE", "statusTimestampAfter=yesterday", "pageToken=nothing-we-gave"]) {
      expect(await api("GET", `/a2a/rest-bad/tasks?${query}`), query).toMatchObject(refused(400, "INVALID_ARGUMENT", "INVALID_PARAMS"));
    }
    expect(await api("GET", "/a2a/rest-bad/tasks/task_nope/pushNotificationConfigs")).toMatchObject(refused(404, "NOT_FOUND", "TASK_NOT_FOUND"));
    const config = await api("POST", "/a2a/rest-bad/tasks/task_nope/pushNotificationConfigs", { url: "https://example.com/hook" });
    expect(config).toMatchObject(refused(404, "NOT_FOUND", "TASK_NOT_FOUND"));
    expect(await api("GET", "/a2a/nobody/tasks")).toMatchObject(refused(404, "NOT_FOUND"));
    expect(await api("GET", "/a2a/rest-bad/extendedAgentCard")).toMatchObject(refused(400, "FAILED_PRECONDITION", "EXTENDED_AGENT_CARD_NOT_CONFIGURED"));
    expect((await api("GET", "/v1/sessions?agent=rest-bad")).body.sessions.length).toBe(before);
  });

  it("a message on a task that ended, or a push config off the allowlist, is refused; the caller's own refusals stay the runtime's", async () => {
    await createAgent({ name: "rest-ended", model: "demo:fast" });
    const task = (await api("POST", "/a2a/rest-ended/message:send", { message: userMessage("hi") })).body.task;
    const more = await api("POST", "/a2a/rest-ended/message:send", { message: userMessage("more", { taskId: task.id }) });
    expect(more).toMatchObject(refused(400, "FAILED_PRECONDITION", "UNSUPPORTED_OPERATION"));
    const off = await api("POST", `/a2a/rest-ended/tasks/${task.id}/pushNotificationConfigs`, { url: "https://elsewhere.example/hook" });
    expect(off).toMatchObject(refused(400, "INVALID_ARGUMENT", "INVALID_PARAMS"));
    expect(await api("GET", `/a2a/rest-ended/tasks/${task.id}/pushNotificationConfigs/nope`)).toMatchObject({ status: 404 });
    expect((await api("GET", `/a2a/rest-ended/tasks/${task.id}/pushNotificationConfigs`)).body).toEqual({ configs: [], nextPageToken: "" });
    expect(await apiAs("GET", `/a2a/rest-ended/tasks/${task.id}`, "wrong")).toMatchObject({ status: 401, body: { error: { code: "unauthorized" } } });
    const read = await apiAs("POST", "/a2a/rest-ended/message:send", "read-key", { message: userMessage("x") });
    expect(read).toMatchObject({ status: 403, body: { error: { code: "forbidden" } } });
    expect((await apiAs("GET", `/a2a/rest-ended/tasks/${task.id}`, "read-key")).body.id).toBe(task.id);
  });
});
