// What an A2A message (src/protocol/a2a.ts) becomes here: a turn's input (text, files by URL or inline
// bytes, data parts as JSON text), or, sent on a task that waits for input, the decisions and answers of
// what it waits for.
import { type Message, partsText, RpcError } from "../protocol/a2a";
import { inputPathsAs } from "../protocol/errors";
import type { InputPart } from "../protocol/input-parts";
import type { Thread } from "../protocol/views";
import type { Answer, Decision } from "./chat-body";
import { answerValue } from "./responses-input";

/** The turn input of the message's parts: a string when they are all text. */
export function turnInput(message: Message): string | InputPart[] {
  const parts: InputPart[] = message.parts.map((p, i) => {
    if (p.text !== undefined) return { type: "text", text: p.text };
    if (p.data !== undefined) return { type: "text", text: JSON.stringify(p.data) };
    const named = p.filename ? { filename: p.filename } : {};
    if (p.url !== undefined) return { type: "file", url: p.url, ...(p.mediaType ? { media_type: p.mediaType } : {}), ...named };
    if (!p.mediaType) {
      const path = `params.message.parts.${i}.mediaType`;
      throw new RpcError("invalidParams", `${path}: is required with raw`, [{ path, reason: "is required with raw" }]);
    }
    return { type: "file", data: p.raw!, media_type: p.mediaType, ...named };
  });
  if (parts.every((p) => p.type === "text")) return parts.map((p) => (p as { text: string }).text).join("\n\n");
  return parts;
}

const PART_FIELDS: Record<string, string> = { data: "raw", url: "url", media_type: "mediaType", filename: "filename" };

/**
 * A refusal of the turn's input, its paths named as the message has them: the input's parts are the message's,
 * in order, so `input[k].data` is `params.message.parts.k.raw` (and `input` all of them).
 */
export function inMessageTerms(err: unknown): unknown {
  return inputPathsAs(err, (k, field) => `params.message.parts.${k}${field ? `.${PART_FIELDS[field] ?? field}` : ""}`, "params.message.parts");
}

const APPROVE = /^\s*(approve|approved|yes|y|ok)\s*[.!]?\s*$/i;
const REJECT = /^\s*(reject|rejected|no|n|deny|denied)\s*[.!]?\s*$/i;

/**
 * The decisions and answers a message gives what the task waits for: a data part may name actions by id
 * (`{"<action_id>": "approve" | "reject" | answer}`) or give `decision` / `answer` for all of them; otherwise
 * the message's text is the answer of a question, and approves or rejects a call (approve, yes, reject, no).
 */
export function actionAnswers(message: Message, pending: Thread["pending_actions"]): { decisions: Decision[]; answers: Answer[] } {
  const data = message.parts.find((p) => p.data !== undefined && typeof p.data === "object" && p.data !== null)?.data as Record<string, unknown> | undefined;
  const text = message.parts.flatMap((p) => (p.text !== undefined ? [p.text] : [])).join("\n");
  const decisions: Decision[] = [];
  const answers: Answer[] = [];
  for (const a of pending) {
    const given = data?.[a.action_id] ?? (a.kind === "user_input" ? data?.answer : data?.decision) ?? (text || (data ? undefined : partsText(message.parts)));
    if (given === undefined) throw new RpcError("invalidParams", `params.message: says nothing for action ${a.action_id} (${a.tool_name})`);
    if (a.kind === "user_input") {
      const output = typeof given === "string" ? given : JSON.stringify(given);
      answers.push(answerValue({ toolCallId: a.tool_call_id!, output, path: "message.parts" }, a.response_schema));
      continue;
    }
    const word = String(given);
    if (!APPROVE.test(word) && !REJECT.test(word)) {
      throw new RpcError("invalidParams", `params.message: action ${a.action_id} approves or rejects a call of ${a.tool_name}: say "approve" or "reject"`);
    }
    decisions.push({ id: a.action_id, approved: APPROVE.test(word) });
  }
  return { decisions, answers };
}
