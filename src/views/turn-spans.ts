// A turn's events folded into its spans: the turn, each model call, tool call and sub-agent (the span ids
// trace.ts derives from the log's ids, parent-linked), each running from its first to its last event, with
// the waits on a person (approvals, ask_user questions) inside its tool call. Plain TypeScript in the
// protocol (the client may import nothing of the server), so the OTLP export (runtime/views/otlp-spans.ts),
// the inspector's waterfall, the CLI's `timeline` and the execution tree (views/execution-tree.ts)
// draw the same spans from the same fold.
import { type EventTable, onEvent, sameFor } from "../protocol/event-table";
import { type EventOf, isNotice, type RuntimeEvent } from "../protocol/events";
import { spanId } from "../protocol/span-id";

export type SpanAttributes = Record<string, string | number | boolean | string[]>;
export type SpanKind = "turn" | "model" | "tool" | "agent" | "other";

/** A wait on a person inside a tool call: from action.required to action.resolved (end null while it waits). */
export interface SpanWait {
  kind: "tool_approval" | "user_input";
  action_id: string;
  start: number;
  end: number | null;
  /** approved, rejected, answered or timed_out; null while it waits. */
  outcome: EventOf<"action.resolved">["payload"]["decision"] | null;
  /** Who decided (a principal, `runtime` for a deadline, `replay`); null while it waits. */
  by: string | null;
  /** The approvals of a quorum as each was recorded. */
  approvals: { by: string; approvals: number; time: number }[];
  /** The wait needs several approvers (action.required's approvals_required). */
  quorum: boolean;
}

/** The call itself, on a tool call's span: what the execution tree shows of it. */
export interface SpanCall {
  id: string;
  name: string;
  /** The call that spawned the sub-agent this call runs in; null for the turn's own calls. */
  parent_id: string | null;
  /** A task's title: its args' `title`, else that of the sub-agent it spawned. */
  title: string | null;
  /** The args it ran with (those it asked approval for until it started). */
  args: unknown;
  /** undefined while it runs. */
  output: unknown;
  is_error: boolean;
  /** The execution time its result records; null while it runs. */
  duration_ms: number | null;
}

export interface TurnSpan {
  trace_id: string;
  span_id: string;
  parent: string | null;
  /** Milliseconds since the epoch: the span's first and last event. */
  start: number;
  end: number;
  name: string;
  kind: SpanKind;
  /** The span's last event has come (the turn ended, the call returned, the sub-agent finished). */
  ended: boolean;
  attributes: SpanAttributes;
  error: string | null;
  /** Span events: the guardrail verdicts on the span's text, model fallbacks. */
  events: { name: string; attributes: SpanAttributes; time: number }[];
  waits: SpanWait[];
  /** Tool spans only. */
  call: SpanCall | null;
}

/** The spans of one turn's events (events without trace fields are left out), in the order they started. */
export function turnSpans(events: readonly RuntimeEvent[]): TurnSpan[] {
  const spans = new Map<string, TurnSpan>();
  const turn: TurnDraft = {
    draft: (trace_id, span_id, parent, at) => {
      let s = spans.get(span_id);
      if (!s) {
        s = {
          trace_id,
          span_id,
          parent,
          start: at,
          end: at,
          name: "",
          kind: "other",
          ended: false,
          attributes: {},
          error: null,
          events: [],
          waits: [],
          call: null,
        };
        spans.set(span_id, s);
      }
      s.start = Math.min(s.start, at);
      s.end = Math.max(s.end, at);
      return s;
    },
    steps: new Map(),
    calls: new Map(),
  };
  for (const e of events) {
    if (!e.trace_id || !e.span_id) continue;
    const span = turn.draft(e.trace_id, e.span_id, e.parent_span_id ?? null, e.timestamp);
    // A notice the table leaves out still names a span it is the first event of.
    if (isNotice(e.type) && !DESCRIBE[e.type]) nameless(e, span);
    else onEvent(DESCRIBE, e, span, turn);
  }
  return [...spans.values()].sort((a, b) => a.start - b.start);
}

/** The spans of a turn so far, its agent_orchestrate steps by step id (each runs as a child session) and its tool calls by call id. */
interface TurnDraft {
  draft(trace_id: string, span_id: string, parent: string | null, at: number): TurnSpan;
  steps: Map<string, TurnSpan>;
  calls: Map<string, SpanCall>;
}

