// The event envelope (docs/reference/events.md) and the typed event catalog: `RuntimeEvent` is a union discriminated on
// `type`, each with its payload schema (event-payloads.ts). Producers build an EventDraft; the event store
// stamps ids, sequence, timestamp and trace fields.
import { z } from "zod";
import { EVENT_PAYLOADS } from "./event-payloads";

export { EVENT_PAYLOADS };

export type EventType = keyof typeof EVENT_PAYLOADS;
export const EVENT_TYPES = Object.keys(EVENT_PAYLOADS) as EventType[];

export type PayloadOf<T extends EventType> = z.infer<(typeof EVENT_PAYLOADS)[T]>;

/** Notices: events that report something without changing what a fold keeps (a session's view, its usage, a
 * turn's stream or spans). A fold's table may leave them out and handles only those it shows, so a capability
 * whose events are all notices adds them here and in event-payloads.ts and touches no fold. */
export const NOTICE_TYPES = [
  "schedule.created",
  "schedule.fired",
  "schedule.deleted",
  "tool.catalog.resolved",
  "mcp.progress",
  "action.reminder",
  "reasoning.summary",
  "budget.exceeded",
  "turn.paused",
  "turn.resumed",
  "turn.continued",
  "quota.warning",
  "eval.scored",
  "context.compaction.started",
  "context.compaction.completed",
  "output.spilled",
  "artifact.created",
  "memory.updated",
  "memory.loaded",
  "memory.recalled",
  "message.injected",
  "cost.recorded",
  "usage.lost",
  "model.attached",
  "runtime.warning",
  "runtime.error",
  "question.dropped",
  "question.cancel_settled",
  "model.fallback",
  "guardrail.checked",
  "replay.diverged",
  "replay.completed",
] as const satisfies readonly EventType[];
export type NoticeType = (typeof NOTICE_TYPES)[number];

export function isNotice(type: EventType): type is NoticeType {
  return (NOTICE_TYPES as readonly string[]).includes(type);
}

/** The events that end a turn; each turn has exactly one. */
export const TERMINAL_TURN_EVENTS = ["turn.completed", "turn.failed", "turn.cancelled"] as const;
export type TerminalType = (typeof TERMINAL_TURN_EVENTS)[number];

export function isTerminalTurnEvent(type: string): type is TerminalType {
  return (TERMINAL_TURN_EVENTS as readonly string[]).includes(type);
}

/** The trace a turn belongs to: its trace id and the caller's span it runs under (null: it started the trace). */
export interface TurnTrace {
  trace_id: string;
  parent_span_id: string | null;
}

export const EventRefSchema = z.object({ kind: z.string(), id: z.string(), bytes: z.number().optional(), uri: z.string().optional() });
export type EventRef = z.infer<typeof EventRefSchema>;

/** The envelope every event shares (without `type` and `payload`). */
export const EnvelopeSchema = z.object({
  event_id: z.string(),
  timestamp: z.number().describe("milliseconds since the epoch"),
  sequence: z.int().min(1).describe("gapless per session, from 1"),
  schema_version: z.literal(1),
  session_id: z.string(),
  thread_id: z.string(),
  turn_id: z.string().optional(),
  step_id: z.string().optional(),
  tool_call_id: z.string().optional(),
  action_id: z.string().optional(),
  subagent_id: z.string().optional(),
  parent_id: z.string().nullable().optional().describe("the tool call that spawned the sub-agent this event belongs to"),
  depth: z.int().min(0).optional(),
  trace_id: z.string().optional().describe("W3C trace id of the turn"),
  span_id: z.string().optional().describe("the span: the turn, or its model call, tool call or sub-agent"),
  parent_span_id: z.string().nullable().optional(),
  refs: z.array(EventRefSchema).optional(),
});
type Envelope = z.infer<typeof EnvelopeSchema>;

/** One event of the log: the envelope, its type, and that type's payload. */
export type RuntimeEvent = { [T in EventType]: Envelope & { type: T; payload: PayloadOf<T> } }[EventType];
export type EventOf<T extends EventType> = Extract<RuntimeEvent, { type: T }>;

type DraftFields = Partial<Pick<Envelope, "turn_id" | "step_id" | "tool_call_id" | "action_id" | "subagent_id" | "parent_id" | "depth" | "refs">> & {
  /** Only on turn.submitted: the trace the new turn joins (the store stamps every later event of the turn). */
  trace?: TurnTrace;
};

/** What a producer supplies; the store adds event_id, timestamp, sequence, the session ids and the trace fields. */
export type EventDraft = { [T in EventType]: DraftFields & { type: T; payload: PayloadOf<T> } }[EventType];

/** The draft of a turn's terminal event. */
export type TerminalDraft = Extract<EventDraft, { type: TerminalType }>;

/** The catalog as one zod schema (a union discriminated on type), for JSON Schema and OpenAPI. */
export const RuntimeEventSchema = z
  .discriminatedUnion(
    "type",
    EVENT_TYPES.map((type) => EnvelopeSchema.extend({ type: z.literal(type), payload: EVENT_PAYLOADS[type] }).meta({ id: `Event_${type}` })) as unknown as [
      z.ZodObject,
      ...z.ZodObject[],
    ],
  )
  .meta({ id: "RuntimeEvent" });
