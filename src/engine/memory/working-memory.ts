// Working memory (docs/guides/memory.md): one JSON document per resource (or per resource and agent), changed by JSON merge
// patches (RFC 7396) and checked against the agent's optional JSON Schema; and how it is shown to the model.
import type { EventDraft } from "../../protocol/events";
import type { MemoryLoaded } from "../../protocol/memory";
import { own } from "../../protocol/own-key";
import { pointerKeys, schemaIssues } from "../json-schema";
import type { JsonSchema } from "../tools/types";

/** What the system prompt may spend on working memory, in characters (about 1,000 tokens). */
export const WORKING_MEMORY_PROMPT_CHARS = 4_000;
/** The largest working memory document, in bytes of its JSON. */
export const MAX_WORKING_MEMORY_BYTES = 64 * 1024;

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

const isObject = (v: unknown): v is Record<string, Json> => typeof v === "object" && v !== null && !Array.isArray(v);

/** RFC 7396: objects merge key by key, `null` removes a key, anything else replaces. */
export function mergePatch(target: Json, patch: Json): Json {
  if (!isObject(patch)) return patch;
  const out: Record<string, Json> = isObject(target) ? { ...target } : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete out[key];
    // Defined, not assigned: an assigned "__proto__" would replace the object's prototype and the key would vanish.
    else Object.defineProperty(out, key, { value: mergePatch(own(out, key) ?? null, value), enumerable: true, writable: true, configurable: true });
  }
  return out;
}

/** A reason a document may not be stored, at the JSON Pointer of the value at fault ("" for the whole document). */
export type DocumentProblem = { pointer: string; reason: string };

/**
 * Why `after` may not replace `before` (empty when it may): its size, then the schema's problems that the write
 * brings. A problem `before` had already, at a top-level key the write leaves as it was (or at the root), is not the
 * write's: a schema changed since the document was stored must not block updates of its other keys.
 */
export function documentProblems(before: Json, after: Json, schema: JsonSchema | undefined): DocumentProblem[] {
  const bytes = new TextEncoder().encode(JSON.stringify(after)).length;
  if (bytes > MAX_WORKING_MEMORY_BYTES) return [{ pointer: "", reason: `the document is ${bytes} bytes, over the limit of ${MAX_WORKING_MEMORY_BYTES}` }];
  if (!schema) return [];
  const problems = schemaIssues(schema, after);
  if (problems.length === 0) return [];
  const old = new Set(schemaIssues(schema, before).map((p) => `${p.pointer}\n${p.reason}`));
  const unchanged = (pointer: string) => {
    const key = pointerKeys(pointer)[0];
    return key === undefined || JSON.stringify(field(before, key)) === JSON.stringify(field(after, key));
  };
  return problems.filter((p) => !(old.has(`${p.pointer}\n${p.reason}`) && unchanged(p.pointer)));
}

const field = (document: Json, key: string): Json | undefined => (isObject(document) ? document[key] : undefined);

/** The system prompt's section on working memory: the document, cut to the budget (the model is told when it is). */
export function workingMemoryPrompt(document: Json, canUpdate: boolean): string {
  let text = JSON.stringify(document, null, 1);
  if (text.length > WORKING_MEMORY_PROMPT_CHARS)
    text = `${text.slice(0, WORKING_MEMORY_PROMPT_CHARS)}\n... (cut: the document is longer than the prompt allows)`;
  const how = canUpdate ? " Keep it current with update_working_memory (a JSON merge patch) when you learn something lasting about the user." : "";
  return `Working memory (what is known about this user from earlier conversations):${how}\n${text}`;
}

/** The working memory a turn's log shows it was given (memory.loaded), in order: its start, then each handoff. */
export function loadedWorkingMemory(events: readonly EventDraft[]): MemoryLoaded[] {
  return events.flatMap((e) => (e.type === "memory.loaded" && !e.subagent_id ? [e.payload] : []));
}
