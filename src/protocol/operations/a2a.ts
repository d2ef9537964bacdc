// A2A 1.0 (docs/guides/a2a.md): every registered agent is an A2A agent, with its Agent Card and a JSON-RPC
// endpoint. A task is a turn of a session, its contextId the session. Failures of a JSON-RPC call are
// JSON-RPC error objects (A2A's codes); failing to authenticate or authorize is the HTTP status.
import { z } from "zod";
import { json, jsonBody, operation } from "./operation";

const Agent = z.object({ agent: z.string().meta({ example: "support" }) });

const AgentCard = z
  .looseObject({
    name: z.string(),
    description: z.string(),
    version: z.string(),
    supportedInterfaces: z.array(z.object({ url: z.string(), protocolBinding: z.string(), protocolVersion: z.string() })),
    capabilities: z.looseObject({ streaming: z.boolean() }),
    securitySchemes: z.record(z.string(), z.unknown()),
    defaultInputModes: z.array(z.string()),
    defaultOutputModes: z.array(z.string()),
    skills: z.array(z.looseObject({ id: z.string(), name: z.string(), description: z.string(), tags: z.array(z.string()) })),
  })
  .meta({ id: "AgentCard" });

/** A JSON-RPC response: a result or an error object, with the request's id. */
const RpcResponse = z
  .looseObject({
    jsonrpc: z.literal("2.0"),
    id: z.union([z.string(), z.number(), z.null()]),
    result: z.unknown().optional(),
    error: z.object({ code: z.int(), message: z.string(), data: z.unknown().optional() }).optional(),
  })
  .refine((r) => (r.result === undefined) !== (r.error === undefined), "has exactly one of result and error")
  .meta({ id: "JsonRpcResponse" });

export const getAgentCard = operation({
  method: "get",
  path: "/a2a/{agent}/.well-known/agent-card.json",
  operationId: "getAgentCard",
  summary: "The agent's A2A Agent Card: its JSON-RPC interface, skills (its tools), capabilities and the bearer security scheme",
  permission: "session.read",
  rateLimit: "request",
  params: Agent,
  responses: { 200: json(AgentCard, "The Agent Card") },
  errors: [404],
  custom: true,
});

export const a2aRpc = operation({
  method: "post",
  path: "/a2a/{agent}",
  operationId: "a2aRpc",
  summary:
    "A2A 1.0 JSON-RPC: SendMessage, SendStreamingMessage, GetTask, ListTasks, CancelTask, SubscribeToTask (SSE, resumed after Last-Event-ID), the task push notification config methods (Create, Get, List, Delete); errors are JSON-RPC error objects",
  permission: "session.read",
  rateLimit: "request",
  params: Agent,
  body: jsonBody(z.record(z.string(), z.unknown()).meta({ description: "A JSON-RPC 2.0 request" })),
  responses: {
    200: {
      description: "The JSON-RPC response, or for the streaming methods an SSE stream of them",
      content: { "application/json": RpcResponse, "text/event-stream": z.string() },
    },
  },
  errors: [404],
  custom: true,
});
