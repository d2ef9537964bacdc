// The session's read models are folds over its event log (docs/architecture.md): the same `foldEvent`
// serves live updates and a rebuild from the log.

import { type EventTable, ignored, onEvent } from "../protocol/event-table";
import type { EventOf, RuntimeEvent, TerminalType } from "../protocol/events";
import type { SessionView, TurnStatus, TurnSummary } from "../protocol/views";
import { placesTurn, placeTurn } from "./conversation-order";
import { turnOutcome } from "./turn-outcome";

/** The snapshot keeps this many recent turns (it is one SQLite row, so it must stay small). */
export const MAX_TURNS_IN_VIEW = 100;
/** Inputs and outputs appear in read models as previews of at most this many characters; events carry them whole. */
export const PREVIEW_CHARS = 500;

export function preview(value: unknown): string | null {
  if (value === null || value === undefined) return null;
  const text = typeof value === "string" ? value : JSON.stringify(value);
  return text.length > PREVIEW_CHARS ? `${text.slice(0, PREVIEW_CHARS - 1)}…` : text;
}

const USAGE_ZERO = { llm_calls: 0, tool_calls: 0, subtasks: 0, input_tokens: 0, output_tokens: 0 };

export function emptyView(): SessionView {
  return {
    session_id: "",
    thread_id: "",
    agent: "",
    agent_version: null,
    created_at: 0,
    metadata: {},
    status: "idle",
    active_turn_id: null,
    queued_turns: [],
    pending_actions: [],
    last_outcome: null,
    usage: { ...USAGE_ZERO },
    turns: [],
    turn_count: 0,
    last_sequence: 0,
  };
}

function updateTurn(view: SessionView, turnId: string | undefined, patch: Partial<TurnSummary>): TurnSummary[] {
  return view.turns.map((t) => (t.turn_id === turnId ? { ...t, ...patch } : t));
}

const hasPlace = (t: TurnSummary) => t.started_at !== null || t.ended_at !== null;

/** The turns in conversation order (conversation-order.ts) once `turnId` starts or ends, then patched. */
function placedTurn(view: SessionView, turnId: string | undefined, patch: Partial<TurnSummary>): TurnSummary[] {
  const turn = view.turns.find((t) => t.turn_id === turnId);
  const turns = turn && !hasPlace(turn) ? placeTurn(view.turns, turn, hasPlace) : view.turns;
  return updateTurn({ ...view, turns }, turnId, patch);
}

/** Tools or a model answering again after a restart means the turn is back to running. */
const resumed = (v: SessionView): SessionView["status"] => (v.status === "recovering" ? "running" : v.status);

const turnEnd = (e: EventOf<TerminalType>, v: SessionView): SessionView => {
  const outcome = turnOutcome(e);
  const isActive = e.turn_id === v.active_turn_id;
  return {
    ...v,
    status: isActive ? "idle" : v.status,
    active_turn_id: isActive ? null : v.active_turn_id,
    pending_actions: isActive ? [] : v.pending_actions,
    queued_turns: v.queued_turns.filter((id) => id !== e.turn_id),
    last_outcome: {
      turn_id: e.turn_id!,
      type: e.type,
      ...(outcome.stop_reason ? { stop_reason: outcome.stop_reason } : {}),
      ...(outcome.error ? { error: outcome.error } : {}),
      ...(outcome.reason ? { reason: outcome.reason } : {}),
    },
    turns: (placesTurn(e) ? placedTurn : updateTurn)(v, e.turn_id, {
      status: outcome.status,
      ended_at: e.timestamp,
      output_preview: preview(outcome.output),
      stop_reason: outcome.stop_reason,
      error: outcome.error,
    }),
  };
};

