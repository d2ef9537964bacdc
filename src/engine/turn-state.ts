// The durable working state of one turn. It is checkpointed after every transition (model response,
// tool start, tool result), so the loop can continue from it after a restart.
import type { JSONValue, ModelMessage } from "ai";
import type { EventDraft, PayloadOf } from "../protocol/events";
import type { FileRef } from "../protocol/input-parts";
import type { ApprovalDecision } from "../protocol/wire";
import { userMessage } from "./file-parts";
import type { CallReservation } from "./lost-calls";
import type { OrchestrationRecord } from "./orchestration/types";
import { type CodeRun, codeSeen } from "./tools/code-mode";
import type { WebhookReceipt } from "./tools/types";

export interface Usage {
  input_tokens: number;
  output_tokens: number;
  total_tokens: number;
  /** Input tokens read from the provider's prompt cache (part of input_tokens); absent when none. */
  cached_input_tokens?: number;
}

export interface ToolCallRecord {
  tool_call_id: string;
  name: string;
  args: unknown;
  /** Why the call cannot run (unparsable arguments, unknown tool); it gets an error result. */
  invalid?: string;
  status: "pending" | "started" | "done";
  /** For a tool in hitl_tools: the approval this call waits for, or got; for ask_user: the question and its answer. */
  approval?: {
    action_id: string;
    status: "pending" | ApprovalDecision;
    expires_at: number;
    reason?: string | null;
    response?: unknown;
    /** Approved with edits: the arguments it runs with (injected ones aside), who edited them, and whether the tool_input guardrails checked them. */
    edited?: { args: Record<string, unknown>; by: string; guarded?: boolean };
  };
  started_at?: number;
  result?: { output: unknown; is_error: boolean };
  /** A webhook call's receipt, once it settled (tool.result's metadata.receipt). */
  receipt?: WebhookReceipt;
  /** Sub-agents this call runs (run_subtask: one; spawn_subagents: one per job), with their own loop state. */
  children?: ChildRun[];
  /** A run_code call's script state: its inner calls and what it saw of the clock (code-mode-run.ts). */
  code?: CodeRun;
  /** An agent_orchestrate call's plan and progress. */
  orchestration?: OrchestrationRecord;
  /** The tool_input guardrails ran on the arguments (they may have been redacted). */
  guarded?: boolean;
  /** The call's result asked the user (asks_user): the arguments the answer is sent with, once `approval` has it. */
  follow_up?: Record<string, unknown>;
  /** The agent (and its version) whose tool asked: a question the turn's end drops is released with that tool's config. */
  asked_by?: { agent: string; version: number | null };
  /** Why a tool_input guardrail refused the call; it gets this as its error result and does not run. */
  blocked?: string;
}

/** A sub-agent: an isolated loop inside the turn, whose state lives in its parent's tool call. */
export interface ChildRun {
  subagent_id: string;
  /** The job's position in spawn_subagents (0 for run_subtask). */
  index: number;
  title: string;
  depth: number;
  /** Names of the tools it may use (a subset of its parent's). */
  tools: string[];
  /** With a schema the child must finish through finish_subtask. */
  output_schema: Record<string, unknown> | null;
  system: string;
  state: TurnState;
  /** finish_subtask calls refused so far. */
  finish_rejections: number;
  /** The accepted finish_subtask value, once given. */
  finished?: { value: unknown };
  result?: { status: "success"; output: unknown } | { status: "error"; error: string };
}

/** Counters of a turn's budget, shared by every level of sub-agents. */
export interface BudgetUsed {
  llm_calls: number;
  tool_calls: number;
  subtasks: number;
}

/** A model call under way, as the checkpoint keeps it. */
export interface OpenModelStep {
  step_id: string;
  phase: "executor" | "planner" | "compaction";
  reservation?: CallReservation;
  /** The provider's id of the call's response, once it named it (a call that can be re-attached: response-attach.ts). */
  response_id?: string;
  /** The quota reservation made for the call (quota-reservation.ts), settled by the recovery when a restart cuts the call. */
  quota_reservation?: string;
}

