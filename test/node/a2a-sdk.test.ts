// The runtime's A2A 1.0 server driven only by the A2A project's own client, @a2a-js/sdk, as another agent would
// reach it: the Agent Card fetched through ClientFactory.createFromUrl (the API key given by the SDK's
// authenticating fetch), then send, stream, a stream dropped mid-answer and subscribed to again, a task waiting
// for an approval answered by the next message, cancel and list, over JSON-RPC and over HTTP+JSON. The runtime
// is a whole process (Miniflare on a state directory) on the offline demo model.
import { mkdtempSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type ListTasksRequest, type Message, type Part, Role, type StreamResponse, type Task, TaskState } from "@a2a-js/sdk";
import {
  type Client,
  ClientFactory,
  createAuthenticatingFetchWithRetry,
  DefaultAgentCardResolver,
  JsonRpcTransportFactory,
  RestTransportFactory,
} from "@a2a-js/sdk/client";
import { ExtendedAgentCardNotConfiguredError, TaskNotCancelableError, TaskNotFoundError } from "@a2a-js/sdk/errors";
import type { Miniflare } from "miniflare";
import { afterAll, beforeAll, describe, it } from "vitest";
import { callRuntime, runtimeProcess, until, workerBundle } from "./support/runtime-process";

const KEY = "a2a-sdk-key";
const bundle = workerBundle();
let state: string;
let mf: Miniflare;
let base: string;
/** A local receiver of push notifications: the bodies it got. */
let receiver: Server;
let receiverUrl: string;
const pushed: string[] = [];

beforeAll(async () => {
  receiver = createServer((req, res) => {
    let body = "";
    req.on("data", (d) => (body += d));
    req.on("end", () => {
      pushed.push(body);
      res.end();
    });
  });
  await new Promise<void>((r) => receiver.listen(0, "127.0.0.1", r));
  receiverUrl = `http://127.0.0.1:${(receiver.address() as { port: number }).port}/push`;
  state = mkdtempSync(join(tmpdir(), "agent-runtime-a2a-sdk-"));
  mf = runtimeProcess(bundle, state, { API_KEYS: KEY, LOGS: "off", TOOL_URL_ALLOWLIST: `${receiverUrl}/` });
  base = (await mf.ready).origin;
  const agents = {
    "sdk-calc": { model: "demo:fast", tools: ["calculator"] },
    "sdk-slow": { model: "demo:slow" },
    "sdk-careful": { model: "demo:fast", tools: ["calculator"], hitl_tools: ["calculator"] },
  };
  for (const [name, config] of Object.entries(agents)) await callRuntime(mf, KEY, "PUT", `/v1/agents/${name}`, config);
}, 180_000);

afterAll(async () => {
  receiver?.close();
  await mf?.dispose();
  rmSync(state, { recursive: true, force: true });
});

/** `fetch` with the runtime's API key on every request, as the SDK's authentication hook gives it. */
const authFetch = createAuthenticatingFetchWithRetry(fetch, {
  headers: async () => ({ authorization: `Bearer ${KEY}` }),
  shouldRetryWithHeaders: async () => undefined,
});

/** A client of `agent` from its Agent Card, on the binding named. */
async function connect(agent: string, binding: "JSONRPC" | "HTTP+JSON"): Promise<Client> {
  const factory = new ClientFactory({
    transports: [new JsonRpcTransportFactory({ fetchImpl: authFetch }), new RestTransportFactory({ fetchImpl: authFetch })],
    preferredTransports: [binding],
    cardResolver: new DefaultAgentCardResolver({ fetchImpl: authFetch }),
  });
  // The card is at <base>/.well-known/agent-card.json: the trailing slash keeps the agent's path.
  return factory.createFromUrl(`${base}/a2a/${agent}/`);
}

const textPart = (text: string): Part => ({ content: { $case: "text", value: text }, metadata: undefined, filename: "", mediaType: "" });

function userMessage(text: string, task?: Task): Message {
  return {
    messageId: crypto.randomUUID(),
    contextId: task?.contextId ?? "",
    taskId: task?.id ?? "",
    role: Role.ROLE_USER,
    parts: [textPart(text)],
    metadata: undefined,
    extensions: [],
    referenceTaskIds: [],
  };
}

const send = (text: string, task?: Task, returnImmediately = false) => ({
  tenant: "",
  message: userMessage(text, task),
  configuration: { acceptedOutputModes: [], historyLength: undefined, returnImmediately, taskPushNotificationConfig: undefined },
  metadata: undefined,
});

/** The task a SendMessage answered (this runtime always answers one). */
function asTask(result: Message | Task): Task {
  if (!("status" in result)) throw new Error("expected a task, got a message");
  return result;
}

const texts = (parts: Part[]) => parts.map((p) => (p.content?.$case === "text" ? p.content.value : "")).join("");
const answer = (task: Task) => task.artifacts.map((a) => texts(a.parts)).join("");