/** Ends the step spans from an agent_orchestrate result (nested groups included). */
function endSteps(output: unknown, steps: Map<string, TurnSpan>): void {
  const results = (output as { steps?: unknown } | null)?.steps;
  if (!Array.isArray(results)) return;
  for (const r of results as { id: string; status: string; error: string | null; elapsed_ms: number; children?: unknown[] }[]) {
    const step = steps.get(r.id);
    if (step) {
      step.end = step.start + r.elapsed_ms;
      step.ended = true;
      if (r.status !== "success") step.error = r.error ?? r.status;
    }
    if (r.children) endSteps({ steps: r.children }, steps);
  }
}

/** A span first seen through another event (an approval before tool.started) is named when that comes. */
const nameless = (e: RuntimeEvent, s: TurnSpan): void => {
  s.name ||= e.type;
};

const failed = (s: TurnSpan, error: string): void => {
  s.error = error;
};

const ended = (e: RuntimeEvent, s: TurnSpan): void => {
  nameless(e, s);
  s.ended = true;
};

/** Names a tool call's span by whichever of its events comes first (a call refused outright has only its result). */
const toolSpan = (e: EventOf<"tool.started" | "tool.result" | "action.required">, s: TurnSpan, name: string, turn: TurnDraft): SpanCall => {
  const id = e.tool_call_id ?? "";
  Object.assign(s.attributes, { "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": name, "gen_ai.tool.call.id": id });
  s.name = `execute_tool ${name}`;
  s.kind = "tool";
  if (!s.call) {
    s.call = { id, name, parent_id: e.parent_id ?? null, title: null, args: undefined, output: undefined, is_error: false, duration_ms: null };
    turn.calls.set(id, s.call);
  }
  return s.call;
};

/** What an event tells about its span: its name, kind, GenAI attributes, waits, end and error status. */
const DESCRIBE: EventTable<[TurnSpan, TurnDraft], void> = {
  ...sameFor(
    nameless,
    "turn.rolled_back",
    "tool.result.late",
    "session.created",
    "session.forked",
    "session.version_changed",
    "turn.submitted",
    "queue.changed",
    "model.delta",
  ),
  "turn.started": (e, s) => {
    Object.assign(s.attributes, { "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": e.payload.agent, "gen_ai.request.model": e.payload.model });
    Object.assign(s.attributes, { "gen_ai.conversation.id": e.session_id, "agent_runtime.turn_id": e.turn_id ?? "" });
    s.name = `invoke_agent ${e.payload.agent}`;
    s.kind = "turn";
  },
  "turn.completed": ended,
  "turn.failed": (e, s) => {
    failed(s, `${e.payload.error.code}: ${e.payload.error.message}`);
    ended(e, s);
  },
  "turn.cancelled": (e, s) => {
    failed(s, `cancelled: ${e.payload.reason}`);
    ended(e, s);
  },
  "run.status": (e, s, turn) => {
    nameless(e, s);
    // An agent_orchestrate step: a span under its call, from its dispatch for the elapsed time its result records.
    if (e.payload.phase !== "dispatching_step" || !e.subagent_id || !e.trace_id || !e.span_id) return;
    const step = turn.draft(e.trace_id, spanId(e.trace_id, e.subagent_id), e.span_id, e.timestamp);
    const agent = String(e.payload.agent);
    Object.assign(step.attributes, { "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": agent, "gen_ai.conversation.id": e.subagent_id });
    step.attributes["agent_runtime.orchestration.step_id"] = String(e.payload.step_id);
    step.name = `invoke_agent ${agent}`;
    step.kind = "agent";
    turn.steps.set(String(e.payload.step_id), step);
  },
  "model.requested": (e, s) => {
    Object.assign(s.attributes, { "gen_ai.operation.name": "chat", "gen_ai.request.model": e.payload.model });
    s.name = `chat ${e.payload.model}`;
    s.kind = "model";
  },
  "model.completed": (e, s) => {
    // A fallback answered: the span is named after the model that did, the requested one stays an attribute.
    if (e.payload.model) {
      s.attributes["gen_ai.response.model"] = e.payload.model;
      s.name = `chat ${e.payload.model}`;
    }
    s.attributes["gen_ai.usage.input_tokens"] = e.payload.usage.input_tokens;
    s.attributes["gen_ai.usage.output_tokens"] = e.payload.usage.output_tokens;
    s.attributes["gen_ai.response.finish_reasons"] = [e.payload.finish_reason];
    if (e.payload.error) failed(s, e.payload.error.message);
    ended(e, s);
  },
  "tool.started": (e, s, turn) => {
    const call = toolSpan(e, s, e.payload.name, turn);
    call.args = e.payload.args;
    const title = (e.payload.args as { title?: unknown } | undefined)?.title;
    if (typeof title === "string") call.title = title;
  },
  // The wait comes before the call starts (and the call never does when rejected): it names the span too.
  "action.required": (e, s, turn) => {
    const call = toolSpan(e, s, e.payload.tool_name, turn);
    if (call.args === undefined) call.args = e.payload.args;
    const quorum = Boolean(e.payload.approvals_required);
    s.waits.push({ kind: e.payload.kind, action_id: e.action_id ?? "", start: e.timestamp, end: null, outcome: null, by: null, approvals: [], quorum });
  },
  "action.approval.recorded": (e, s) => {
    s.waits.find((w) => w.action_id === e.action_id)?.approvals.push({ by: e.payload.by, approvals: e.payload.approvals, time: e.timestamp });
  },
  "action.resolved": (e, s) => {
    s.attributes["agent_runtime.approval"] = e.payload.decision;
    const wait = s.waits.find((w) => w.action_id === e.action_id) ?? s.waits.find((w) => w.end === null);
    if (wait) Object.assign(wait, { end: e.timestamp, outcome: e.payload.decision, by: e.payload.by });
  },
  "tool.result": (e, s, turn) => {
    const call = toolSpan(e, s, e.payload.name, turn);
    Object.assign(call, { output: e.payload.output, is_error: e.payload.is_error, duration_ms: e.payload.metadata.execution_time_ms });
    if (e.payload.is_error) failed(s, `tool ${e.payload.name}: ${e.payload.metadata.status}`);
    if (turn.steps.size > 0) endSteps(e.payload.output, turn.steps);
    ended(e, s);
  },
  "subagent.spawned": (e, s, turn) => {
    const call = e.parent_id ? turn.calls.get(e.parent_id) : undefined;
    if (call) call.title ??= e.payload.title;
    Object.assign(s.attributes, { "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": e.payload.title });
    s.name = `invoke_agent ${e.payload.title}`;
    s.kind = "agent";
  },
  "subagent.completed": ended,
  "subagent.failed": (e, s) => {
    failed(s, e.payload.error);
    ended(e, s);
  },
  "model.fallback": (e, s) => {
    const { from, to, reason } = e.payload;
    s.events.push({
      name: "model.fallback",
      attributes: { "agent_runtime.fallback.from": from, "agent_runtime.fallback.to": to, "agent_runtime.fallback.reason": reason },
      time: e.timestamp,
    });
  },
  "guardrail.checked": (e, s) => {
    const { stage, rule, kind, verdict, failed } = e.payload;
    const attributes: SpanAttributes = { "agent_runtime.guardrail.stage": stage, "agent_runtime.guardrail.rule": rule, "agent_runtime.guardrail.kind": kind };
    Object.assign(attributes, { "agent_runtime.guardrail.verdict": verdict, ...(failed ? { "agent_runtime.guardrail.failed": failed } : {}) });
    s.events.push({ name: "guardrail.checked", attributes, time: e.timestamp });
  },
};

