// A2A 1.0's task push notification config methods (docs/guides/a2a.md, "Push notifications"): a config is
// kept by the task's session and delivered there (src/session/subscriptions/a2a-push.ts); here the caller's
// reach of the task is checked and the params read.
import { ListPushConfigParams, PushConfigIdParams, TaskPushNotificationConfig } from "../protocol/a2a";
import { unwrap } from "../protocol/errors";
import type { PushConfigInput } from "../session/subscriptions/a2a-push";
import { taskId } from "../views/a2a-task";
import { need, paramsOf, type RpcCall, reach } from "./a2a-tasks";
import { sessionStub } from "./http";

/** Adds a config to a task the caller reaches (SendMessage's configuration comes here too). */
export async function addPushConfig(call: RpcCall, input: PushConfigInput) {
  const ref = await reach(call, input.taskId);
  need(call.principal, "session.submit");
  return unwrap(await sessionStub(call.env, ref.session_id).pushConfig("create", { ...input, taskId: taskId(ref) }, call.origin));
}

export async function createPushConfig(call: RpcCall, raw: unknown) {
  const { tenant: _, ...input } = paramsOf(TaskPushNotificationConfig, raw);
  return addPushConfig(call, input);
}

export async function getPushConfig(call: RpcCall, raw: unknown) {
  const { taskId: id, id: configId } = paramsOf(PushConfigIdParams, raw);
  const ref = await reach(call, id);
  return unwrap(await sessionStub(call.env, ref.session_id).pushConfig("get", id, configId));
}

/** All of a task's configs at once (a task holds at most ten): nextPageToken is always empty. */
export async function listPushConfigs(call: RpcCall, raw: unknown) {
  const { taskId: id } = paramsOf(ListPushConfigParams, raw);
  const ref = await reach(call, id);
  return { configs: unwrap(await sessionStub(call.env, ref.session_id).pushConfig("list", id)), nextPageToken: "" };
}

export async function deletePushConfig(call: RpcCall, raw: unknown) {
  const { taskId: id, id: configId } = paramsOf(PushConfigIdParams, raw);
  const ref = await reach(call, id);
  need(call.principal, "session.submit");
  return unwrap(await sessionStub(call.env, ref.session_id).pushConfig("delete", id, configId));
}
