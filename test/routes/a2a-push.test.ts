// A2A push notifications (docs/guides/a2a.md, "Push notifications") against a local receiver
// (test/support/receiver.ts): a task's status and artifact updates arrive in order, one StreamResponse a request, signed per
// Standard Webhooks (checked by the `standardwebhooks` package) and carrying the config's token and
// authentication; a failed delivery is sent again under the same id; the config methods and their refusals.
import { Webhook } from "standardwebhooks";
import { describe, expect, it } from "vitest";
import { rpc, userMessage } from "../support/a2a-rpc";
import { api, apiAs, createAgent } from "../support/api";
import { until } from "../support/chat-client";
import { baseURL, script, toolURL, uniqueId } from "../support/fake-model";

type Received = { a2a_token?: string; authorization?: string; webhook: Record<string, string>; body: string; answered: number | "hung" };

async function receiver(plan: { fail_first?: number } = {}): Promise<{ url: string; requests: () => Promise<Received[]> }> {
  const url = `${baseURL}/_receiver/${uniqueId("push")}`;
  await fetch(`${url}/plan`, { method: "PUT", body: JSON.stringify(plan) });
  return { url, requests: async () => (await fetch(`${url}/requests`)).json() as Promise<Received[]> };
}

/** What a request carried: the status it reports, or the artifact it delivers (`artifact:<id>:<its text>`). */
function stateOf(r: Received): string {
  const { statusUpdate, artifactUpdate } = JSON.parse(r.body);
  if (statusUpdate) return statusUpdate.status.state;
  return `artifact:${artifactUpdate.artifact.artifactId}:${artifactUpdate.artifact.parts.map((p: { text?: string }) => p.text).join("")}`;
}

/** The requests the receiver accepted, once the last of them is the task's end. */
async function delivered(requests: () => Promise<Received[]>): Promise<Received[]> {
  let accepted: Received[] = [];
  await until(async () => {
    accepted = (await requests()).filter((r) => r.answered === 200);
    return accepted.length > 0 && stateOf(accepted.at(-1)!) === "TASK_STATE_COMPLETED";
  }, "the task's last status was delivered");
  return accepted;
}

