// The Open Responses shapes (docs/guides/open-responses.md) and the pure pieces of their folds: a response's id
// (its session, its turn, and where in the log it begins: no table maps ids), the response object, its output
// items, usage, and the input items a response was given. The stream fold (responses-stream.ts) builds the
// object as it emits its events; GET /v1/responses/:id folds the same events, so both always agree.
import type { ResponsesRequestRecord } from "../protocol/event-shapes";
import type { EventOf, RuntimeEvent } from "../protocol/events";
import { type FileRef, fileUrl } from "../protocol/input-parts";

export type ResponseStatus = "queued" | "in_progress" | "completed" | "failed" | "incomplete" | "cancelled";

export interface OutputText {
  type: "output_text";
  text: string;
  annotations: never[];
}

export type OutputItem =
  | { type: "message"; id: string; status: "in_progress" | "completed"; role: "assistant"; content: OutputText[] }
  | { type: "function_call"; id: string; call_id: string; name: string; arguments: string; status: "in_progress" | "completed" }
  | { type: "function_call_output"; id: string; call_id: string; output: string; status: "completed" }
  | { type: "mcp_approval_request"; id: string; server_label: string; name: string; arguments: string }
  | { type: "reasoning"; id: string; summary: { type: "summary_text"; text: string }[] };

export interface ResponseUsage {
  input_tokens: number;
  input_tokens_details: { cached_tokens: number };
  output_tokens: number;
  output_tokens_details: { reasoning_tokens: number };
  total_tokens: number;
}

/** Why a response is incomplete: a person must approve a call or answer a question, or the answer hit the output cap. */
export type IncompleteReason = "approval_required" | "user_input_required" | "max_output_tokens";

export interface ResponseObject {
  id: string;
  object: "response";
  created_at: number;
  completed_at: number | null;
  status: ResponseStatus;
  error: { code: string; message: string } | null;
  incomplete_details: { reason: IncompleteReason } | null;
  model: string;
  output: OutputItem[];
  usage: ResponseUsage | null;
  instructions: null;
  metadata: Record<string, string>;
  parallel_tool_calls: boolean;
  tool_choice: "auto";
  tools: never[];
  temperature: null;
  top_p: null;
  max_output_tokens: number | null;
  previous_response_id: string | null;
  background: boolean;
  store: true;
  text: { format: { type: "text" } };
  truncation: "disabled";
}

/** The server label of the approvals the runtime asks for (the agent's own tools, whether MCP's or not). */
export const APPROVAL_SERVER_LABEL = "agent-runtime";

const HEX = "[0-9a-f]{24}";
const RESPONSE_ID = new RegExp(`^resp_(${HEX})(${HEX})(?:_([0-9]{1,15}))?$`);

/** Where a response begins: its turn's start (null), or, continuing a paused turn, the log's sequence before its decisions. */
export interface ResponseRef {
  session_id: string;
  turn_id: string;
  after: number | null;
}

/** A response's id: its session's and turn's hex digits, and for a continuation where it begins. */
export function responseId({ session_id, turn_id, after }: ResponseRef): string {
  const tail = after === null ? "" : `_${after}`;
  return `resp_${session_id.replace(/^ses_/, "")}${turn_id.replace(/^trn_/, "")}${tail}`;
}

/**
 * An output or input item's id: its kind's prefix, its session's hex digits and the sequence of the event that
 * made it, so it is unique across sessions (as OpenAI's are) and the same however the response is read again.
 */
export const itemId = (prefix: string, session_id: string, sequence: number): string =>
  `${prefix}_${session_id.replace(/^ses_/, "")}${sequence.toString(16).padStart(8, "0")}`;

/** The parts of a response id, or null when it is none of this runtime's. */
export function parseResponseId(id: string): ResponseRef | null {
  const m = RESPONSE_ID.exec(id);
  if (!m) return null;
  return { session_id: `ses_${m[1]}`, turn_id: `trn_${m[2]}`, after: m[3] === undefined ? null : Number(m[3]) };
}

/** A new response object: nothing in it yet. */
export function responseShell(id: string, model: string, createdAt: number): ResponseObject {
  return {
    id,
    object: "response",
    created_at: createdAt,
    completed_at: null,
    status: "in_progress",
    error: null,
    incomplete_details: null,
    model,
    output: [],
    usage: null,
    instructions: null,
    metadata: {},
    parallel_tool_calls: true,
    tool_choice: "auto",
    tools: [],
    temperature: null,
    top_p: null,
    max_output_tokens: null,
    previous_response_id: null,
    background: false,
    store: true,
    text: { format: { type: "text" } },
    truncation: "disabled",
  };
}

