// A turn's events as OpenTelemetry spans, serialized to OTLP/HTTP JSON by OpenTelemetry's own transformer.
// The spans are those of the shared fold (protocol/turn-spans.ts: the turn, each model call, tool call and sub-agent,
// parent-linked); each runs from its first to its last event, so an approval wait is part of its tool
// call's duration. An agent_orchestrate step (a child session) is a span under its call, from its dispatch
// for the elapsed time its result records. Attributes follow the GenAI semantic conventions.
import { type HrTime, SpanKind, SpanStatusCode, TraceFlags } from "@opentelemetry/api";
import { JsonTraceSerializer } from "@opentelemetry/otlp-transformer";
import { resourceFromAttributes } from "@opentelemetry/resources";
import type { ReadableSpan } from "@opentelemetry/sdk-trace";
import type { RuntimeEvent } from "../../protocol/events";
import { type TurnSpan, turnSpans } from "../../protocol/turn-spans";

const RESOURCE = resourceFromAttributes({ "service.name": "agent-runtime" });
const SCOPE = { name: "agent-runtime" };

/** The OTLP/HTTP JSON body (ExportTraceServiceRequest) of a turn's events. */
export function otlpTraceBody(events: RuntimeEvent[]): string {
  return new TextDecoder().decode(JsonTraceSerializer.serializeRequest(turnSpans(events).map(readable)));
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
