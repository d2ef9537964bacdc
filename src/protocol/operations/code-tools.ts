// Code tools (docs/guides/code-tools.md): TypeScript-free ES modules registered over HTTP, run in Dynamic Workers.
import { z } from "zod";
import { CODE_TOOL_NAME, CodeToolDoc, CodeToolPutBody } from "../code-tools";
import { json, jsonBody, operation } from "./operation";

const Name = z.object({ name: z.string().regex(CODE_TOOL_NAME, "must match ^[A-Za-z0-9_-]{1,64}$").meta({ example: "word_count" }) });

export const putCodeTool = operation({
  method: "put",
  path: "/v1/code-tools/{name}",
  operationId: "putCodeTool",
  summary: "Register a code tool, or a new version of it (a source that does not load is refused with its line and column)",
  permission: "agents.write",
  rateLimit: "request",
  params: Name,
  body: jsonBody(CodeToolPutBody),
  responses: { 200: json(CodeToolDoc, "Stored as a new version, or unchanged"), 201: json(CodeToolDoc, "Created (version 1)") },
  errors: [409, 422],
});

export const getCodeTool = operation({
  method: "get",
  path: "/v1/code-tools/{name}",
  operationId: "getCodeTool",
  summary: "Read a code tool: its latest version, or the one `version` names",
  permission: "agents.read",
  rateLimit: "request",
  params: Name,
  query: z.object({
    version: z
      .string()
      .regex(/^[1-9][0-9]{0,8}$/, "must be a version number")
      .optional(),
  }),
  responses: { 200: json(CodeToolDoc, "The version (secrets by name only)") },
  errors: [404, 422],
});

export const listCodeTools = operation({
  method: "get",
  path: "/v1/code-tools",
  operationId: "listCodeTools",
  summary: "List code tools (the latest version of each)",
  permission: "agents.read",
  rateLimit: "request",
  responses: { 200: json(z.object({ code_tools: z.array(CodeToolDoc) }), "All code tools by name") },
  errors: [],
});

export const deleteCodeTool = operation({
  method: "delete",
  path: "/v1/code-tools/{name}",
  operationId: "deleteCodeTool",
  summary: "Delete a code tool and all its versions (agents that list it run without it, with a warning)",
  permission: "agents.write",
  rateLimit: "request",
  params: Name,
  responses: { 200: json(z.object({ deleted: z.boolean(), name: z.string() }), "Deleted") },
  errors: [404],
});
