// A turn's events as OpenTelemetry spans, serialized to OTLP/HTTP JSON by OpenTelemetry's own transformer.
// The spans are those the events already name (trace.ts: the turn, each model call, tool call and sub-agent,
// parent-linked); each runs from its first to its last event, so an approval wait is part of its tool
// call's duration. Attributes follow the GenAI semantic conventions.
import { type Attributes, type HrTime, SpanKind, SpanStatusCode, TraceFlags } from "@opentelemetry/api";
import { JsonTraceSerializer } from "@opentelemetry/otlp-transformer";
import { resourceFromAttributes } from "@opentelemetry/resources";
import type { ReadableSpan } from "@opentelemetry/sdk-trace";
import type { RuntimeEvent } from "../protocol/events";

const RESOURCE = resourceFromAttributes({ "service.name": "agent-runtime" });
const SCOPE = { name: "agent-runtime" };

interface SpanDraft {
  trace_id: string;
  span_id: string;
  parent: string | null;
  start: number;
  end: number;
  name: string;
  kind: SpanKind;
  attributes: Attributes;
  error: string | null;
}

/** The spans of one turn's events (events without trace fields are left out). */
export function turnSpans(events: RuntimeEvent[]): ReadableSpan[] {
  const spans = new Map<string, SpanDraft>();
  for (const e of events) {
    if (!e.trace_id || !e.span_id) continue;
    let s = spans.get(e.span_id);
    if (!s) {
      s = {
        trace_id: e.trace_id,
        span_id: e.span_id,
        parent: e.parent_span_id ?? null,
        start: e.timestamp,
        end: e.timestamp,
        name: "",
        kind: SpanKind.INTERNAL,
        attributes: {},
        error: null,
      };
      spans.set(e.span_id, s);
    }
    s.start = Math.min(s.start, e.timestamp);
    s.end = Math.max(s.end, e.timestamp);
    describe(s, e);
  }
  return [...spans.values()].map(readable);
}

/** The OTLP/HTTP JSON body (ExportTraceServiceRequest) of a turn's events. */
export function otlpTraceBody(events: RuntimeEvent[]): string {
  return new TextDecoder().decode(JsonTraceSerializer.serializeRequest(turnSpans(events)));
}

/** What an event tells about its span: its name, kind, GenAI attributes and error status. */
function describe(s: SpanDraft, e: RuntimeEvent): void {
  const a = s.attributes;
  switch (e.type) {
    case "turn.started":
      Object.assign(a, { "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": e.payload.agent, "gen_ai.request.model": e.payload.model });
      Object.assign(a, { "gen_ai.conversation.id": e.session_id, "agent_runtime.turn_id": e.turn_id ?? "" });
      s.name = `invoke_agent ${e.payload.agent}`;
      break;
    case "turn.failed":
      s.error = `${e.payload.error.code}: ${e.payload.error.message}`;
      break;
    case "turn.cancelled":
      s.error = `cancelled: ${e.payload.reason}`;
      break;
    case "model.requested":
      Object.assign(a, { "gen_ai.operation.name": "chat", "gen_ai.request.model": e.payload.model });
      s.name = `chat ${e.payload.model}`;
      s.kind = SpanKind.CLIENT;
      break;
    case "model.completed":
      a["gen_ai.usage.input_tokens"] = e.payload.usage.input_tokens;
      a["gen_ai.usage.output_tokens"] = e.payload.usage.output_tokens;
      a["gen_ai.response.finish_reasons"] = [e.payload.finish_reason];
      if (e.payload.error) s.error = e.payload.error.message;
      break;
    case "tool.started":
      Object.assign(a, { "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": e.payload.name, "gen_ai.tool.call.id": e.tool_call_id ?? "" });
      s.name = `execute_tool ${e.payload.name}`;
      break;
    case "action.resolved":
      a["agent_runtime.approval"] = e.payload.decision;
      break;
    case "tool.result":
      if (e.payload.is_error) s.error = `tool ${e.payload.name}: ${e.payload.metadata.status}`;
      break;
    case "subagent.spawned":
      Object.assign(a, { "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": e.payload.title });
      s.name = `invoke_agent ${e.payload.title}`;
      break;
    case "subagent.failed":
      s.error = e.payload.error;
      break;
    default:
      // A span first seen through another event (an approval before tool.started) is named when that comes.
      s.name ||= e.type;
  }
}

function readable(s: SpanDraft): ReadableSpan {
  const context = { traceId: s.trace_id, spanId: s.span_id, traceFlags: TraceFlags.SAMPLED };
  return {
    name: s.name,
    kind: s.kind,
    spanContext: () => context,
    ...(s.parent ? { parentSpanContext: { traceId: s.trace_id, spanId: s.parent, traceFlags: TraceFlags.SAMPLED } } : {}),
    startTime: hr(s.start),
    endTime: hr(s.end),
    duration: hr(s.end - s.start),
    status: s.error ? { code: SpanStatusCode.ERROR, message: s.error } : { code: SpanStatusCode.OK },
    attributes: s.attributes,
    links: [],
    events: [],
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
