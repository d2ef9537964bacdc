// Memory across sessions (docs/guides/memory.md): the agent config's `memory` section, a resource's
// working memory as the API serves it, and recall entries and hits.

import { z } from "zod";
import { modelSpecField, parseModelSpec } from "./model-spec";
import { CanonicalId } from "./principal-id";
import { refineSchemaPatterns } from "./safe-regex";

/** The providers whose embedding models recall can use. */
export const EMBEDDING_PROVIDERS: readonly string[] = ["openai", "openai-compatible"];

/** A resource id: the end user or account a session belongs to (a token's subject, or given at creation). */
/** A resource's id: canonical like a token's subject, which names its own resource. */
export const ResourceId = CanonicalId;

export const MemoryConfigSchema = z.strictObject({
  working: z
    .strictObject({
      schema: z
        .record(z.string(), z.unknown())
        .refine((s) => s.type === "object", { message: 'must be a JSON Schema whose root has type "object"' })
        .superRefine(refineSchemaPatterns)
        .optional()
        .describe(
          "every write of the document (update_working_memory, HTTP, the inspector) is held to it: a problem at a key the write changes refuses it; one the stored document already had, at a key left as it was, does not",
        ),
      template: z.record(z.string(), z.unknown()).optional().describe("the document before its first update"),
      scope: z.enum(["resource", "agent"]).default("resource").describe("resource: one document per resource; agent: one per resource and agent"),
    })
    .optional()
    .describe("the working memory shown to the model at each turn's start and kept by update_working_memory"),
  recall: z
    .strictObject({
      auto: z
        .strictObject({
          top_k: z.int().min(1).max(20).default(3).describe("the most earlier messages added"),
          max_tokens: z.int().min(1).max(4_000).default(500).describe("the most tokens (estimated) the added messages may take"),
        })
        .optional()
        .describe(
          "before a turn's first model call, search the resource's other sessions with the turn's input and add the best matches to the turn's system prompt (memory.recalled)",
        ),
      embedding_model: modelSpecField
        .refine((s) => EMBEDDING_PROVIDERS.includes(parseModelSpec(s)?.provider ?? ""), { message: `must be a model of ${EMBEDDING_PROVIDERS.join(" or ")}` })
        .optional()
        .describe("embed each indexed message and each query with this model (AI SDK embed) and rank by words and meaning together"),
    })
    .optional(),
});
export type MemoryConfig = z.infer<typeof MemoryConfigSchema>;

export const WorkingMemorySchema = z
  .object({
    resource_id: z.string(),
    agent: z.string().nullable().describe("the agent of an agent-scoped document; null for the resource's own"),
    document: z.record(z.string(), z.unknown()),
    version: z.int().describe("0 before the first write"),
    updated_at: z.number().nullable(),
  })
  .meta({ id: "WorkingMemory" });
export type WorkingMemory = z.infer<typeof WorkingMemorySchema>;

/** One message of an ended turn in the recall index. */
export type RecallEntry = {
  session_id: string;
  turn_id: string;
  role: "user" | "assistant";
  at: number;
  text: string;
  /** Its embedding, when the agent has memory.recall.embedding_model. */
  vector?: number[];
};

export const RecallHitSchema = z
  .object({
    session_id: z.string(),
    turn_id: z.string(),
    role: z.enum(["user", "assistant"]),
    at: z.number().describe("when the turn ended, ms since the epoch"),
    snippet: z.string(),
    score: z.number().describe("lower is a better match: bm25, or with an embedding model minus the fused rank score of words and meaning"),
  })
  .meta({ id: "RecallHit" });
export type RecallHit = z.infer<typeof RecallHitSchema>;

export const MemoryRecalledSchema = z
  .object({
    resource_id: z.string().nullable().describe("null in a replay: the hits are the recorded turn's"),
    query: z.string().describe("the turn's input, searched as words"),
    hits: z.array(RecallHitSchema).describe("the messages added to the prompt, best first"),
    tokens: z.int().describe("the estimated tokens the hits added to the prompt"),
    replayed: z.boolean().optional().describe("true: the hits were taken from the replayed turn's memory.recalled, not searched"),
  })
  .describe("automatic recall (memory.recall.auto) added earlier conversations of the resource to the turn's prompt (docs/guides/memory.md)");
export type MemoryRecalled = z.infer<typeof MemoryRecalledSchema>;

export const MemoryLoadedSchema = z
  .object({
    resource_id: z.string().nullable().describe("null in a replay: the document is the recorded turn's"),
    agent: z.string().nullable().describe("the agent of an agent-scoped document; null for the resource's own"),
    version: z.int().describe("the document's version (0 before the first write)"),
    document: z
      .record(z.string(), z.unknown())
      .optional()
      .describe(
        "the document as the turn's system prompt showed it (before any cut to the prompt's budget); left out when the session's last memory.loaded of the same resource and agent showed the same document (see document_at)",
      ),
    document_at: z
      .int()
      .optional()
      .describe("when `document` is left out: the sequence of the session's memory.loaded that holds the document, unchanged since"),
    replayed: z.boolean().optional().describe("true: the document was taken from the replayed turn's memory.loaded, not read"),
  })
  .describe(
    "the working memory (memory.working) shown to the model from the turn's start, or from a handoff to an agent with it (docs/guides/memory.md); a resumed turn keeps it",
  );
export type MemoryLoaded = z.infer<typeof MemoryLoadedSchema>;
