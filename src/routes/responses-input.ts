// A Responses request's input in this runtime's terms: messages become a turn's input (text and file parts),
// `mcp_approval_response` and `function_call_output` items become decisions and answers on the paused turn.
// Checked whole before anything is recorded; each refusal names the item's field (`input.2.type`).
import { ApiError, type FieldIssue, inputPathsAs } from "../protocol/errors";
import type { InputPart } from "../protocol/input-parts";
import type { ResponsesRequest } from "../protocol/operations/responses";
import type { Answer, Decision } from "./chat-body";

export type ResponsesInput =
  | { kind: "turn"; input: string | InputPart[]; fileIds: string[]; sources: Map<InputPart, FileSource> }
  | { kind: "decisions"; decisions: Decision[]; answers: RawAnswer[]; fields: Map<string, string> };

/** A function_call_output: its text, read against its question's schema once the question is found. */
export interface RawAnswer {
  toolCallId: string;
  output: string;
  path: string;
}

/** Where a file part came from in the request: its content part, and the field that held its data or URL. */
export interface FileSource {
  at: string;
  field: string;
}

const ITEM_TYPES = "message, mcp_approval_response or function_call_output";
const DATA_URL = /^data:([\w.+-]+\/[\w.+-]+);base64,([A-Za-z0-9+/=\s]+)$/;

type Item = Record<string, unknown>;
const text = (v: unknown): v is string => typeof v === "string";

