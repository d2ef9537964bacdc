// The event envelope (SPEC §5) and the event types the runtime emits.
// Producers build an EventDraft; the event store stamps ids, sequence and timestamp.

export const EVENT_TYPES = [
  "session.created",
  "turn.submitted",
  "turn.started",
  "turn.completed",
  "turn.failed",
  "turn.cancelled",
  "queue.changed",
  "run.status",
  "model.requested",
  "model.delta",
  "model.completed",
  "reasoning.summary",
  "tool.catalog.resolved",
  "tool.started",
  "tool.progress",
  "mcp.progress",
  "tool.result",
  "action.required",
  "action.resolved",
  "subagent.spawned",
  "subagent.completed",
  "subagent.failed",
  "budget.exceeded",
  "context.compaction.started",
  "context.compaction.completed",
  "output.spilled",
  "message.injected",
  "cost.recorded",
  "runtime.warning",
  "runtime.error",
] as const;

export type EventType = (typeof EVENT_TYPES)[number];

/** The events that end a turn; each turn has exactly one. */
export function isTerminalTurnEvent(type: string): boolean {
  return type === "turn.completed" || type === "turn.failed" || type === "turn.cancelled";
}

/** The trace a turn belongs to: its trace id and the caller's span it runs under (null: it started the trace). */
export interface TurnTrace {
  trace_id: string;
  parent_span_id: string | null;
}

export interface EventRef {
  kind: string;
  id: string;
  bytes?: number;
  uri?: string;
}

export interface RuntimeEvent {
  type: EventType;
  event_id: string;
  timestamp: number;
  sequence: number;
  schema_version: 1;
  session_id: string;
  thread_id: string;
  turn_id?: string;
  step_id?: string;
  tool_call_id?: string;
  action_id?: string;
  subagent_id?: string;
  parent_id?: string | null;
  depth?: number;
  /** W3C trace context: the turn's trace, and the span of the model call, tool call or sub-agent (else the turn). */
  trace_id?: string;
  span_id?: string;
  parent_span_id?: string | null;
  payload: Record<string, unknown>;
  refs?: EventRef[];
}

/** What a producer supplies; the store adds event_id, timestamp, sequence and the session ids. */
export type EventDraft = Pick<RuntimeEvent, "type" | "payload"> &
  Partial<Pick<RuntimeEvent, "turn_id" | "step_id" | "tool_call_id" | "action_id" | "subagent_id" | "parent_id" | "depth" | "refs">> & {
    /** Only on turn.submitted: the trace the new turn joins (the store stamps every later event of the turn). */
    trace?: TurnTrace;
  };
