// The agent registry (docs/reference/api.md).
import { z } from "zod";
import { AgentConfigSchema, HttpToolSchema } from "../agent-config";
import { REDACTED } from "../redact";
import { SubscriptionSpec, signingSecret } from "../subscriptions";
import { json, jsonBody, operation } from "./operation";

/** A subscription of a config as it is read, and may be written back: its secret is the placeholder of the stored one. */
const ReadSubscription = SubscriptionSpec.extend({ secret: z.union([z.literal(REDACTED), SubscriptionSpec.shape.secret.unwrap()]).optional() });
/** A webhook tool as it is read: its signing secrets are the placeholders of the stored ones. */
const readSecret = z.union([z.literal(REDACTED), signingSecret]).optional();
const ReadHttpTool = HttpToolSchema.extend({ secret: readSecret, previous_secret: readSecret });
export const AgentConfigDoc = AgentConfigSchema.extend({
  http_tools: z.array(ReadHttpTool).max(64),
  subscriptions: z.array(ReadSubscription).max(5).optional(),
}).meta({ id: "AgentConfig" });
/** A config as PUT takes it: a secret may also be the placeholder of the stored one (it is kept). */
const AgentPutBody = AgentConfigSchema.partial({ name: true }).extend({
  http_tools: z.array(ReadHttpTool).max(64).default([]),
  subscriptions: z.array(ReadSubscription).optional(),
});
const Name = z.object({ name: z.string().meta({ example: "helper" }) });

export const putAgent = operation({
  method: "put",
  path: "/v1/agents/{name}",
  operationId: "putAgent",
  summary: "Create or replace an agent",
  permission: "agents.write",
  rateLimit: "request",
  params: Name,
  body: jsonBody(AgentPutBody),
  responses: { 200: json(AgentConfigDoc, "Replaced"), 201: json(AgentConfigDoc, "Created") },
  errors: [422],
});

export const getAgent = operation({
  method: "get",
  path: "/v1/agents/{name}",
  operationId: "getAgent",
  summary: "Read an agent",
  permission: "agents.read",
  rateLimit: "request",
  params: Name,
  responses: { 200: json(AgentConfigDoc, "The stored config") },
  errors: [404],
});

export const listAgents = operation({
  method: "get",
  path: "/v1/agents",
  operationId: "listAgents",
  summary: "List agents",
  permission: "agents.read",
  rateLimit: "request",
  responses: { 200: json(z.object({ agents: z.array(AgentConfigDoc) }), "All agents by name") },
  errors: [],
});

export const deleteAgent = operation({
  method: "delete",
  path: "/v1/agents/{name}",
  operationId: "deleteAgent",
  summary:
    "Delete an agent: its labels and traffic split go with it; its versions are kept, each readable by number, and a new agent of the name goes on numbering from them (existing sessions keep the config and version they run)",
  permission: "agents.write",
  rateLimit: "request",
  params: Name,
  responses: { 200: json(z.object({ deleted: z.boolean(), name: z.string() }), "Deleted") },
  errors: [404],
});
