// A turn's events as OpenTelemetry spans, serialized to OTLP/HTTP JSON by OpenTelemetry's own transformer.
// The spans are those of the shared fold (views/turn-spans.ts: the turn, each model call, tool call and sub-agent,
// parent-linked); each runs from its first to its last event, so an approval wait is part of its tool
// call's duration, and is also a span of its own under the call (await_human, with who decided; a quorum's
// approvals are its span events). An agent_orchestrate step (a child session) is a span under its call, from its dispatch
// for the elapsed time its result records. Attributes follow the GenAI semantic conventions.
import { type HrTime, SpanKind, SpanStatusCode, TraceFlags } from "@opentelemetry/api";
import { JsonTraceSerializer } from "@opentelemetry/otlp-transformer";
import { resourceFromAttributes } from "@opentelemetry/resources";
import type { ReadableSpan } from "@opentelemetry/sdk-trace";
import type { RuntimeEvent } from "../protocol/events";
import { spanId } from "../protocol/span-id";
import { type TurnSpan, turnSpans } from "./turn-spans";

const RESOURCE = resourceFromAttributes({ "service.name": "agent-runtime" });
const SCOPE = { name: "agent-runtime" };

/** The OTLP/HTTP JSON body (ExportTraceServiceRequest) of a turn's events. */
export function otlpTraceBody(events: RuntimeEvent[]): string {
  const spans = turnSpans(events);
  return new TextDecoder().decode(JsonTraceSerializer.serializeRequest([...spans, ...spans.flatMap(waitSpans)].map(readable)));
}

/** The waits on a person inside a call, each as a span under the call's (from action.required to action.resolved). */
function waitSpans(call: TurnSpan): TurnSpan[] {
  return call.waits.map((w) => ({
    trace_id: call.trace_id,
    span_id: spanId(call.trace_id, `wait:${w.action_id}`),
    parent: call.span_id,
    start: w.start,
    end: w.end ?? call.end,
    name: `await_human ${call.attributes["gen_ai.tool.name"] ?? ""}`,
    kind: "other",
    ended: w.end !== null,
    attributes: {
      "agent_runtime.action.id": w.action_id,
      "agent_runtime.action.kind": w.kind,
      ...(w.outcome ? { "agent_runtime.action.decision": w.outcome } : {}),
      ...(w.by ? { "agent_runtime.action.by": w.by } : {}),
    },
    error: w.outcome === "timed_out" ? "nobody decided before the deadline" : null,
    events: w.approvals.map((a) => ({
      name: "action.approval.recorded",
      attributes: { "agent_runtime.action.by": a.by, "agent_runtime.action.approvals": a.approvals },
      time: a.time,
    })),
    waits: [],
    call: null,
  }));
}

function readable(s: TurnSpan): ReadableSpan {
  const context = { traceId: s.trace_id, spanId: s.span_id, traceFlags: TraceFlags.SAMPLED };
  return {
    name: s.name,
    kind: s.kind === "model" ? SpanKind.CLIENT : SpanKind.INTERNAL,
    spanContext: () => context,
    ...(s.parent ? { parentSpanContext: { traceId: s.trace_id, spanId: s.parent, traceFlags: TraceFlags.SAMPLED } } : {}),
    startTime: hr(s.start),
    endTime: hr(s.end),
    duration: hr(s.end - s.start),
    status: s.error ? { code: SpanStatusCode.ERROR, message: s.error } : { code: SpanStatusCode.OK },
    attributes: s.attributes,
    links: [],
    events: s.events.map((e) => ({ name: e.name, attributes: e.attributes, time: hr(e.time) })),
    ended: true,
    resource: RESOURCE,
    instrumentationScope: SCOPE,
    droppedAttributesCount: 0,
    droppedEventsCount: 0,
    droppedLinksCount: 0,
  };
}

function hr(ms: number): HrTime {
  return [Math.floor(ms / 1000), (ms % 1000) * 1_000_000];
}
