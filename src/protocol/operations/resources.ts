// Resources (docs/guides/memory.md): the memory of one end user or account across its sessions:
// working memory, recall search, and erasure. A token reaches only its own subject's resource, and in it its own
// agent's working memory and the messages of the sessions it reaches.
import { z } from "zod";
import { RecallHitSchema, WorkingMemorySchema } from "../memory";
import { json, jsonBody, operation } from "./operation";
import { ErasureLeft } from "./sessions";

const Rid = z.object({ rid: z.string().min(1).max(200).meta({ example: "user-42" }) });
const AgentQuery = z.object({
  agent: z.string().optional().meta({
    description:
      "A registered agent whose `memory.working` applies: its scope (the agent's own document when scope is agent), schema and template. A token acts as its own agent (the one it is bound to, or the one its session was opened with): it may leave this out or name that agent only (403 otherwise)",
  }),
});
const Document = z.record(z.string(), z.unknown());

export const getMemory = operation({
  method: "get",
  path: "/v1/resources/{rid}/memory",
  operationId: "getMemory",
  summary: "The resource's working memory (version 0 and the agent's template, or {}, before the first write)",
  permission: "memory.read",
  rateLimit: "request",
  params: Rid,
  query: AgentQuery,
  responses: { 200: json(WorkingMemorySchema, "Working memory") },
  errors: [404, 422],
});

export const putMemory = operation({
  method: "put",
  path: "/v1/resources/{rid}/memory",
  operationId: "putMemory",
  summary:
    "Replaces the working memory document (checked against the agent's schema: with ?agent=, or a token's agent; what the write changes is held to it, a 422 names each field and stores nothing)",
  permission: "memory.write",
  rateLimit: "request",
  params: Rid,
  query: AgentQuery,
  body: jsonBody(z.strictObject({ document: Document }).meta({ id: "PutMemory" })),
  responses: { 200: json(WorkingMemorySchema, "Stored") },
  errors: [404, 422],
});

export const patchMemory = operation({
  method: "patch",
  path: "/v1/resources/{rid}/memory",
  operationId: "patchMemory",
  summary:
    "Applies a JSON merge patch (RFC 7396) to the working memory (checked against the agent's schema: with ?agent=, or a token's agent; what the patch changes is held to it, a 422 names each field and stores nothing)",
  permission: "memory.write",
  rateLimit: "request",
  params: Rid,
  query: AgentQuery,
  body: jsonBody(Document.meta({ description: "the merge patch: keys replace, nested objects merge, null removes" })),
  responses: { 200: json(WorkingMemorySchema, "Stored") },
  errors: [404, 422],
});

export const searchMemory = operation({
  method: "get",
  path: "/v1/resources/{rid}/memory/search",
  operationId: "searchMemory",
  summary:
    "Full-text search (FTS5, bm25) over the user and assistant messages of the resource's ended turns; limit 1-50 (default 10). A token finds only those of the sessions it reaches: its session, or its subject's sessions of its agent",
  permission: "memory.read",
  rateLimit: "request",
  params: Rid,
  query: z.object({ q: z.string().min(1).max(500), limit: z.string().optional() }),
  responses: { 200: json(z.object({ hits: z.array(RecallHitSchema) }), "Best matches first") },
  errors: [404, 422],
});

export const eraseResource = operation({
  method: "delete",
  path: "/v1/resources/{rid}",
  operationId: "eraseResource",
  summary:
    "Erases the resource's memory: its working memory with its kept versions and its recall index; with ?sessions=true also every session opened for it, with the sessions made from those (as DELETE /v1/sessions/:sid). Idempotent.",
  permission: "resource.delete",
  rateLimit: "request",
  params: Rid,
  query: z.object({ sessions: z.enum(["true", "false"]).optional() }),
  responses: {
    204: { description: "Erased" },
    200: json(ErasureLeft, "The memory is erased, but some of its sessions (or sessions made from them) could not be: `left` names them"),
  },
  errors: [404, 422],
});
