// An agent's versions, labels and traffic, and moving a session to another version
// (docs/guides/versions.md).
import { z } from "zod";
import { AgentLabelSchema, AgentTrafficSchema, AgentVersionSchema, TrafficRoutes } from "../agent-versions";
import { ConfigChange } from "../config-diff";
import { GateRequirement } from "../evals";
import { AgentConfigDoc } from "./agents";
import { json, jsonBody, operation, Sid } from "./operation";

const Name = z.object({ name: z.string().meta({ example: "helper" }) });
const NameVersion = Name.extend({ version: z.string().meta({ example: "2" }) });
const VersionNumber = z.int().min(1).max(999_999_999);

export const listAgentVersions = operation({
  method: "get",
  path: "/v1/agents/{name}/versions",
  operationId: "listAgentVersions",
  summary:
    "The agent's versions, newest first. A deleted agent has none to list: 404 saying it was deleted (details: `deleted`, the version numbers kept), while each of its versions stays readable by number",
  permission: "agents.read",
  rateLimit: "request",
  params: Name,
  responses: { 200: json(z.object({ agent: z.string(), versions: z.array(AgentVersionSchema) }), "Versions") },
  errors: [404],
});

export const getAgentVersion = operation({
  method: "get",
  path: "/v1/agents/{name}/versions/{version}",
  operationId: "getAgentVersion",
  summary: "One version of the agent, with its config (a deleted agent's too: the sessions that ran it name it)",
  permission: "agents.read",
  rateLimit: "request",
  params: NameVersion,
  responses: { 200: json(AgentVersionSchema.extend({ config: AgentConfigDoc }), "The version") },
  errors: [404, 422],
});

export const diffAgentVersions = operation({
  method: "get",
  path: "/v1/agents/{name}/versions/{version}/diff",
  operationId: "diffAgentVersions",
  summary: "What changed from version `against` (default: the one before) to this version, path by path",
  permission: "agents.read",
  rateLimit: "request",
  params: NameVersion,
  query: z.object({ against: z.string().optional().describe("the version compared against (default: version - 1)") }),
  responses: {
    200: json(z.object({ agent: z.string(), version: z.number(), against: z.number(), changes: z.array(ConfigChange) }), "The changes"),
  },
  errors: [404, 422],
});

export const listAgentLabels = operation({
  method: "get",
  path: "/v1/agents/{name}/labels",
  operationId: "listAgentLabels",
  summary: "The agent's labels, each with the version it points at and its moves",
  permission: "agents.read",
  rateLimit: "request",
  params: Name,
  responses: { 200: json(z.object({ agent: z.string(), labels: z.array(AgentLabelSchema) }), "Labels") },
  errors: [404],
});

export const putAgentLabel = operation({
  method: "put",
  path: "/v1/agents/{name}/labels/{label}",
  operationId: "putAgentLabel",
  summary:
    "Point a label at a version (a rollback is a move back); recorded with who moved it. With `require`, only when the newest finished eval run of that version on the dataset passes (409 eval_gate_failed otherwise)",
  permission: "agents.write",
  rateLimit: "request",
  params: Name.extend({ label: z.string().meta({ example: "production" }) }),
  body: jsonBody(
    z.strictObject({
      version: VersionNumber.describe("an existing version of the agent"),
      require: GateRequirement.optional().describe("an eval the version must have passed (docs/guides/evals.md)"),
    }),
  ),
  responses: { 200: json(AgentLabelSchema, "The label as it points now") },
  errors: [404, 409, 422],
});

export const getAgentTraffic = operation({
  method: "get",
  path: "/v1/agents/{name}/traffic",
  operationId: "getAgentTraffic",
  summary: "How new sessions opened by the agent's name split between its labels",
  permission: "agents.read",
  rateLimit: "request",
  params: Name,
  responses: { 200: json(AgentTrafficSchema, "The routes") },
  errors: [404],
});

export const putAgentTraffic = operation({
  method: "put",
  path: "/v1/agents/{name}/traffic",
  operationId: "putAgentTraffic",
  summary:
    "Split new sessions opened by the agent's name between labels by weight, the same label for the same resource (end user) while the weights stay; no routes: its newest version",
  permission: "agents.write",
  rateLimit: "request",
  params: Name,
  body: jsonBody(z.strictObject({ routes: TrafficRoutes.describe("[{label, weight}]: existing labels, weights summing to more than 0") })),
  responses: { 200: json(AgentTrafficSchema, "The routes as stored") },
  errors: [404, 422],
});

export const moveSessionAgent = operation({
  method: "post",
  path: "/v1/sessions/{sid}/agent",
  operationId: "moveSessionAgent",
  summary: "Move the session to another version of its agent: turns from now on run it (an event in its log); refused while a turn runs",
  permission: "agents.write",
  rateLimit: "request",
  params: Sid,
  body: jsonBody(z.strictObject({ version: VersionNumber.describe("an existing version of the session's agent") })),
  responses: {
    200: json(
      z.object({ session_id: z.string(), agent: z.string(), from_version: z.number().nullable(), version: z.number() }),
      "The version the session runs now",
    ),
  },
  errors: [404, 409, 422],
  session: true,
});
