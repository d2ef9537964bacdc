// A2A 1.0's HTTP+JSON binding (docs/guides/a2a.md, "HTTP+JSON") under each agent's base, beside its JSON-RPC
// endpoint: the same methods as REST paths. Bodies and answers are ProtoJSON as in JSON-RPC; A2A's errors are
// the binding's own (`{error: {code, status, message, details}}`, RestErrorBody), while failing to authenticate,
// to be authorized or the rate limit are the runtime's error envelope, as for the JSON-RPC endpoint.
import { z } from "zod";
import { RestErrorBody } from "../a2a-rest";
import { json, jsonBody, operation } from "./operation";

const Agent = z.object({ agent: z.string().meta({ example: "support" }) });
const AgentTask = Agent.extend({ id: z.string().meta({ example: "task_0123456789abcdef012345670123456789abcdef01234567" }) });
const AgentTaskConfig = AgentTask.extend({ configId: z.string() });

const Task = z.looseObject({ id: z.string(), contextId: z.string(), status: z.looseObject({ state: z.string() }) }).meta({ id: "A2aTask" });
const PushConfig = z.looseObject({ id: z.string(), taskId: z.string(), url: z.string() }).meta({ id: "A2aPushConfig" });
const Body = jsonBody(z.record(z.string(), z.unknown()).meta({ description: "The method's request in ProtoJSON" }));
const sse = { "text/event-stream": z.string() };

/**
 * What every operation of the binding shares: who may call it, and its errors in the binding's shape (400: bad
 * params or version, an operation the task's state refuses; 404: no such agent, task or config).
 */
const rest = { permission: "session.read", rateLimit: "request", errors: [400, 404], errorBody: RestErrorBody, custom: true } as const;
/** A body that is not JSON by its media type is 415. */
const withBody = [400, 404, 415] as const;

export const a2aRestSend = operation({
  ...rest,
  errors: withBody,
  method: "post",
  path: "/a2a/{agent}/message:send",
  operationId: "a2aRestSend",
  summary: "A2A HTTP+JSON SendMessage: a new task (a turn), or the answer a task waiting for input needs; answers {task}",
  params: Agent,
  body: Body,
  responses: { 200: json(z.object({ task: Task }), "The task, settled unless returnImmediately") },
});

export const a2aRestStream = operation({
  ...rest,
  errors: withBody,
  method: "post",
  path: "/a2a/{agent}/message:stream",
  operationId: "a2aRestStream",
  summary: "A2A HTTP+JSON SendStreamingMessage: the task's StreamResponse events over SSE, each event's index as its id",
  params: Agent,
  body: Body,
  responses: { 200: { description: "The task's events", content: sse } },
});

export const a2aRestListTasks = operation({
  ...rest,
  method: "get",
  path: "/a2a/{agent}/tasks",
  operationId: "a2aRestListTasks",
  summary:
    "A2A HTTP+JSON ListTasks: the query takes ListTasks' params (contextId, status, pageSize, pageToken, historyLength, statusTimestampAfter, includeArtifacts)",
  params: Agent,
  responses: {
    200: json(z.object({ tasks: z.array(Task), nextPageToken: z.string(), pageSize: z.int(), totalSize: z.int() }), "A page of tasks"),
  },
});

export const a2aRestGetTask = operation({
  ...rest,
  method: "get",
  path: "/a2a/{agent}/tasks/{id}",
  operationId: "a2aRestGetTask",
  summary: "A2A HTTP+JSON GetTask (?historyLength=)",
  params: AgentTask,
  responses: { 200: json(Task, "The task") },
});

export const a2aRestCancelTask = operation({
  ...rest,
  errors: [400, 404, 409],
  method: "post",
  path: "/a2a/{agent}/tasks/{id}:cancel",
  operationId: "a2aRestCancelTask",
  summary: "A2A HTTP+JSON CancelTask: cancels a running or waiting task",
  params: AgentTask,
  responses: { 200: json(Task, "The cancelled task") },
});

export const a2aRestSubscribe = operation({
  ...rest,
  method: "post",
  path: "/a2a/{agent}/tasks/{id}:subscribe",
  operationId: "a2aRestSubscribe",
  summary: "A2A HTTP+JSON SubscribeToTask (GET too): the task as it is then what follows, or after the event Last-Event-ID names",
  params: AgentTask,
  responses: { 200: { description: "The task's events", content: sse } },
});

export const a2aRestCreatePushConfig = operation({
  ...rest,
  errors: withBody,
  method: "post",
  path: "/a2a/{agent}/tasks/{id}/pushNotificationConfigs",
  operationId: "a2aRestCreatePushConfig",
  summary: "A2A HTTP+JSON CreateTaskPushNotificationConfig (its signing secret answered here only)",
  params: AgentTask,
  body: Body,
  responses: { 201: json(PushConfig, "The config") },
});

export const a2aRestListPushConfigs = operation({
  ...rest,
  method: "get",
  path: "/a2a/{agent}/tasks/{id}/pushNotificationConfigs",
  operationId: "a2aRestListPushConfigs",
  summary: "A2A HTTP+JSON ListTaskPushNotificationConfigs",
  params: AgentTask,
  responses: { 200: json(z.object({ configs: z.array(PushConfig), nextPageToken: z.string() }), "The task's configs") },
});

export const a2aRestGetPushConfig = operation({
  ...rest,
  method: "get",
  path: "/a2a/{agent}/tasks/{id}/pushNotificationConfigs/{configId}",
  operationId: "a2aRestGetPushConfig",
  summary: "A2A HTTP+JSON GetTaskPushNotificationConfig",
  params: AgentTaskConfig,
  responses: { 200: json(PushConfig, "The config") },
});

export const a2aRestDeletePushConfig = operation({
  ...rest,
  method: "delete",
  path: "/a2a/{agent}/tasks/{id}/pushNotificationConfigs/{configId}",
  operationId: "a2aRestDeletePushConfig",
  summary: "A2A HTTP+JSON DeleteTaskPushNotificationConfig",
  params: AgentTaskConfig,
  responses: { 204: { description: "Deleted" } },
});

export const a2aRestExtendedCard = operation({
  ...rest,
  method: "get",
  path: "/a2a/{agent}/extendedAgentCard",
  operationId: "a2aRestExtendedCard",
  summary: "A2A HTTP+JSON GetExtendedAgentCard: the card says extendedAgentCard: false, so it is always EXTENDED_AGENT_CARD_NOT_CONFIGURED (400)",
  params: Agent,
  responses: {},
});