describe("A2A push notifications", () => {
  it("delivers a task's status and artifact updates in order, signed, with the config's token and authentication; a failed one again under its id", async () => {
    await createAgent({ name: "a2a-push", model: "demo:fast", tools: ["calculator"] });
    expect((await api("GET", "/a2a/a2a-push/.well-known/agent-card.json")).body.capabilities.pushNotifications).toBe(true);
    const task = (await rpc("a2a-push", "SendMessage", { message: userMessage("what is 6 * 7?") })).body.result.task;
    const rcv = await receiver({ fail_first: 1 });
    const auth = { scheme: "Bearer", credentials: "receiver-credential" };
    const created = await rpc("a2a-push", "CreateTaskPushNotificationConfig", {
      taskId: task.id,
      id: "cfg-1",
      url: rcv.url,
      token: "task-token",
      authentication: auth,
    });
    const config = { id: "cfg-1", taskId: task.id, url: rcv.url, authentication: { scheme: "Bearer" } };
    expect(created.body.result).toEqual({ ...config, signingSecret: expect.stringMatching(/^whsec_/) });

    // The config follows the task from its start, even though it ended before the config was made.
    const accepted = await delivered(rcv.requests);
    expect(accepted.map(stateOf)).toEqual(["TASK_STATE_WORKING", "artifact:text-1:The answer is 42.", "TASK_STATE_COMPLETED"]);
    const all = await rcv.requests();
    expect(all[0]!.answered).toBe(503);
    expect(all[0]!.webhook["webhook-id"]).toBe(accepted[0]!.webhook["webhook-id"]);
    const webhook = new Webhook(created.body.result.signingSecret);
    for (const r of accepted) {
      const update = webhook.verify(r.body, r.webhook) as Record<string, unknown>;
      expect(Object.values(update)[0]).toMatchObject({ taskId: task.id, contextId: task.contextId });
      expect(r.a2a_token).toBe("task-token");
      expect(r.authorization).toBe("Bearer receiver-credential");
    }
    // The answer's text as one artifact update, whole (TaskArtifactUpdateEvent), as GetTask has it.
    const done = (await rpc("a2a-push", "GetTask", { id: task.id })).body.result;
    expect(JSON.parse(accepted[1]!.body)).toEqual({
      artifactUpdate: { taskId: task.id, contextId: task.contextId, artifact: done.artifacts[0], append: false, lastChunk: true },
    });
    expect(JSON.parse(accepted[2]!.body).statusUpdate.status.message.parts[0].text).toBe("The answer is 42.");

    // The reads never give the token or the credentials back.
    const got = await rpc("a2a-push", "GetTaskPushNotificationConfig", { taskId: task.id, id: "cfg-1" });
    expect(got.body.result).toEqual(config);
    const listed = await rpc("a2a-push", "ListTaskPushNotificationConfigs", { taskId: task.id });
    expect(listed.body.result).toEqual({ configs: [config], nextPageToken: "" });
    expect(JSON.stringify([got.body, listed.body])).not.toMatch(/task-token|receiver-credential|whsec_/);
    // The runtime's own subscriptions do not list it.
    expect((await api("GET", `/v1/sessions/${task.contextId}/subscriptions`)).body.subscriptions).toEqual([]);
    expect((await rpc("a2a-push", "DeleteTaskPushNotificationConfig", { taskId: task.id, id: "cfg-1" })).body.result).toEqual({});
    expect((await rpc("a2a-push", "GetTaskPushNotificationConfig", { taskId: task.id, id: "cfg-1" })).body.error.code).toBe(-32001);
  });

  it("a config in SendMessage follows the task it makes, signed with the secret it names", async () => {
    await createAgent({ name: "a2a-push-send", model: "demo:fast" });
    const rcv = await receiver();
    const signingSecret = `whsec_${btoa("a client's own 24 bytes!!")}`;
    const configuration = { returnImmediately: true, taskPushNotificationConfig: { url: rcv.url, token: "t-1", signingSecret } };
    const task = (await rpc("a2a-push-send", "SendMessage", { message: userMessage("hello"), configuration })).body.result.task;
    const accepted = await delivered(rcv.requests);
    expect(accepted.map(stateOf)).toEqual(["TASK_STATE_WORKING", expect.stringMatching(/^artifact:text-1:./), "TASK_STATE_COMPLETED"]);
    for (const r of accepted) {
      const update = new Webhook(signingSecret).verify(r.body, r.webhook) as Record<string, { taskId: string }>;
      expect(Object.values(update)[0]!.taskId).toBe(task.id);
    }
    const listed = (await rpc("a2a-push-send", "ListTaskPushNotificationConfigs", { taskId: task.id })).body.result.configs;
    expect(listed).toEqual([{ id: expect.any(String), taskId: task.id, url: rcv.url }]);
  });

  it("delivers a file a tool returned as an artifact update whose file part has the absolute URL", async () => {
    const id = uniqueId("a2a-push-files");
    const files = [{ data: btoa("a,b\n1,2\n"), media_type: "text/csv", filename: "table.csv" }];
    await script(id, [{ tool_calls: [{ name: "make_files", arguments: { files } }] }, { text: "Here is the table." }]);
    await createAgent({ name: "a2a-push-files", model: `openai-compatible:${id}`, http_tools: [{ name: "make_files", url: toolURL("files") }] });
    const rcv = await receiver();
    const configuration = { taskPushNotificationConfig: { url: rcv.url } };
    const task = (await rpc("a2a-push-files", "SendMessage", { message: userMessage("make a table"), configuration })).body.result.task;
    const accepted = await delivered(rcv.requests);
    expect(accepted.map(stateOf)).toEqual([
      "TASK_STATE_WORKING",
      expect.stringMatching(/^artifact:file-file_/),
      "artifact:text-1:Here is the table.",
      "TASK_STATE_COMPLETED",
    ]);
    const { artifact } = JSON.parse(accepted[1]!.body).artifactUpdate;
    expect(artifact).toEqual(task.artifacts[0]);
    expect(artifact.parts[0].url).toMatch(new RegExp(`^https://runtime\\.test/v1/sessions/${task.contextId}/files/file_`));
  });

  it("refuses a URL off the allowlist, an unknown task, bad params and a read key, storing nothing", async () => {
    await createAgent({ name: "a2a-push-bad", model: "demo:fast" });
    const task = (await rpc("a2a-push-bad", "SendMessage", { message: userMessage("hi") })).body.result.task;
    const off = await rpc("a2a-push-bad", "CreateTaskPushNotificationConfig", { taskId: task.id, url: "https://example.com/hook" });
    expect(off.body.error).toMatchObject({ code: -32602, message: expect.stringContaining("TOOL_URL_ALLOWLIST") });
    const url = `${baseURL}/_receiver/x`;
    expect((await rpc("a2a-push-bad", "CreateTaskPushNotificationConfig", { taskId: `task_${"0".repeat(48)}`, url })).body.error.code).toBe(-32001);
    expect((await rpc("a2a-push-bad", "CreateTaskPushNotificationConfig", { taskId: task.id })).body.error).toMatchObject({ code: -32602 });
    expect((await rpc("a2a-push-bad", "GetTaskPushNotificationConfig", { taskId: task.id, id: "none" })).body.error.code).toBe(-32001);
    const read = await apiAs("POST", "/a2a/a2a-push-bad", "read-key", {
      jsonrpc: "2.0",
      id: 1,
      method: "CreateTaskPushNotificationConfig",
      params: { taskId: task.id, url },
    });
    expect(read.status).toBe(403);
    const off2 = { message: userMessage("again"), configuration: { taskPushNotificationConfig: { url: "https://example.com/hook" } } };
    expect((await rpc("a2a-push-bad", "SendMessage", off2)).body.error.code).toBe(-32602);
    expect((await rpc("a2a-push-bad", "ListTaskPushNotificationConfigs", { taskId: task.id })).body.result.configs).toEqual([]);
    expect((await rpc("a2a-push-bad", "ListTasks", { contextId: task.contextId })).body.result.totalSize).toBe(1);
  });
});
