// update_working_memory and recall: the tools on the session's resource memory (docs/guides/memory.md). The
// session object provides the port (ctx.resource); a session without a resource gets an error result.
import { type ResourceMemoryPort, type ToolContext, type ToolDefinition, ToolError } from "./types";

const MAX_RECALL_LIMIT = 20;

function port(ctx: ToolContext): ResourceMemoryPort {
  if (!ctx.resource) throw new ToolError("This session belongs to no resource, so it has no memory across sessions");
  return ctx.resource;
}

const updateWorkingMemory: ToolDefinition = {
  name: "update_working_memory",
  description:
    "Updates the working memory about this user (shown to you at the start of every conversation) with a JSON merge patch: " +
    "keys in `patch` replace those in the memory, nested objects merge, and a key set to null is removed.",
  parameters: {
    type: "object",
    properties: { patch: { type: "object", description: 'for example {"preferences": {"units": "metric"}}' } },
    required: ["patch"],
    additionalProperties: false,
  },
  permission_class: "workspace_write",
  parallel_safe: false,
  // A merge patch applied twice gives the same document.
  idempotent: true,
  lock: "working_memory",
  async execute(args, ctx) {
    const { version, document } = await port(ctx).updateWorking(args.patch as Record<string, unknown>, ctx.tool_call_id);
    return { version, document };
  },
};

const recall: ToolDefinition = {
  name: "recall",
  description:
    "Searches this user's earlier conversations (their messages and your answers) by words; returns the best matching snippets, each with its session, turn and time.",
  parameters: {
    type: "object",
    properties: {
      query: { type: "string", minLength: 1, maxLength: 500, description: "words to look for" },
      limit: { type: "integer", minimum: 1, maximum: MAX_RECALL_LIMIT, description: "how many snippets (default 5)" },
    },
    required: ["query"],
    additionalProperties: false,
  },
  permission_class: "knowledge",
  parallel_safe: true,
  idempotent: true,
  async execute(args, ctx) {
    const hits = await port(ctx).recall(String(args.query), typeof args.limit === "number" ? args.limit : 5);
    return hits.map((h) => ({ session_id: h.session_id, turn_id: h.turn_id, role: h.role, at: new Date(h.at).toISOString(), snippet: h.snippet }));
  },
};

export const resourceMemoryTools: ToolDefinition[] = [updateWorkingMemory, recall];
