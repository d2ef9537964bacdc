// A turn's events as OpenTelemetry spans, serialized to OTLP/HTTP JSON by OpenTelemetry's own transformer.
// The spans are those the events already name (trace.ts: the turn, each model call, tool call and sub-agent,
// parent-linked); each runs from its first to its last event, so an approval wait is part of its tool
// call's duration. An agent_orchestrate step (a child session) is a span under its call, from its dispatch
// for the elapsed time its result records. Attributes follow the GenAI semantic conventions.
import { type Attributes, type HrTime, SpanKind, SpanStatusCode, TraceFlags } from "@opentelemetry/api";
import { JsonTraceSerializer } from "@opentelemetry/otlp-transformer";
import { resourceFromAttributes } from "@opentelemetry/resources";
import type { ReadableSpan } from "@opentelemetry/sdk-trace";
import { type EventTable, onEvent, sameFor } from "../../protocol/event-table";
import type { RuntimeEvent } from "../../protocol/events";
import { spanId } from "../trace";

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
  /** Span events: the guardrail verdicts on the span's text (the turn's input and answer, a tool call's payloads). */
  events: { name: string; attributes: Attributes; time: HrTime }[];
}

/** The spans of one turn's events (events without trace fields are left out). */
export function turnSpans(events: RuntimeEvent[]): ReadableSpan[] {
  const spans = new Map<string, SpanDraft>();
  const turn: Turn = {
    draft: (trace_id, span_id, parent, at) => {
      let s = spans.get(span_id);
      if (!s) {
        s = { trace_id, span_id, parent, start: at, end: at, name: "", kind: SpanKind.INTERNAL, attributes: {}, error: null, events: [] };
        spans.set(span_id, s);
      }
      s.start = Math.min(s.start, at);
      s.end = Math.max(s.end, at);
      return s;
    },
    steps: new Map(),
  };
  for (const e of events) {
    if (!e.trace_id || !e.span_id) continue;
    onEvent(DESCRIBE, e, turn.draft(e.trace_id, e.span_id, e.parent_span_id ?? null, e.timestamp), turn);
  }
  return [...spans.values()].map(readable);
}

/** Ends the step spans from an agent_orchestrate result (nested groups included). */
function endSteps(output: unknown, steps: Map<string, SpanDraft>): void {
  const results = (output as { steps?: unknown } | null)?.steps;
  if (!Array.isArray(results)) return;
  for (const r of results as { id: string; status: string; error: string | null; elapsed_ms: number; children?: unknown[] }[]) {
    const step = steps.get(r.id);
    if (step) {
      step.end = step.start + r.elapsed_ms;
      if (r.status !== "success") step.error = r.error ?? r.status;
    }
    if (r.children) endSteps({ steps: r.children }, steps);
  }
}

/** The OTLP/HTTP JSON body (ExportTraceServiceRequest) of a turn's events. */
export function otlpTraceBody(events: RuntimeEvent[]): string {
  return new TextDecoder().decode(JsonTraceSerializer.serializeRequest(turnSpans(events)));
}

/** The spans of a turn so far, and its agent_orchestrate steps by step id (each runs as a child session). */
interface Turn {
  draft(trace_id: string, span_id: string, parent: string | null, at: number): SpanDraft;
  steps: Map<string, SpanDraft>;
}

/** A span first seen through another event (an approval before tool.started) is named when that comes. */
const nameless = (e: RuntimeEvent, s: SpanDraft): void => {
  s.name ||= e.type;
};

const failed = (s: SpanDraft, error: string): void => {
  s.error = error;
};