const FOLD: EventTable<[SessionView], SessionView> = {
  ...ignored("session.forked", "model.delta", "subagent.completed", "subagent.failed", "tool.result.late"),
  "session.created": (e, v) => ({
    ...v,
    session_id: e.session_id,
    thread_id: e.thread_id,
    agent: e.payload.agent,
    agent_version: e.payload.version ?? null,
    created_at: e.timestamp,
    metadata: e.payload.metadata,
  }),
  "session.version_changed": (e, v) => ({ ...v, agent_version: e.payload.to_version }),
  "turn.submitted": (e, v) => ({
    ...v,
    turn_count: v.turn_count + 1,
    turns: [
      ...v.turns,
      {
        turn_id: e.turn_id!,
        status: (e.payload.queued ? "queued" : "accepted") as TurnStatus,
        input_preview: preview(e.payload.input) ?? "",
        submitted_at: e.timestamp,
        started_at: null,
        ended_at: null,
        output_preview: null,
        stop_reason: null,
        error: null,
      },
    ].slice(-MAX_TURNS_IN_VIEW),
  }),
  "queue.changed": (e, v) => ({ ...v, queued_turns: [...e.payload.queued] }),
  "turn.started": (e, v) => ({
    ...v,
    status: "running",
    active_turn_id: e.turn_id!,
    usage: { ...USAGE_ZERO },
    turns: placedTurn(v, e.turn_id, { status: "running", started_at: e.timestamp }),
  }),
  "run.status": (e, v) => {
    if (e.turn_id !== v.active_turn_id) return v;
    // The agent handed to runs its config of the moment, which no version of the session names.
    if (e.payload.phase === "handoff") return { ...v, agent: String(e.payload.to), agent_version: e.payload.to_version ?? null };
    return { ...v, status: e.payload.phase === "recovering" ? "recovering" : "running" };
  },
  "tool.started": (_e, v) => ({ ...v, status: resumed(v), usage: { ...v.usage, tool_calls: v.usage.tool_calls + 1 } }),
  "tool.result": (_e, v) => ({ ...v, status: resumed(v) }),
  "subagent.spawned": (_e, v) => ({ ...v, usage: { ...v.usage, subtasks: v.usage.subtasks + 1 } }),
  "model.requested": (_e, v) => ({ ...v, usage: { ...v.usage, llm_calls: v.usage.llm_calls + 1 } }),
  // A call made again after a restart that reads the cut call's response is that call, not another (call-attach.ts)...
  "model.attached": (e, v) => (e.payload.reattached_from ? { ...v, usage: { ...v.usage, llm_calls: v.usage.llm_calls - 1 } } : v),
  // ...unless that response could not be read again: then the call was sent again, a second call.
  "usage.lost": (e, v) => (e.payload.retrieval_status === undefined ? v : { ...v, usage: { ...v.usage, llm_calls: v.usage.llm_calls + 1 } }),
  "model.completed": (e, v) => ({
    ...v,
    status: resumed(v),
    usage: {
      ...v.usage,
      input_tokens: v.usage.input_tokens + e.payload.usage.input_tokens,
      output_tokens: v.usage.output_tokens + e.payload.usage.output_tokens,
    },
  }),
  "action.required": (e, v) => ({
    ...v,
    status: "waiting_permission",
    pending_actions: [
      ...v.pending_actions,
      {
        action_id: e.action_id!,
        kind: e.payload.kind,
        tool_call_id: e.tool_call_id,
        tool_name: e.payload.tool_name,
        args: e.payload.args,
        expires_at: e.payload.expires_at,
        ...(e.payload.question === undefined ? {} : { question: e.payload.question, response_schema: e.payload.response_schema }),
        ...(e.payload.approvals_required ? { approvals_required: e.payload.approvals_required, approved_by: [] } : {}),
      },
    ],
  }),
  "action.approval.recorded": (e, v) => ({
    ...v,
    pending_actions: v.pending_actions.map((a) => (a.action_id === e.action_id ? { ...a, approved_by: [...(a.approved_by ?? []), e.payload.by] } : a)),
  }),
  "action.resolved": (e, v) => {
    const pending = v.pending_actions.filter((a) => a.action_id !== e.action_id);
    return { ...v, pending_actions: pending, status: pending.length > 0 ? "waiting_permission" : "running" };
  },
  "turn.completed": turnEnd,
  "turn.failed": turnEnd,
  "turn.cancelled": turnEnd,
  // Its turn.cancelled came first; turn_count still counts it.
  "turn.rolled_back": (e, v) => ({ ...v, turns: v.turns.filter((t) => t.turn_id !== e.payload.turn_id) }),
};

/** Pure: returns the view after `event`. */
export function foldEvent(view: SessionView, e: RuntimeEvent): SessionView {
  const v: SessionView = { ...view, last_sequence: e.sequence };
  return onEvent(FOLD, e, v) ?? v;
}

export function foldAll(events: Iterable<RuntimeEvent>, from: SessionView = emptyView()): SessionView {
  let v = from;
  for (const e of events) v = foldEvent(v, e);
  return v;
}
