// output_schema (docs/reference/configuration.md): the final answer must be JSON valid against the agent's JSON Schema. The
// provider's structured-output mode is requested where it has one; the runtime validates either way.
import { schemaErrors } from "./json-schema";
import type { JsonSchema } from "./tools/types";

/** Refused final answers are retried this many times before the turn fails. */
export const MAX_OUTPUT_RETRIES = 2;

export function outputInstructions(schema: JsonSchema): string {
  return `When you give your final answer, reply with only a JSON value (no prose, no code fences) that matches this JSON Schema:\n${JSON.stringify(schema)}`;
}

export type ParsedOutput = { ok: true; value: unknown } | { ok: false; errors: string[] };

export function parseFinalAnswer(text: string, schema: JsonSchema): ParsedOutput {
  const body = text.trim().replace(/^```(?:json)?\s*([\s\S]*?)\s*```$/i, "$1");
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch {
    return { ok: false, errors: ["the answer is not valid JSON"] };
  }
  const errors = schemaErrors(schema, value);
  return errors.length === 0 ? { ok: true, value } : { ok: false, errors };
}

export function correctionMessage(errors: string[]): string {
  return `Your final answer does not match the required JSON Schema:\n- ${errors.join("\n- ")}\nReply again with only the corrected JSON.`;
}