/** What an event tells about its span: its name, kind, GenAI attributes and error status. */
const DESCRIBE: EventTable<[SpanDraft, Turn], void> = {
  ...sameFor(
    nameless,
    "turn.rolled_back",
    "session.created",
    "session.forked",
    "turn.submitted",
    "turn.completed",
    "schedule.created",
    "schedule.fired",
    "schedule.deleted",
    "queue.changed",
    "model.delta",
    "reasoning.summary",
    "tool.catalog.resolved",
    "mcp.progress",
    "action.required",
    "action.reminder",
    "subagent.completed",
    "budget.exceeded",
    "context.compaction.started",
    "context.compaction.completed",
    "output.spilled",
    "artifact.created",
    "memory.updated",
    "memory.recalled",
    "message.injected",
    "cost.recorded",
    "runtime.warning",
    "runtime.error",
    "replay.diverged",
    "replay.completed",
  ),
  "turn.started": (e, s) => {
    Object.assign(s.attributes, { "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": e.payload.agent, "gen_ai.request.model": e.payload.model });
    Object.assign(s.attributes, { "gen_ai.conversation.id": e.session_id, "agent_runtime.turn_id": e.turn_id ?? "" });
    s.name = `invoke_agent ${e.payload.agent}`;
  },
  "turn.failed": (e, s) => failed(s, `${e.payload.error.code}: ${e.payload.error.message}`),
  "turn.cancelled": (e, s) => failed(s, `cancelled: ${e.payload.reason}`),
  "run.status": (e, s, turn) => {
    nameless(e, s);
    // An agent_orchestrate step: a span under its call, from its dispatch for the elapsed time its result records.
    if (e.payload.phase !== "dispatching_step" || !e.subagent_id || !e.trace_id || !e.span_id) return;
    const step = turn.draft(e.trace_id, spanId(e.trace_id, e.subagent_id), e.span_id, e.timestamp);
    const agent = String(e.payload.agent);
    Object.assign(step.attributes, { "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": agent, "gen_ai.conversation.id": e.subagent_id });
    step.attributes["agent_runtime.orchestration.step_id"] = String(e.payload.step_id);
    step.name = `invoke_agent ${agent}`;
    turn.steps.set(String(e.payload.step_id), step);
  },
  "model.requested": (e, s) => {
    Object.assign(s.attributes, { "gen_ai.operation.name": "chat", "gen_ai.request.model": e.payload.model });
    s.name = `chat ${e.payload.model}`;
    s.kind = SpanKind.CLIENT;
  },
  "model.completed": (e, s) => {
    s.attributes["gen_ai.usage.input_tokens"] = e.payload.usage.input_tokens;
    s.attributes["gen_ai.usage.output_tokens"] = e.payload.usage.output_tokens;
    s.attributes["gen_ai.response.finish_reasons"] = [e.payload.finish_reason];
    if (e.payload.error) failed(s, e.payload.error.message);
  },
  "tool.started": (e, s) => {
    Object.assign(s.attributes, { "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": e.payload.name, "gen_ai.tool.call.id": e.tool_call_id ?? "" });
    s.name = `execute_tool ${e.payload.name}`;
  },
  "action.resolved": (e, s) => {
    s.attributes["agent_runtime.approval"] = e.payload.decision;
  },
  "tool.result": (e, s, turn) => {
    if (e.payload.is_error) failed(s, `tool ${e.payload.name}: ${e.payload.metadata.status}`);
    if (turn.steps.size > 0) endSteps(e.payload.output, turn.steps);
  },
  "subagent.spawned": (e, s) => {
    Object.assign(s.attributes, { "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": e.payload.title });
    s.name = `invoke_agent ${e.payload.title}`;
  },
  "subagent.failed": (e, s) => failed(s, e.payload.error),
  "model.fallback": (e, s) => {
    const { from, to, reason } = e.payload;
    const attributes: Attributes = { "agent_runtime.fallback.from": from, "agent_runtime.fallback.to": to, "agent_runtime.fallback.reason": reason };
    s.events.push({ name: "model.fallback", attributes, time: hr(e.timestamp) });
  },
  "guardrail.checked": (e, s) => {
    const { stage, rule, kind, verdict, failed } = e.payload;
    const attributes: Attributes = { "agent_runtime.guardrail.stage": stage, "agent_runtime.guardrail.rule": rule, "agent_runtime.guardrail.kind": kind };
    Object.assign(attributes, { "agent_runtime.guardrail.verdict": verdict, ...(failed ? { "agent_runtime.guardrail.failed": failed } : {}) });
    s.events.push({ name: "guardrail.checked", attributes, time: hr(e.timestamp) });
  },
};

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
    events: s.events,
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
