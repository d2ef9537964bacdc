// What the session view is made of: turns, the items a turn or a sub-agent shows in order (text, notes,
// live messages, tool calls), sub-agents inside the calls that started them, and approvals;
// what a tool call's card is named after.
import type { EventOf } from "../../../../src/client/index";

export type CallStatus = "waiting" | "running" | "succeeded" | "failed" | "rejected" | "timed out";
export type ApprovalStatus = "pending" | "approved" | "rejected" | "timed_out" | "answered";
export type TurnStatus = "queued" | "accepted" | "running" | "completed" | "failed" | "cancelled";

export interface Approval {
  action_id: string;
  /** tool_approval: approve or reject a call; user_input: an ask_user question to answer. */
  kind: "tool_approval" | "user_input";
  turn_id: string | null;
  tool_name: string;
  args: unknown;
  question: string | null;
  /** user_input: the JSON Schema of the answer. */
  response_schema: Record<string, unknown> | null;
  /** tool_approval: the tool's parameters when it allows edited arguments (null: no edits). */
  args_schema: Record<string, unknown> | null;
  expires_at: number | null;
  status: ApprovalStatus;
  reason: string | null;
}

/** A session file: an input's attachment or a tool's artifact (GET /v1/sessions/:sid/files/:file_id). */
export interface FileRef {
  file_id: string;
  media_type: string;
  filename: string | null;
  size: number;
}

export interface TextItem {
  kind: "text";
  key: string;
  text: string;
  state: "streaming" | "done" | "interrupted";
}

export interface NoteItem {
  kind: "note";
  key: string;
  tone: "plan" | "info" | "warning" | "error";
  text: string;
}

export interface InjectedItem {
  kind: "injected";
  key: string;
  content: string;
}

/** A transition of an `agent_orchestrate` call (a `run.status` whose parent_id is the call); exec_id is a child session. */
export interface OrchestrationStep {
  key: string;
  phase: string;
  exec_id: string | null;
}

export interface ToolCall {
  kind: "tool";
  key: string;
  name: string;
  args: unknown;
  depth: number;
  status: CallStatus;
  result: unknown;
  has_result: boolean;
  started_at: number | null;
  duration_ms: number | null;
  approval: Approval | null;
  progress: string | null;
  /** The sub-agents this call started (run_subtask, spawn_subagents), in order. */
  agents: SubAgent[];
  steps: OrchestrationStep[];
  /** Files the call returned (artifact.created). */
  files: FileRef[];
  /** The calls a `run_code` script made (their parent_id is this call), in order. */
  children: ToolCall[];
  /** A registered code tool's version that ran (from the turn's tool.catalog.resolved); null: not a code tool. */
  code_version: number | null;
}

export type Item = TextItem | NoteItem | InjectedItem | ToolCall;

/** Where text and tool calls land: a turn's top level, or a sub-agent inside a call. */
export interface Container {
  items: Item[];
  /** The text item the current model call streams into (null between calls). */
  streaming: TextItem | null;
}

export interface SubAgent extends Container {
  id: string;
  title: string;
  depth: number;
  status: "running" | "completed" | "failed";
  result: unknown;
}

export interface Turn extends Container {
  id: string;
  input: string;
  /** The files sent with the input. */
  files: FileRef[];
  status: TurnStatus;
  output: unknown;
  stop_reason: string | null;
  error: string | null;
  input_tokens: number;
  /** Input tokens read from the provider's prompt cache (part of input_tokens). */
  cached_input_tokens: number;
  output_tokens: number;
  /** Sum of cost.recorded; null while no call had a known price. */
  cost_usd: number | null;
}

/** A turn as its first event shows it: accepted, nothing said or spent yet. */
export function newTurn(id: string, input: string, files: FileRef[]): Turn {
  const usage = { input_tokens: 0, cached_input_tokens: 0, output_tokens: 0, cost_usd: null };
  return { id, input, files, status: "accepted", items: [], streaming: null, output: null, stop_reason: null, error: null, ...usage };
}

/** The events that make a tool call's card (the first of them creates it). */
export type CallEvent = EventOf<"tool.started" | "tool.result" | "action.required" | "mcp.progress">;

export function callIdentity(e: CallEvent): { name: string; args: unknown } {
  switch (e.type) {
    case "tool.started":
      return { name: e.payload.name, args: e.payload.args };
    case "tool.result":
      return { name: e.payload.name, args: undefined };
    case "action.required":
      return { name: e.payload.tool_name, args: e.payload.args };
    case "mcp.progress":
      return { name: "tool", args: undefined };
  }
}

/** A call's card as the first of its events shows it: running, nothing returned yet. */
export function newCall(id: string, e: CallEvent): ToolCall {
  const empty = { result: null, has_result: false, started_at: null, duration_ms: null, approval: null, progress: null, code_version: null };
  return { kind: "tool", key: id, ...callIdentity(e), depth: e.depth ?? 0, status: "running", ...empty, agents: [], steps: [], files: [], children: [] };
}

/** A wait on a person as action.required opens it. */
export function newApproval(e: EventOf<"action.required">): Approval {
  const p = e.payload;
  const asked = { question: p.question ?? null, response_schema: p.response_schema ?? null, args_schema: p.args_schema ?? null };
  const id = { action_id: e.action_id ?? e.event_id, kind: p.kind, turn_id: e.turn_id ?? null, tool_name: p.tool_name, args: p.args };
  return { ...id, ...asked, expires_at: p.expires_at, status: "pending", reason: null };
}