export interface TurnState {
  version: 1;
  turn_id: string;
  started_at: number;
  /** Model calls made so far. */
  step: number;
  step_id: string | null;
  /** This turn's conversation, starting with the user's input; earlier turns live in the thread history. */
  messages: ModelMessage[];
  /** Tool calls of the latest model response, until their results are fed back. */
  calls: ToolCallRecord[] | null;
  usage: Usage;
  /** Text of the latest model response. */
  output: string;
  /** How many times the turn was resumed after its object restarted. */
  recoveries?: number;
  /** The planner's plan; undefined until the planner pass ran (when planning is enabled). */
  plan?: string;
  /** The inbox position of the last injected message taken into the conversation (see TurnSignals). */
  messages_taken?: number;
  /** The model call under way (model.requested without model.completed yet). */
  open_model_step?: OpenModelStep | null;
  /** A call a restart cut whose provider response can be read again (response-attach.ts): the next call with its request re-attaches. */
  reattach?: OpenModelStep | null;
  /** The latest model response was a final answer (no tool calls), not yet accepted. */
  answered?: boolean;
  /** Set while the turn waits for human decisions (no executor runs meanwhile). */
  paused_at?: number | null;
  /** Time spent waiting for decisions; it does not count against the turn's wall-clock budget. */
  waited_ms?: number;
  /** Budget counters (kept on the turn's root state only). */
  budget_used?: BudgetUsed;
  /** Cost of the turn's model calls so far, when the models' prices are known. */
  cost_usd?: number;
  /** Final answers refused by output_schema so far. */
  output_rejections?: number;
  /** Input guardrails that ran: on the turn's input, and on live messages up to this inbox position. */
  input_guarded?: { input: boolean; inbox: number };
}

export function emptyUsage(): Usage {
  return { input_tokens: 0, output_tokens: 0, total_tokens: 0 };
}

export function newTurnState(turnId: string, input: string, now: number, files?: readonly FileRef[]): TurnState {
  return {
    version: 1,
    turn_id: turnId,
    started_at: now,
    step: 0,
    step_id: null,
    messages: [userMessage(input, files)],
    calls: null,
    usage: emptyUsage(),
    output: "",
  };
}

export function toolResultPart(call: ToolCallRecord) {
  const { output, is_error } = call.result!;
  const text = typeof output === "string" ? output : JSON.stringify(output ?? null);
  return {
    type: "tool-result" as const,
    toolCallId: call.tool_call_id,
    toolName: call.name,
    output: is_error
      ? { type: "error-text" as const, value: text }
      : typeof output === "string"
        ? { type: "text" as const, value: output }
        : // A result is JSON: it is recorded in the log as such, and a resumed turn reads it from there.
          { type: "json" as const, value: (output ?? null) as JSONValue },
  };
}

/**
 * The messages a finished turn leaves in the thread history. Calls that never ran get an error result,
 * so the history stays a valid provider conversation (every tool call answered).
 */
export function finalMessages(state: TurnState, unrunReason: string, cut: "cancelled" | "interrupted" = "interrupted"): ModelMessage[] {
  if (!state.calls) return state.messages;
  // A call in flight is answered as closingEvents closed it in the log; one that never started, as not executed.
  const unanswered = (c: ToolCallRecord) => (c.status === "started" ? cutToolOutput(cut) : `Tool call not executed: ${unrunReason}`);
  const parts = state.calls.map((c) => toolResultPart(c.result ? c : { ...c, result: { output: unanswered(c), is_error: true } }));
  return [...state.messages, { role: "tool", content: parts }];
}

/** The metadata of a tool result (docs/guides/tools-and-permissions.md). */
export function resultMetadata(
  call: Pick<ToolCallRecord, "approval" | "receipt" | "code">,
  is_error: boolean,
  started_at: number,
  completed_at: number,
  injected_args: Record<string, unknown>,
  offloaded_artifact_id: string | null = null,
): PayloadOf<"tool.result">["metadata"] {
  const approval = call.approval && call.approval.status !== "pending" ? call.approval : null;
  const refused = approval && isRefusal(approval.status) ? approval.status : null;
  return {
    status: refused ?? (is_error ? "error" : "success"),
    started_at,
    completed_at,
    execution_time_ms: completed_at - started_at,
    approval_status: approval?.status ?? "not_required",
    approval_id: approval?.action_id ?? null,
    injected_args,
    offloaded_artifact_id,
    ...(approval?.edited ? { args_edited_by: approval.edited.by } : {}),
    ...(call.receipt ? { receipt: call.receipt } : {}),
    ...(call.code ? { script: codeSeen(call.code) } : {}),
  };
}

/** Where a call sits: the envelope fields of its level (root: no parent, depth 0). */
export interface CallPlace {
  state: TurnState;
  parent_id: string | null;
  depth: number;
  subagent_id?: string;
}

/** Every level of the turn, the root first, then each sub-agent's (depth first). */
export function levels(root: TurnState): CallPlace[] {
  const out: CallPlace[] = [];
  const visit = (place: CallPlace) => {
    out.push(place);
    for (const c of place.state.calls ?? []) {
      for (const child of c.children ?? []) {
        visit({ state: child.state, parent_id: c.tool_call_id, depth: child.depth, subagent_id: child.subagent_id });
      }
      // A script's inner calls sit under its run_code call, at its level's agent.
      if (c.code)
        visit({ state: c.code.state, parent_id: c.tool_call_id, depth: place.depth + 1, ...(place.subagent_id ? { subagent_id: place.subagent_id } : {}) });
    }
  };
  visit({ state: root, parent_id: null, depth: 0 });
  return out;
}