export interface WaterfallRow {
  span: TurnSpan;
  /** 0 for the turn, 1 for its calls, 2 for a sub-agent's calls, … */
  depth: number;
}

/** The spans in tree order (each followed by its children in the order they started), with their depth. */
export function waterfall(spans: readonly TurnSpan[]): WaterfallRow[] {
  const ids = new Set(spans.map((s) => s.span_id));
  const children = new Map<string | null, TurnSpan[]>();
  for (const s of [...spans].sort((a, b) => a.start - b.start)) {
    const parent = s.parent && ids.has(s.parent) ? s.parent : null;
    children.set(parent, [...(children.get(parent) ?? []), s]);
  }
  const rows: WaterfallRow[] = [];
  const walk = (parent: string | null, depth: number) => {
    for (const span of children.get(parent) ?? []) {
      rows.push({ span, depth });
      walk(span.span_id, depth + 1);
    }
  };
  walk(null, 0);
  return rows;
}

/** A span as people name it: "turn demo", "model demo:fast", "tool calculator", "agent Research". */
export function spanLabel(s: TurnSpan): string {
  const a = s.attributes;
  switch (s.kind) {
    case "turn":
      return `turn ${a["gen_ai.agent.name"] ?? ""}`.trim();
    case "model":
      return `model ${a["gen_ai.response.model"] ?? a["gen_ai.request.model"] ?? ""}`.trim();
    case "tool":
      return `tool ${a["gen_ai.tool.name"] ?? ""}`.trim();
    case "agent":
      return `agent ${a["gen_ai.agent.name"] ?? ""}`.trim();
    default:
      return s.name;
  }
}

/** How long a span's waits on a person took (a wait still open counts until `now`). */
export function waitedMs(s: TurnSpan, now: number): number {
  return s.waits.reduce((sum, w) => sum + ((w.end ?? now) - w.start), 0);
}
