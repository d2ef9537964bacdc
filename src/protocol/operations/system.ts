// What is not a tenant's data (health, the event catalog), and the runtime as an MCP server.
import { z } from "zod";
import { json, jsonBody, operation } from "./operation";

export const health = operation({
  method: "get",
  path: "/healthz",
  operationId: "health",
  summary: "Liveness",
  permission: "public",
  rateLimit: "none",
  responses: { 200: json(z.object({ ok: z.literal(true) }), "OK") },
  errors: [],
});

export const getEventSchema = operation({
  method: "get",
  path: "/v1/events/schema",
  operationId: "getEventSchema",
  summary: "The event catalog as JSON Schema: the envelope, and each event type's payload (no key needed)",
  permission: "public",
  rateLimit: "none",
  responses: { 200: json(z.record(z.string(), z.unknown()), "JSON Schema (draft 2020-12)") },
  errors: [],
});

export const mcp = operation({
  method: "post",
  path: "/mcp",
  operationId: "mcp",
  summary:
    "MCP server (Streamable HTTP, stateless): each registered agent is a tool run_agent_<name> {input, session_id?, on_busy?, debounce_ms?}; ask_user becomes elicitation/create for clients with forms",
  permission: "mcp",
  rateLimit: "request",
  body: jsonBody(z.record(z.string(), z.unknown()).meta({ description: "A JSON-RPC message or batch" })),
  responses: {
    200: { description: "JSON-RPC responses, as JSON or as an SSE stream (with progress notifications)" },
    202: { description: "Accepted (notifications and responses sent by the client)" },
  },
  errors: [],
});
