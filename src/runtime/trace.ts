// W3C trace context for a turn's events: a turn joins the caller's trace (from its `traceparent`) or starts
// one; the turn is a span, and each model call, tool call and sub-agent is a span of its own under it. Span
// ids are derived from the ids the log already has, so every event of a call carries the same span id
// without any state, and a replay of the log gives the same spans.

import type { TurnTrace } from "../protocol/events";

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

/** Span ids already derived: a turn's events ask for the same few (its own, its calls') again and again. */
const spans = new Map<string, string>();

/** A 16-hex-digit span id derived from the trace and an id of the log (FNV-1a, two 32-bit lanes). */
export function spanId(traceId: string, of: string): string {
  const text = `${traceId}/${of}`;
  let id = spans.get(text);
  if (id === undefined) {
    if (spans.size >= 4096) spans.clear();
    id = hashSpan(text);
    spans.set(text, id);
  }
  return id;
}

function hashSpan(text: string): string {
  let a = 0x811c9dc5;
  let b = 0x01000193 ^ 0x5bd1e995;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    a = Math.imul(a ^ c, 0x01000193);
    b = Math.imul(b ^ c, 0x01000193) ^ (b >>> 13);
  }
  return (a >>> 0).toString(16).padStart(8, "0") + (b >>> 0).toString(16).padStart(8, "0");
}

/** The envelope's trace fields for an event of a turn: the span of its model call, tool call or sub-agent, else the turn's. */
export function traceFields(
  trace: TurnTrace,
  turnId: string,
  e: { step_id?: string; tool_call_id?: string; subagent_id?: string; type: string },
): { trace_id: string; span_id: string; parent_span_id: string | null } {
  const turnSpan = spanId(trace.trace_id, turnId);
  // A tool call's events (its approval, progress and spill included) are its span; a model call's are the step's.
  const own =
    e.tool_call_id && !e.type.startsWith("subagent.") ? e.tool_call_id : e.type.startsWith("model.") || e.type === "cost.recorded" ? e.step_id : undefined;
  const parent = e.subagent_id ? spanId(trace.trace_id, e.subagent_id) : turnSpan;
  if (own) return { trace_id: trace.trace_id, span_id: spanId(trace.trace_id, own), parent_span_id: parent };
  if (e.subagent_id) return { trace_id: trace.trace_id, span_id: parent, parent_span_id: turnSpan };
  return { trace_id: trace.trace_id, span_id: turnSpan, parent_span_id: trace.parent_span_id };
}