/** The events' kinds in order, with a status update's state. */
const kinds = (events: StreamResponse[]) =>
  events.map((e) => (e.payload?.$case === "statusUpdate" ? `status:${TaskState[e.payload.value.status!.state]}` : e.payload?.$case));

// The two bindings run at once, each one's tests in order: their tasks share nothing but the runtime, and most of
// the time is the slow model's whole answer, which the dropped-stream test waits for.
describe.concurrent.each(["JSONRPC", "HTTP+JSON"] as const)("the A2A SDK's client over %s", (binding) => {
  it.sequential("reads the Agent Card and sends a message that answers with the completed task", async ({ expect }) => {
    const client = await connect("sdk-calc", binding);
    const card = await client.getAgentCard();
    expect(card.name).toBe("sdk-calc");
    expect(card.capabilities).toMatchObject({ streaming: true, pushNotifications: true });
    expect(card.supportedInterfaces.map((i) => [i.protocolBinding, i.protocolVersion, i.url])).toEqual([
      ["JSONRPC", "1.0", `${base}/a2a/sdk-calc`],
      ["HTTP+JSON", "1.0", `${base}/a2a/sdk-calc`],
    ]);
    expect(client.transport.protocolName).toBe(binding);
    expect(client.protocolVersion).toBe("1.0");
    // The card says it has no extended card, and asking for one anyway is the error that says so.
    expect(card.capabilities?.extendedAgentCard).toBe(false);
    await expect(client.transport.getExtendedAgentCard({ tenant: "" })).rejects.toBeInstanceOf(ExtendedAgentCardNotConfiguredError);
    const task = asTask(await client.sendMessage(send("what is 6 * 7?")));
    expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(answer(task)).toBe("The answer is 42.");
    expect(task.history[0]).toMatchObject({ role: Role.ROLE_USER, taskId: task.id, contextId: task.contextId });
    const again = await client.getTask({ tenant: "", id: task.id, historyLength: undefined });
    expect(again).toEqual(task);
  });

  it.sequential("streams a task: the task, working, the answer's chunks, completed", async ({ expect }) => {
    const client = await connect("sdk-calc", binding);
    const events: StreamResponse[] = [];
    for await (const e of client.sendMessageStream(send("what is 6 * 7?"))) events.push(e);
    const seen = kinds(events);
    expect(seen[0]).toBe("task");
    expect(seen[1]).toBe("status:TASK_STATE_WORKING");
    expect(seen.at(-1)).toBe("status:TASK_STATE_COMPLETED");
    expect(seen.slice(2, -1).every((k) => k === "artifactUpdate")).toBe(true);
    const first = events[0]!.payload!.value as Task;
    expect(first.status?.state).toBe(TaskState.TASK_STATE_SUBMITTED);
    const chunks = events.flatMap((e) => (e.payload?.$case === "artifactUpdate" ? [e.payload.value] : []));
    expect(chunks.length).toBeGreaterThan(1);
    expect(chunks[0]!.append).toBe(false);
    expect(chunks.slice(1).every((c) => c.append)).toBe(true);
    expect(chunks.map((c) => texts(c.artifact!.parts)).join("")).toBe("The answer is 42.");
    expect(answer(await client.getTask({ tenant: "", id: first.id, historyLength: undefined }))).toBe("The answer is 42.");
  });

  it.sequential("subscribes again after a dropped stream, and loses or repeats nothing of the answer", async ({ expect }) => {
    const client = await connect("sdk-slow", binding);
    const drop = new AbortController();
    const before: StreamResponse[] = [];
    let id = "";
    try {
      for await (const e of client.sendMessageStream(send("tell me a story"), { signal: drop.signal })) {
        before.push(e);
        if (e.payload?.$case === "task") id = e.payload.value.id;
        if (before.filter((x) => x.payload?.$case === "artifactUpdate").length === 3) drop.abort();
      }
    } catch (err) {
      expect((err as Error).name).toBe("AbortError");
    }
    const heard = before.flatMap((e) => (e.payload?.$case === "artifactUpdate" ? [texts(e.payload.value.artifact!.parts)] : [])).join("");
    const after: StreamResponse[] = [];
    for await (const e of client.resubscribeTask({ tenant: "", id })) after.push(e);
    // The task as it is when subscribed again (everything so far), then only what follows it.
    expect(after[0]!.payload?.$case).toBe("task");
    const snapshot = answer(after[0]!.payload!.value as Task);
    expect(snapshot.startsWith(heard)).toBe(true);
    const rest = after.flatMap((e) => (e.payload?.$case === "artifactUpdate" ? [texts(e.payload.value.artifact!.parts)] : [])).join("");
    expect(kinds(after).at(-1)).toBe("status:TASK_STATE_COMPLETED");
    const final = await client.getTask({ tenant: "", id, historyLength: undefined });
    expect(snapshot + rest).toBe(answer(final));
    expect(answer(final)).toContain("slow demo model");
    // With the Last-Event-ID of the last event it read (a header the SDK passes on), the stream goes on exactly after it.
    const resume = (after: number) => client.resubscribeTask({ tenant: "", id }, { serviceParameters: { "Last-Event-ID": String(after) } });
    const whole: StreamResponse[] = [];
    for await (const e of resume(-1)) whole.push(e);
    const resumed: StreamResponse[] = [];
    for await (const e of resume(before.length - 1)) resumed.push(e);
    expect([...before, ...resumed]).toEqual(whole);
    expect(kinds(whole).at(-1)).toBe("status:TASK_STATE_COMPLETED");
  });

  it.sequential("answers a task waiting for an approval with the next message", async ({ expect }) => {
    const client = await connect("sdk-careful", binding);
    const waiting = asTask(await client.sendMessage(send("what is 6 * 7?")));
    expect(waiting.status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    expect(texts(waiting.status!.message!.parts)).toContain("Approve the call of calculator?");
    const done = asTask(await client.sendMessage(send("approve", waiting)));
    expect(done.id).toBe(waiting.id);
    expect(done.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(answer(done)).toBe("The answer is 42.");
  });

  it.sequential("cancels a running task, refuses to cancel it again, and names an unknown task", async ({ expect }) => {
    const client = await connect("sdk-slow", binding);
    const running = asTask(await client.sendMessage(send("tell me a story", undefined, true)));
    expect([TaskState.TASK_STATE_SUBMITTED, TaskState.TASK_STATE_WORKING]).toContain(running.status?.state);
    const cancelled = await client.cancelTask({ tenant: "", id: running.id, metadata: undefined });
    expect(cancelled.status?.state).toBe(TaskState.TASK_STATE_CANCELED);
    await expect(client.cancelTask({ tenant: "", id: running.id, metadata: undefined })).rejects.toBeInstanceOf(TaskNotCancelableError);
    const unknown = `task_${"0".repeat(48)}`;
    await expect(client.getTask({ tenant: "", id: unknown, historyLength: undefined })).rejects.toBeInstanceOf(TaskNotFoundError);
  });

  it.sequential("lists a context's tasks a page at a time", async ({ expect }) => {
    const client = await connect("sdk-calc", binding);
    const first = asTask(await client.sendMessage(send("hello")));
    const second = asTask(await client.sendMessage(send("hello again", { ...first, id: "" })));
    expect(second.contextId).toBe(first.contextId);
    const list = (pageToken: string, more: Partial<ListTasksRequest> = {}) =>
      client.listTasks({
        tenant: "",
        contextId: first.contextId,
        status: TaskState.TASK_STATE_UNSPECIFIED,
        pageSize: 1,
        pageToken,
        historyLength: undefined,
        statusTimestampAfter: undefined,
        includeArtifacts: true,
        ...more,
      });
    const page1 = await list("");
    expect(page1.tasks.map((t) => t.id)).toEqual([second.id]);
    expect(page1.totalSize).toBe(2);
    expect(page1.nextPageToken).not.toBe("");
    const page2 = await list(page1.nextPageToken);
    expect(page2.tasks.map((t) => t.id)).toEqual([first.id]);
    expect(page2.nextPageToken).toBe("");
    expect(answer(page2.tasks[0]!)).toBe(answer(first));
    // Only what changed after the first task ended, without artifacts.
    const later = await list("", { pageSize: 10, statusTimestampAfter: first.status!.timestamp, includeArtifacts: false });
    expect(later.tasks.map((t) => t.id)).toEqual([second.id]);
    expect(later.tasks[0]!.artifacts).toEqual([]);
  });

  it.sequential("keeps a task's push notification configs, and delivers the task's updates to them", async ({ expect }) => {
    const client = await connect("sdk-calc", binding);
    const task = asTask(await client.sendMessage(send("what is 6 * 7?")));
    const url = `${receiverUrl}/${binding}`;
    const config = { tenant: "", id: `cfg-${binding}`, taskId: task.id, url, token: "the-token", authentication: undefined };
    expect(await client.createTaskPushNotificationConfig(config)).toMatchObject({ id: config.id, taskId: task.id, url });
    expect(await client.getTaskPushNotificationConfig({ tenant: "", taskId: task.id, id: config.id })).toMatchObject({ id: config.id, url });
    const listed = await client.listTaskPushNotificationConfig({ tenant: "", taskId: task.id, pageSize: 0, pageToken: "" });
    expect(listed.configs.map((c) => c.id)).toEqual([config.id]);
    // The config follows the task from its start: its end arrives though it ended before the config was made.
    await until(async () => pushed.some((b) => b.includes(task.id) && b.includes("TASK_STATE_COMPLETED")));
    await client.deleteTaskPushNotificationConfig({ tenant: "", taskId: task.id, id: config.id });
    expect((await client.listTaskPushNotificationConfig({ tenant: "", taskId: task.id, pageSize: 0, pageToken: "" })).configs).toEqual([]);
  });
});
