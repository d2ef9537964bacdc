// The session's read models are folds over its event log (ARCHITECTURE §1): the same `foldEvent`
// serves live updates and a rebuild from the log.
import type { RuntimeEvent } from "../protocol/events";

export type ThreadStatus = "idle" | "running" | "waiting_permission" | "recovering";
export type TurnStatus = "queued" | "accepted" | "running" | "completed" | "failed" | "cancelled";

/** The snapshot keeps this many recent turns (it is one SQLite row, so it must stay small). */
export const MAX_TURNS_IN_VIEW = 100;
/** Inputs and outputs appear in read models as previews of at most this many characters; events carry them whole. */
export const PREVIEW_CHARS = 500;

export function preview(value: unknown): string | null {
  if (value === null || value === undefined) return null;
  const text = typeof value === "string" ? value : JSON.stringify(value);
  return text.length > PREVIEW_CHARS ? `${text.slice(0, PREVIEW_CHARS - 1)}…` : text;
}

export interface TurnSummary {
  turn_id: string;
  status: TurnStatus;
  input_preview: string;
  submitted_at: number;
  started_at: number | null;
  ended_at: number | null;
  output_preview: string | null;
  stop_reason: string | null;
  error: { code: string; message: string } | null;
}

export interface TurnUsage {
  llm_calls: number;
  tool_calls: number;
  subtasks: number;
  input_tokens: number;
  output_tokens: number;
}

export interface SessionView {
  session_id: string;
  thread_id: string;
  agent: string;
  created_at: number;
  metadata: Record<string, unknown>;
  status: ThreadStatus;
  active_turn_id: string | null;
  queued_turns: string[];
  pending_actions: { action_id: string; kind: string; tool_call_id?: string; tool_name?: string; args?: unknown; expires_at?: number }[];
  last_outcome: { turn_id: string; type: string; stop_reason?: string; error?: unknown; reason?: string } | null;
  /** Usage of the active turn, or of the last one when idle. */
  usage: TurnUsage;
  /** The most recent MAX_TURNS_IN_VIEW turns. */
  turns: TurnSummary[];
  turn_count: number;
  last_sequence: number;
}

export function emptyView(): SessionView {
  return {
    session_id: "",
    thread_id: "",
    agent: "",
    created_at: 0,
    metadata: {},
    status: "idle",
    active_turn_id: null,
    queued_turns: [],
    pending_actions: [],
    last_outcome: null,
    usage: { llm_calls: 0, tool_calls: 0, subtasks: 0, input_tokens: 0, output_tokens: 0 },
    turns: [],
    turn_count: 0,
    last_sequence: 0,
  };
}

function updateTurn(view: SessionView, turnId: string | undefined, patch: Partial<TurnSummary>): TurnSummary[] {
  return view.turns.map((t) => (t.turn_id === turnId ? { ...t, ...patch } : t));
}

/** Pure: returns the view after `event`. */
export function foldEvent(view: SessionView, e: RuntimeEvent): SessionView {
  // biome-ignore lint/suspicious/noExplicitAny: payloads get their types from the event catalog (issue 14)
  const p = e.payload as Record<string, any>;
  const v: SessionView = { ...view, last_sequence: e.sequence };
  switch (e.type) {
    case "session.created":
      return {
        ...v,
        session_id: e.session_id,
        thread_id: e.thread_id,
        agent: String(p.agent ?? ""),
        created_at: e.timestamp,
        metadata: (p.metadata as Record<string, unknown>) ?? {},
      };
    case "turn.submitted":
      return {
        ...v,
        turn_count: v.turn_count + 1,
        turns: [
          ...v.turns,
          {
            turn_id: e.turn_id!,
            status: (p.queued ? "queued" : "accepted") as TurnStatus,
            input_preview: preview(p.input) ?? "",
            submitted_at: e.timestamp,
            started_at: null,
            ended_at: null,
            output_preview: null,
            stop_reason: null,
            error: null,
          },
        ].slice(-MAX_TURNS_IN_VIEW),
      };
    case "queue.changed":
      return { ...v, queued_turns: [...((p.queued as string[]) ?? [])] };
    case "turn.started":
      return {
        ...v,
        status: "running",
        active_turn_id: e.turn_id!,
        usage: { llm_calls: 0, tool_calls: 0, subtasks: 0, input_tokens: 0, output_tokens: 0 },
        turns: updateTurn(v, e.turn_id, { status: "running", started_at: e.timestamp }),
      };
    case "run.status":
      if (e.turn_id !== v.active_turn_id) return v;
      if (p.phase === "handoff") return { ...v, agent: String(p.to) };
      return { ...v, status: p.phase === "recovering" ? "recovering" : "running" };
    case "tool.started":
    case "tool.result":
      // Tools running again after a restart means the turn is back to running.
      return {
        ...v,
        status: v.status === "recovering" ? "running" : v.status,
        usage: e.type === "tool.started" ? { ...v.usage, tool_calls: v.usage.tool_calls + 1 } : v.usage,
      };
    case "subagent.spawned":
      return { ...v, usage: { ...v.usage, subtasks: v.usage.subtasks + 1 } };
    case "model.requested":
      return { ...v, usage: { ...v.usage, llm_calls: v.usage.llm_calls + 1 } };
    case "model.completed":
      return {
        ...v,
        status: v.status === "recovering" ? "running" : v.status,
        usage: {
          ...v.usage,
          input_tokens: v.usage.input_tokens + Number(p.usage?.input_tokens ?? 0),
          output_tokens: v.usage.output_tokens + Number(p.usage?.output_tokens ?? 0),
        },
      };
    case "action.required":
      return {
        ...v,
        status: "waiting_permission",
        pending_actions: [
          ...v.pending_actions,
          { action_id: e.action_id!, kind: String(p.kind), tool_call_id: e.tool_call_id, tool_name: p.tool_name, args: p.args, expires_at: p.expires_at },
        ],
      };
    case "action.resolved": {
      const pending = v.pending_actions.filter((a) => a.action_id !== e.action_id);
      return { ...v, pending_actions: pending, status: pending.length > 0 ? "waiting_permission" : "running" };
    }
    case "turn.completed":
    case "turn.failed":
    case "turn.cancelled": {
      const status = e.type === "turn.completed" ? "completed" : e.type === "turn.failed" ? "failed" : "cancelled";
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
          ...(p.stop_reason ? { stop_reason: p.stop_reason } : {}),
          ...(p.error ? { error: p.error } : {}),
          ...(p.reason ? { reason: p.reason } : {}),
        },
        turns: updateTurn(v, e.turn_id, {
          status,
          ended_at: e.timestamp,
          output_preview: preview(p.output),
          stop_reason: p.stop_reason ?? null,
          error: p.error ?? null,
        }),
      };
    }
    default:
      return v;
  }
}

export function foldAll(events: Iterable<RuntimeEvent>, from: SessionView = emptyView()): SessionView {
  let v = from;
  for (const e of events) v = foldEvent(v, e);
  return v;
}