/** What the request that began the response set (a response of a turn submitted otherwise keeps the defaults). */
export function echoRequest(response: ResponseObject, request: ResponsesRequestRecord): void {
  response.previous_response_id = request.previous_response_id;
  response.background = request.background;
  response.metadata = request.metadata ?? {};
  response.max_output_tokens = request.max_output_tokens ?? null;
}

/** Seconds since the epoch, as the Responses API counts time. */
export const seconds = (ms: number): number => Math.floor(ms / 1000);

/** A turn's usage in the Responses shape (cached tokens are part of the input tokens in both). */
export function responseUsage(usage: EventOf<"turn.completed">["payload"]["usage"]): ResponseUsage | null {
  if (!usage) return null;
  return {
    input_tokens: usage.input_tokens,
    input_tokens_details: { cached_tokens: usage.cached_input_tokens ?? 0 },
    output_tokens: usage.output_tokens,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: usage.total_tokens,
  };
}

/**
 * A tool result as a function_call_output carries it: the session files a tool returned (references in the
 * log) each with its absolute `url` under `origin`, the runtime's as the request reached it.
 */
export function withFileUrls(output: unknown, origin: string, sessionId: string): unknown {
  const files = (output as { files?: unknown } | null)?.files;
  if (typeof output !== "object" || output === null || !Array.isArray(files)) return output;
  const linked = files.map((f) => (typeof f?.file_id === "string" ? { ...f, url: fileUrl(origin, sessionId, f.file_id) } : f));
  return { ...output, files: linked };
}

/** A value as the Responses API carries arguments and outputs: text, JSON when it is not text. */
export const asText = (value: unknown): string => (typeof value === "string" ? value : JSON.stringify(value ?? null));

/** A message's content part as the OpenAI API lists it; a file's URL is the session file's, absolute under the request's origin. */
export type InputContent =
  | { type: "input_text"; text: string }
  | { type: "input_image"; detail: "auto"; file_id: string; image_url: string }
  | { type: "input_file"; file_id: string; filename?: string; file_url: string };

/** A file the turn was given, as an input_image (an image) or an input_file (with its name when it has one). */
function inputFile(f: FileRef, origin: string, sessionId: string): InputContent {
  const url = fileUrl(origin, sessionId, f.file_id);
  if (f.media_type.startsWith("image/")) return { type: "input_image", detail: "auto", file_id: f.file_id, image_url: url };
  return { type: "input_file", file_id: f.file_id, ...(f.filename ? { filename: f.filename } : {}), file_url: url };
}

export type InputItem =
  | { type: "message"; id: string; role: "user"; status: "completed"; content: InputContent[] }
  | { type: "mcp_approval_response"; id: string; approval_request_id: string; approve: boolean; reason: string | null }
  | { type: "function_call_output"; id: string; call_id: string; output: string; status: "completed" };

/**
 * The input items of a response from its turn's events: a response that begins its turn was given the turn's
 * input; one that continues a paused turn was given the decisions and answers recorded for the actions that
 * waited when it began (those decided by a person: a deadline's outcome was nobody's input).
 */
export function inputItems(events: Iterable<RuntimeEvent>, ref: ResponseRef, origin: string): InputItem[] {
  const items: InputItem[] = [];
  const waiting = new Set<string>();
  for (const e of events) {
    if (e.turn_id !== ref.turn_id) continue;
    const before = ref.after !== null && e.sequence <= ref.after;
    if (e.type === "turn.submitted" && ref.after === null) {
      const files = (e.payload.files ?? []).map((f) => inputFile(f, origin, ref.session_id));
      const text: InputContent[] = e.payload.input === "" ? [] : [{ type: "input_text", text: e.payload.input }];
      items.push({ type: "message", id: itemId("msg", ref.session_id, e.sequence), role: "user", status: "completed", content: [...text, ...files] });
    } else if (e.type === "action.required" && before) {
      waiting.add(e.action_id!);
    } else if (e.type === "action.resolved" && !before && waiting.delete(e.action_id!) && e.payload.decision !== "timed_out") {
      const id = itemId("in", ref.session_id, e.sequence);
      if (e.payload.decision === "answered") {
        items.push({ type: "function_call_output", id, call_id: e.tool_call_id!, output: asText(e.payload.response), status: "completed" });
      } else {
        items.push({
          type: "mcp_approval_response",
          id,
          approval_request_id: e.action_id!,
          approve: e.payload.decision === "approved",
          reason: e.payload.reason,
        });
      }
    } else if (e.type === "action.resolved" && before) {
      waiting.delete(e.action_id!);
    }
  }
  return items;
}
