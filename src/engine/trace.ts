// W3C trace context for a turn's events: a turn joins the caller's trace (from its `traceparent`) or starts
// one; the turn is a span, and each model call, tool call and sub-agent is a span of its own under it. Span
// ids are derived from the ids the log already has, so every event of a call carries the same span id
// without any state, and a replay of the log gives the same spans.

import type { TurnTrace } from "../protocol/events";
import { spanId } from "../protocol/span-id";

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-[0-9a-f]{2}$/;

/** The caller's trace from a `traceparent` header; a new trace when there is none or it is malformed. */
export function traceFrom(traceparent: string | null | undefined, random: () => string): TurnTrace {
  const m = TRACEPARENT.exec((traceparent ?? "").trim().toLowerCase());
  if (m && !/^0+$/.test(m[1]!) && !/^0+$/.test(m[2]!)) return { trace_id: m[1]!, parent_span_id: m[2]! };
  return { trace_id: random(), parent_span_id: null };
}

/** A fresh 32-hex-digit trace id. */
export function randomTraceId(): string {
  return [...crypto.getRandomValues(new Uint8Array(16))].map((b) => b.toString(16).padStart(2, "0")).join("");
}

/** The envelope's trace fields for an event of a turn: the span of its model call, tool call or sub-agent, else the turn's. */
export function traceFields(
  trace: TurnTrace,
  turnId: string,
  e: { step_id?: string; tool_call_id?: string; subagent_id?: string; parent_id?: string | null; type: string },
): { trace_id: string; span_id: string; parent_span_id: string | null } {
  const turnSpan = spanId(trace.trace_id, turnId);
  // A tool call's events (its approval, progress and spill included) are its span; a model call's are the step's.
  const own =
    e.tool_call_id && !e.type.startsWith("subagent.") ? e.tool_call_id : e.type.startsWith("model.") || e.type === "cost.recorded" ? e.step_id : undefined;
  const parent = e.subagent_id ? spanId(trace.trace_id, e.subagent_id) : turnSpan;
  // A call a code-mode script made is a child of the script's run_code call (in a sub-agent, of the sub-agent).
  const script = !e.subagent_id && e.tool_call_id && e.parent_id && e.parent_id !== e.tool_call_id ? spanId(trace.trace_id, e.parent_id) : null;
  if (own) return { trace_id: trace.trace_id, span_id: spanId(trace.trace_id, own), parent_span_id: script ?? parent };
  if (e.subagent_id) return { trace_id: trace.trace_id, span_id: parent, parent_span_id: turnSpan };
  return { trace_id: trace.trace_id, span_id: turnSpan, parent_span_id: trace.parent_span_id };
}
