// Answering an ask_user question at the terminal (`agent-runtime chat`): the prompt shows the question and,
// for a choice, the choices; the line typed is read as the schema's type (text, a number, yes/no, a choice, or
// JSON for an object). An empty line declines the question.
import { indent } from "./format";

type Schema = { type?: unknown; enum?: unknown[] };

/** The prompt for a question: `? Which size? [S/M/L] `, with what an object or a number expects. */
export function questionPrompt(question: string, schema: Record<string, unknown> | undefined, depth = 0): string {
  const s = (schema ?? {}) as Schema;
  const hint = Array.isArray(s.enum)
    ? `[${s.enum.map(String).join("/")}]`
    : s.type === "string" || s.type === undefined
      ? ""
      : `(${s.type}${s.type === "object" ? ", as JSON" : ""})`;
  return `${indent(depth)}? ${question}${hint ? ` ${hint}` : ""} `;
}

/**
 * The answer a line gives, read as the schema says: `{decline: true}` for an empty line, `{response}` for an
 * answer to send (the server checks it against the schema), or null when the line cannot be one (ask again).
 */
export function parseAnswer(line: string, schema: Record<string, unknown> | undefined): { response: unknown } | { decline: true } | null {
  const text = line.trim();
  if (text === "") return { decline: true };
  const s = (schema ?? {}) as Schema;
  if (Array.isArray(s.enum)) {
    const pick = s.enum.find((c) => String(c) === text) ?? s.enum.find((c) => String(c).toLowerCase() === text.toLowerCase());
    return pick === undefined ? null : { response: pick };
  }
  switch (s.type) {
    case "number":
    case "integer": {
      const n = Number(text);
      return Number.isFinite(n) ? { response: n } : null;
    }
    case "boolean":
      if (/^(y|yes|true)$/i.test(text)) return { response: true };
      return /^(n|no|false)$/i.test(text) ? { response: false } : null;
    case "object":
    case "array":
      try {
        return { response: JSON.parse(text) };
      } catch {
        return null;
      }
    default:
      return { response: text };
  }
}
