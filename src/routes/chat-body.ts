// The body an AI SDK `DefaultChatTransport` POSTs (`{id, messages, trigger, messageId?, ...body extras}`),
// and what it asks for: a new turn from the last user message, or decisions on pending approvals and answers
// to ask_user questions (the client's tool output for the call, `addToolOutput`).

import { ASK_USER } from "../engine/tools/ask-user";
import { ApiError, type FieldIssue, inputPathsAs } from "../protocol/errors";
import type { InputPart } from "../protocol/input-parts";
import type { ChatBody } from "../protocol/operations/chat";
import { longAnswerText, TurnInput } from "../protocol/wire";

export interface Decision {
  id: string;
  approved: boolean;
  reason?: string;
}

/** The user's answer to an ask_user call: the tool output the client added for it. */
export interface Answer {
  toolCallId: string;
  response: unknown;
}

export type ChatAction =
  | { kind: "decisions"; decisions: Decision[]; answers: Answer[] }
  /**
   * `files`: the message's file parts, as the turn's input parts (turn-attachments.ts stores them); `filePaths`:
   * where each came from in the request (`messages.N.parts.M`), so a refusal names the client's own field.
   */
  | { kind: "turn"; input: string; files: FilePart[]; filePaths: string[]; userMessageId: string; regenerate: boolean };

type FilePart = Extract<InputPart, { type: "file" }>;

type Message = ChatBody["messages"][number];
type Part = Message["parts"][number];

const isToolPart = (p: Part) => p.type === "dynamic-tool" || p.type.startsWith("tool-");

/** What the request asks for; a 422 naming the field when it asks for nothing the runtime can do. */
export function chatAction(body: ChatBody): ChatAction {
  const { messages } = body;
  const at = body.messageId === undefined ? messages.length - 1 : messages.findIndex((m) => m.id === body.messageId);
  const target = messages[at];
  if (body.trigger === "submit-message" && target?.role === "assistant") {
    const decisions = answeredApprovals(target, at);
    const answers = answeredQuestions(target, at);
    if (decisions.length > 0 || answers.length > 0) return { kind: "decisions", decisions, answers };
  }
  const last = messages.length - 1;
  const input = messages[last]!;
  if (input.role !== "user") {
    throw ApiError.validation([
      { path: "messages", reason: "must end with a user message (or messageId must name an assistant message with answered approvals)" },
    ]);
  }
  return { kind: "turn", ...userInput(input, last), userMessageId: input.id, regenerate: body.trigger === "regenerate-message" };
}