export function pendingApprovals(root: TurnState): ToolCallRecord[] {
  return levels(root).flatMap((l) => (l.state.calls ?? []).filter((c) => c.approval?.status === "pending"));
}

/** A decision recorded for an approval (by a person, or the deadline), not yet applied to the turn's state. */
export interface RecordedDecision {
  status: ApprovalDecision;
  reason: string | null;
  /** An answered question's answer. */
  response?: unknown;
  /** Approved with edited arguments, by this principal. */
  args?: Record<string, unknown>;
  by?: string;
}

/** Whether a decision keeps the call from running (approved and answered calls run). */
export function isRefusal(status: "pending" | ApprovalDecision): status is "rejected" | "timed_out" {
  return status === "rejected" || status === "timed_out";
}

/** Applies recorded decisions to the calls waiting for them, at every level; true when any call changed. */
export function applyDecisions(root: TurnState, decisions: ReadonlyMap<string, RecordedDecision>): boolean {
  let changed = false;
  for (const call of pendingApprovals(root)) {
    const decision = decisions.get(call.approval!.action_id);
    if (!decision) continue;
    call.approval = {
      ...call.approval!,
      status: decision.status,
      reason: decision.reason,
      ...("response" in decision ? { response: decision.response } : {}),
      ...(decision.args ? { edited: { args: decision.args, by: decision.by ?? "" } } : {}),
    };
    changed = true;
  }
  return changed;
}

/** Whether a suspended turn has a decision to go on with. */
export function hasDecisionToApply(root: TurnState, decisions: ReadonlyMap<string, RecordedDecision>): boolean {
  return pendingApprovals(root).some((c) => decisions.has(c.approval!.action_id));
}

/** The error result of a tool call the turn's end cut short (it never returned); a replay tells it from a real one. */
export const cutToolOutput = (reason: "cancelled" | "interrupted") => `Tool call ${reason}`;
/** The reason of the rejection that closes an approval left waiting when its turn is cut short. */
export const cutDecisionReason = (reason: "cancelled" | "interrupted") => `the turn was ${reason}`;

/**
 * Events that close what a turn left open when it is cut short (interrupted, lost), at every level of
 * sub-agents: the model call under way, tools that started, and approvals still waiting, so nothing stays
 * open after the turn's end.
 */
export function closingEvents(
  root: TurnState,
  reason: "cancelled" | "interrupted",
  now: number,
  only?: "model_calls",
  /** Approvals already resolved in the log (their decision was not applied yet): they are not resolved again. */
  decided: ReadonlyMap<string, RecordedDecision> = new Map(),
): EventDraft[] {
  const { turn_id } = root;
  const events: EventDraft[] = [];
  for (const { state, parent_id, depth, subagent_id } of levels(root).reverse()) {
    const envelope = { turn_id, parent_id, depth, ...(subagent_id ? { subagent_id } : {}) };
    if (state.open_model_step) {
      const { step_id, phase } = state.open_model_step;
      events.push({ type: "model.completed", ...envelope, step_id, payload: { usage: emptyUsage(), finish_reason: reason, phase } });
    }
    if (only === "model_calls") continue;
    for (const c of state.calls ?? []) {
      for (const child of c.children ?? []) {
        if (child.result) continue;
        events.push({
          type: "subagent.failed",
          turn_id,
          parent_id: c.tool_call_id,
          depth: child.depth,
          subagent_id: child.subagent_id,
          payload: { error: `the turn was ${reason}` },
        });
      }
      // A call that started and then asked the user (asks_user) closes both.
      const waits = c.approval?.status === "pending" && !decided.has(c.approval.action_id);
      if (c.status === "started" && waits && c.follow_up) events.push(cutDecision(c, envelope, reason));
      if (c.status === "started") {
        events.push({
          type: "tool.result",
          ...envelope,
          step_id: state.step_id ?? undefined,
          tool_call_id: c.tool_call_id,
          payload: { name: c.name, output: cutToolOutput(reason), is_error: true, metadata: resultMetadata(c, true, c.started_at ?? now, now, {}) },
        });
      } else if (waits) {
        events.push(cutDecision(c, envelope, reason));
      }
    }
  }
  return events;
}

/** The rejection that closes a call's approval or question left waiting when its turn is cut short. */
function cutDecision(c: ToolCallRecord, envelope: Omit<EventDraft, "type" | "payload">, reason: "cancelled" | "interrupted"): EventDraft {
  return {
    type: "action.resolved",
    ...envelope,
    action_id: c.approval!.action_id,
    tool_call_id: c.tool_call_id,
    payload: { decision: "rejected", tool_name: c.name, by: "runtime", reason: cutDecisionReason(reason) },
  } as EventDraft;
}