/** A file part from an image or file content part: a session file by id, a data URL, or a URL to fetch. */
function filePart(part: Item, path: string, issues: FieldIssue[], sources: Map<InputPart, FileSource>): InputPart | null {
  const image = part.type === "input_image";
  const url = image ? part.image_url : (part.file_url ?? part.file_data);
  const field = image ? "image_url" : part.file_url !== undefined ? "file_url" : "file_data";
  const made = (file: InputPart) => {
    sources.set(file, { at: path, field });
    return file;
  };
  const filename = text(part.filename) ? { filename: part.filename } : {};
  if (text(part.file_id) && url === undefined) return made({ type: "file", file_id: part.file_id, ...filename });
  if (!text(url) || (part.file_id !== undefined && part.file_id !== null)) {
    issues.push({ path, reason: image ? "needs one of image_url and file_id" : "needs one of file_id, file_data and file_url" });
    return null;
  }
  const data = DATA_URL.exec(url);
  if (data) return made({ type: "file", data: data[2]!.replace(/\s/g, ""), media_type: data[1]!, ...filename });
  if (/^https?:\/\//.test(url) && part.file_data === undefined) return made({ type: "file", url, ...filename });
  issues.push({
    path: `${path}.${image ? "image_url" : part.file_data !== undefined ? "file_data" : "file_url"}`,
    reason: "must be a data: URL (base64) or an http(s) URL",
  });
  return null;
}

/** A message's content as parts (a string is one text part). */
function messageParts(item: Item, path: string, issues: FieldIssue[], sources: Map<InputPart, FileSource>): InputPart[] {
  const { content } = item;
  if (text(content)) return [{ type: "text", text: content }];
  if (!Array.isArray(content) || content.length === 0) {
    issues.push({ path: `${path}.content`, reason: "must be text or a non-empty list of input_text, input_image and input_file parts" });
    return [];
  }
  return content.flatMap((raw: unknown, j): InputPart[] => {
    const part = (raw ?? {}) as Item;
    const at = `${path}.content.${j}`;
    if (part.type === "input_text" && text(part.text)) return [{ type: "text", text: part.text }];
    if (part.type === "input_image" || part.type === "input_file") {
      const file = filePart(part, at, issues, sources);
      return file ? [file] : [];
    }
    issues.push({ path: part.type === "input_text" ? `${at}.text` : `${at}.type`, reason: "must be input_text (with text), input_image or input_file" });
    return [];
  });
}

/** The request's input, or a 422 naming every field it refuses (and nothing recorded). */
export function responsesInput(body: ResponsesRequest): ResponsesInput {
  const issues: FieldIssue[] = [];
  const preface = body.instructions ? [`Instructions for this response:\n${body.instructions}`] : [];
  const items = text(body.input) ? [{ type: "message", role: "user", content: body.input }] : (body.input as Item[]);
  const parts: InputPart[] = [];
  const sources = new Map<InputPart, FileSource>();
  const decisions: Decision[] = [];
  const answers: RawAnswer[] = [];
  // Each approval request's or question's id, to the field that answers it: one answer each (two would record
  // the first before the second is refused).
  const fields = new Map<string, string>();
  const answering = (id: string, path: string) => {
    const earlier = fields.get(id);
    if (earlier) issues.push({ path, reason: `answers what ${earlier.slice(0, earlier.lastIndexOf("."))} answers already: one answer each` });
    else fields.set(id, path);
  };
  items.forEach((item, i) => {
    const path = `input.${i}`;
    const type = item.type ?? "message";
    if (type === "message" && (item.role === "system" || item.role === "developer") && text(item.content)) preface.push(item.content);
    else if (type === "message" && item.role === "user") parts.push(...messageParts(item, path, issues, sources));
    else if (type === "message")
      issues.push({
        path: `${path}.role`,
        reason: "must be user (or system/developer with text): the runtime keeps the conversation, continue it with previous_response_id",
      });
    else if (type === "mcp_approval_response" && text(item.approval_request_id) && typeof item.approve === "boolean") {
      answering(item.approval_request_id, `${path}.approval_request_id`);
      decisions.push({ id: item.approval_request_id, approved: item.approve, ...(text(item.reason) ? { reason: item.reason } : {}) });
    } else if (type === "function_call_output" && text(item.call_id) && text(item.output)) {
      answering(item.call_id, `${path}.call_id`);
      answers.push({ toolCallId: item.call_id, output: item.output, path: `${path}.output` });
    } else if (type === "mcp_approval_response" || type === "function_call_output") {
      const needs = type === "mcp_approval_response" ? "approval_request_id (text) and approve (boolean)" : "call_id and output (text)";
      issues.push({ path, reason: `needs ${needs}` });
    } else issues.push({ path: `${path}.type`, reason: `must be ${ITEM_TYPES}` });
  });
  const deciding = decisions.length + answers.length > 0;
  if (deciding && parts.length + preface.length > 0) {
    issues.push({ path: "input", reason: "approvals and answers continue the paused response: send messages in a request of their own" });
  }
  if (deciding && !body.previous_response_id)
    issues.push({ path: "previous_response_id", reason: "is required with mcp_approval_response and function_call_output items" });
  if (!deciding && parts.length === 0 && issues.length === 0) issues.push({ path: "input", reason: "holds no user message" });
  if (issues.length > 0) throw ApiError.validation(issues);
  if (deciding) return { kind: "decisions", decisions, answers, fields };
  const all: InputPart[] = [...preface.map((t): InputPart => ({ type: "text", text: t })), ...parts];
  const fileIds = all.flatMap((p) => (p.type === "file" && p.file_id ? [p.file_id] : []));
  const onlyText = all.every((p) => p.type === "text");
  return { kind: "turn", input: onlyText ? all.map((p) => (p.type === "text" ? p.text : "")).join("\n\n") : all, fileIds, sources };
}

/**
 * An answer's value: its text as it is for a question whose answer is text, else the JSON it holds (a
 * question with a schema of numbers, booleans or objects).
 */
export function answerValue(raw: RawAnswer, schema: Record<string, unknown> | undefined): Answer {
  if (!schema || schema.type === "string" || schema.type === undefined) return { toolCallId: raw.toolCallId, response: raw.output };
  try {
    return { toolCallId: raw.toolCallId, response: JSON.parse(raw.output) as unknown };
  } catch {
    throw ApiError.validation([{ path: raw.path, reason: "must be JSON: the question's answer is not text" }]);
  }
}

/**
 * A refusal of the turn's input, its paths named as the request has them: `input[k].url` (the turn's k-th
 * part) is the content part that part came from, at the field that held it (`input.0.content.1.image_url`).
 */
export function inRequestTerms(err: unknown, input: Extract<ResponsesInput, { kind: "turn" }>): unknown {
  const parts = input.input;
  if (typeof parts === "string") return err;
  return inputPathsAs(err, (k, field, whole) => {
    const source = input.sources.get(parts[k]!);
    if (!source) return whole;
    return field === "file_id" ? `${source.at}.file_id` : field === "data" || field === "url" ? `${source.at}.${source.field}` : source.at;
  });
}