/** A useChat file part (`{type: "file", mediaType, url, filename?}`, the url a data URL or a link) as an input part. */
function filePart(part: Part, path: string, issues: FieldIssue[]): FilePart | null {
  const { url, mediaType, filename } = part as { url?: unknown; mediaType?: unknown; filename?: unknown };
  if (typeof mediaType !== "string" || mediaType === "") issues.push({ path: `${path}.mediaType`, reason: "must be a non-empty string" });
  else if (filename !== undefined && typeof filename !== "string") issues.push({ path: `${path}.filename`, reason: "must be a string" });
  else if (typeof url === "string" && url.startsWith("data:")) {
    const data = /^data:[^,]*;base64,(.*)$/s.exec(url)?.[1];
    if (data !== undefined) return { type: "file", data, media_type: mediaType, ...(filename ? { filename } : {}) };
    issues.push({ path: `${path}.url`, reason: "must be a base64 data URL (data:<type>;base64,...)" });
  } else if (typeof url === "string" && /^https?:\/\//.test(url)) return { type: "file", url, media_type: mediaType, ...(filename ? { filename } : {}) };
  else issues.push({ path: `${path}.url`, reason: "must be a data URL or an http(s) URL" });
  return null;
}

/** The user's message as the turn's input: its text parts joined, and its file parts. */
function userInput(message: Message, index: number): { input: string; files: FilePart[]; filePaths: string[] } {
  const issues: FieldIssue[] = [];
  const texts: string[] = [];
  const files: FilePart[] = [];
  const filePaths: string[] = [];
  message.parts.forEach((part, j) => {
    const path = `messages.${index}.parts.${j}`;
    if (part.type === "step-start") return;
    if (part.type === "file") {
      const file = filePart(part, path, issues);
      if (file) {
        files.push(file);
        filePaths.push(path);
      }
    } else if (part.type !== "text")
      issues.push({ path: `${path}.type`, reason: "is not supported in the input: only text and file parts become a turn's input" });
    else if (typeof part.text !== "string") issues.push({ path: `${path}.text`, reason: "must be a string" });
    else texts.push(part.text);
  });
  if (issues.length > 0) throw ApiError.validation(issues);
  const input = texts.join("\n");
  // A message of files alone needs no text.
  if (files.length > 0 && input.trim() === "") return { input: "", files, filePaths };
  const checked = TurnInput.safeParse(input.trim() === "" ? "" : input);
  if (!checked.success) throw ApiError.validation([{ path: `messages.${index}.parts`, reason: `the text ${checked.error.issues[0]!.message}` }]);
  return { input, files, filePaths };
}

/**
 * A refusal of the turn's input, its paths named as the chat request has them: the turn's input is
 * [the text, ...the files], so `input[k]` (k >= 1) is the (k-1)th file part's place in the message.
 */
export function inChatTerms(err: unknown, filePaths: string[]): unknown {
  return inputPathsAs(err, (k, field, whole) => {
    const at = filePaths[k - 1];
    return at === undefined ? whole : `${at}${field ? `.${field}` : ""}`;
  });
}

/** The ask_user parts of the message's last step that carry the client's output: the user's answers. */
function answeredQuestions(message: Message, index: number): Answer[] {
  const stepStart = message.parts.findLastIndex((p) => p.type === "step-start");
  return message.parts.flatMap((part, j) => {
    const name = part.type === "dynamic-tool" ? part.toolName : part.type.slice("tool-".length);
    if (j <= stepStart || !isToolPart(part) || name !== ASK_USER || part.state !== "output-available") return [];
    // Capped here too, so the refusal names the client's own field rather than the action's `response`.
    const long = longAnswerText(part.output, `messages.${index}.parts.${j}.output`);
    if (long) throw ApiError.validation([long]);
    return typeof part.toolCallId === "string" ? [{ toolCallId: part.toolCallId, response: part.output }] : [];
  });
}

/** The tool parts of the message's last step that the user answered (state `approval-responded`). */
function answeredApprovals(message: Message, index: number): Decision[] {
  const stepStart = message.parts.findLastIndex((p) => p.type === "step-start");
  const decisions: Decision[] = [];
  const issues: FieldIssue[] = [];
  message.parts.forEach((part, j) => {
    if (j <= stepStart || !isToolPart(part) || part.state !== "approval-responded") return;
    const approval = (part.approval ?? {}) as Record<string, unknown>;
    const path = `messages.${index}.parts.${j}.approval`;
    if (typeof approval.id !== "string" || approval.id === "") issues.push({ path: `${path}.id`, reason: "must be a non-empty string" });
    else if (typeof approval.approved !== "boolean") issues.push({ path: `${path}.approved`, reason: "must be a boolean" });
    else if (approval.reason !== undefined && (typeof approval.reason !== "string" || approval.reason.length > 1000)) {
      issues.push({ path: `${path}.reason`, reason: "must be a string of at most 1000 characters" });
    } else if (decisions.some((d) => d.id === approval.id)) {
      // Checked before anything is recorded: the first answer must not go through and the request then fail.
      issues.push({ path: `${path}.id`, reason: "answers an approval an earlier part of this message answers" });
    } else decisions.push({ id: approval.id, approved: approval.approved, ...(approval.reason ? { reason: approval.reason as string } : {}) });
  });
  if (issues.length > 0) throw ApiError.validation(issues);
  return decisions;
}
