// The ask_user tool: the model asks the user a question and gets the typed answer as the call's result. The
// loop performs it: the call becomes a user_input action that waits like an approval (durable, with a
// deadline), and the answer, checked against the response schema, is the result.
import { schemaPatternIssues } from "../../protocol/safe-regex";
import { type JsonSchema, runByTheLoop, type ToolDefinition } from "./types";

export const ASK_USER = "ask_user";

/** The answer is a string unless the call says otherwise. */
const DEFAULT_RESPONSE_SCHEMA: JsonSchema = { type: "string" };

export const askUser: ToolDefinition = {
  name: ASK_USER,
  description:
    "Asks the user a question and waits for the answer, which is the result. Give `choices` for a pick from a list, " +
    "or a JSON Schema `response_schema` for a typed answer (an object of strings, numbers, booleans, enums); the answer is a string otherwise. " +
    "If nobody answers in time, the result says timed_out.",
  parameters: {
    type: "object",
    properties: {
      question: { type: "string", minLength: 1, description: "The question, as the user should read it" },
      response_schema: { type: "object", description: "A JSON Schema the answer must satisfy (default: a string)" },
      choices: { type: "array", items: { type: "string" }, minItems: 1, description: "Shortcut for an answer that is one of these strings" },
    },
    required: ["question"],
    additionalProperties: false,
  },
  permission_class: "safe",
  parallel_safe: true,
  // Asking again after a restart changes nothing: the answer is read from the action.
  idempotent: true,
  loop_handled: "ask_user",
  execute: runByTheLoop,
};

/** The schema a question's answer is checked against: its choices as an enum, its response_schema, or a string. */
export function responseSchemaOf(args: Record<string, unknown>): JsonSchema {
  if (Array.isArray(args.choices)) return { type: "string", enum: args.choices };
  if (args.response_schema && typeof args.response_schema === "object") return args.response_schema as JsonSchema;
  return DEFAULT_RESPONSE_SCHEMA;
}

/**
 * The patterns of a response_schema that RE2 cannot compile (the model chose them): the call is refused before
 * anyone is asked, instead of a question nobody could answer.
 */
export function responseSchemaErrors(args: Record<string, unknown>): string[] {
  return schemaPatternIssues(args.response_schema, ["response_schema"]).map((i) => `/${i.path.join("/")}: ${i.reason}`);
}

/** What the model gets when nobody answered before the deadline (a result it can act on, not an error). */
export function unansweredResult(status: "timed_out" | "rejected", reason: string | null | undefined): Record<string, unknown> {
  const message = status === "timed_out" ? "Nobody answered before the deadline." : "The user declined to answer.";
  return { status, message: reason && status === "rejected" ? `${message} ${reason}` : message };
}
