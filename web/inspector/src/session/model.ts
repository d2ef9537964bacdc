// What the session view shows, folded from the session's events in log order: the same fold rebuilds the
// view from the whole log on load and then keeps it live, so a reload shows exactly what was there.
// Objects are updated in place (a long stream of text deltas would otherwise copy the conversation per
// event); `version` grows with every applied event so the view knows when to draw again.
import {
  type EventOf,
  type EventTable,
  ignored,
  onEvent,
  placesTurn,
  placeTurn,
  type RuntimeEvent,
  type TerminalType,
  turnOutcome,
} from "../../../../src/client/index";
import { preview } from "../format";
import type { Approval, CallEvent, CallStatus, Container, NoteItem, SubAgent, TextItem, ToolCall, Turn } from "./items";
import { newApproval, newCall, newTurn } from "./items";

/** finish_reason values of a model call that did not end on its own (a restart, an interrupt, a provider error). */
const INTERRUPTED = new Set(["cancelled", "interrupted", "error"]);
/** A turn that started or ended has its place; queued and accepted ones wait after those. */
const hasPlace = (t: Turn) => t.status !== "queued" && t.status !== "accepted";
const RESULT_STATUS: Record<string, CallStatus> = { success: "succeeded", error: "failed", rejected: "rejected", timed_out: "timed out" };

export class SessionModel {
  readonly events: RuntimeEvent[] = [];
  /** In the order of the conversation as the model saw it (src/views/conversation-order.ts). */
  turns: Turn[] = [];
  readonly approvals = new Map<string, Approval>();
  agent = "";
  /** The agent's version the session runs (null: an inline agent) and the eval run it is a case of. */
  agentVersion: number | null = null;
  evalRun: string | null = null;
  /** The resource whose memory the session uses (null: none). */
  resource: string | null = null;
  queued: string[] = [];
  activeTurnId: string | null = null;
  recovering = false;
  version = 0;
  private readonly turnById = new Map<string, Turn>();
  private readonly calls = new Map<string, ToolCall>();
  private readonly agents = new Map<string, SubAgent>();
  private readonly eventsByTurn = new Map<string, RuntimeEvent[]>();
  private codeTools = new Map<string, number>(); // the latest tool catalog's code tools: name to version

  get lastSequence(): number {
    return this.events.at(-1)?.sequence ?? 0;
  }

  get pendingApprovals(): Approval[] {
    return [...this.approvals.values()].filter((a) => a.status === "pending" && a.kind === "tool_approval");
  }

  get pendingQuestions(): Approval[] {
    return [...this.approvals.values()].filter((a) => a.status === "pending" && a.kind === "user_input");
  }

  /** A turn's events in log order (the waterfall folds them into spans). */
  turnEvents(id: string): readonly RuntimeEvent[] {
    return this.eventsByTurn.get(id) ?? [];
  }

  turn(id: string): Turn | undefined {
    return this.turnById.get(id);
  }

  /** Folds one event; one already applied (a sequence not past the last) is ignored and answers false. */
  apply(e: RuntimeEvent): boolean {
    if (e.sequence <= this.lastSequence) return false;
    this.events.push(e);
    if (e.turn_id) {
      const of = this.eventsByTurn.get(e.turn_id);
      if (of) of.push(e);
      else this.eventsByTurn.set(e.turn_id, [e]);
    }
    this.version++;
    if (placesTurn(e)) this.place(this.turnOf(e));
    onEvent(SessionModel.FOLD, e, this);
    return true;
  }

  private static readonly FOLD: EventTable<[SessionModel], void> = {
    // Nothing to show outside the timeline.
    ...ignored("action.approval.recorded", "session.forked"),
    "session.created": (e, m) => {
      const { agent, version, resource_id, metadata } = e.payload;
      Object.assign(m, { agent, agentVersion: version ?? null, resource: resource_id ?? null });
      m.evalRun = typeof metadata?.eval_run_id === "string" ? metadata.eval_run_id : null; // hand-built logs may leave it out
    },
    "session.version_changed": (e, m) => {
      m.agentVersion = e.payload.to_version;
    },
    "turn.submitted": (e, m) => {
      m.turnOf(e).status = e.payload.queued ? "queued" : "accepted";
    },
    "queue.changed": (e, m) => {
      m.queued = [...e.payload.queued];
    },
    "turn.started": (e, m) => {
      m.turnOf(e).status = "running";
      m.activeTurnId = e.turn_id ?? null;
      m.recovering = false;
    },
    "turn.completed": (e, m) => m.endTurn(e),
    "turn.failed": (e, m) => m.endTurn(e),
    "turn.cancelled": (e, m) => m.endTurn(e),
    // The inspector keeps the turn (the log does): it says that the model no longer sees it.
    "turn.rolled_back": (e, m) => {
      const undone = e.payload.side_effects.map((c) => c.name);
      const text = `Rolled back by ${e.payload.by_turn_id}: the model no longer sees this turn${undone.length > 0 ? `; not undone: ${undone.join(", ")}` : ""}`;
      m.note({ ...e, turn_id: e.payload.turn_id }, "warning", text);
    },
    // A call that outlived its cut turn (docs/guides/busy-sessions.md): its outcome is a note on that turn.
    "tool.result.late": (e, m) =>
      m.note(
        { ...e, turn_id: e.payload.turn_id },
        e.payload.is_error ? "error" : "info",
        `Late result of ${e.payload.name}, after the turn ended: ${preview(e.payload.output)}`,
      ),
    "run.status": (e, m) => m.runStatus(e),
    "model.requested": (e, m) => {
      m.containerOf(e).streaming = null;
    },
    "model.delta": (e, m) => m.appendText(e, e.payload.text),
    "model.completed": (e, m) => {
      m.recovering = false;
      m.closeText(m.containerOf(e), INTERRUPTED.has(e.payload.finish_reason) ? "interrupted" : "done");
      if (e.payload.finish_reason === "error") m.note(e, "error", `Model call failed: ${e.payload.error?.message ?? "unknown error"}`);
    },
    "reasoning.summary": (e, m) => m.note(e, "plan", e.payload.text),
    "message.injected": (e, m) => {
      m.containerOf(e).items.push({ kind: "injected", key: e.event_id, content: e.payload.content });
    },
    "tool.catalog.resolved": (e, m) => {
      m.codeTools = new Map(e.payload.tools.flatMap((t) => (t.code_tool ? [[t.name, t.code_tool.version] as const] : [])));
    },
    "tool.started": (e, m) => m.toolStarted(e),
    "mcp.progress": (e, m) => {
      const { message, progress, total } = e.payload;
      m.callOf(e).progress = message ?? `${progress}${total !== null ? ` / ${total}` : ""}`;
    },
    "tool.result": (e, m) => m.toolResult(e),
    "artifact.created": (e, m) => {
      const { file_id, media_type, filename, size } = e.payload;
      m.calls.get(e.payload.tool_call_id)?.files.push({ file_id, media_type, filename, size });
    },
    "action.required": (e, m) => m.actionRequired(e),
    "action.resolved": (e, m) => m.actionResolved(e),
    "subagent.spawned": (e, m) => m.subagentSpawned(e),
    "subagent.completed": (e, m) => m.subagentEnded(e, "completed", e.payload.result),
    "subagent.failed": (e, m) => m.subagentEnded(e, "failed", e.payload.error),
    "budget.exceeded": (e, m) => {
      const { reason, limit, observed } = e.payload;
      m.note(e, "error", `Budget exceeded: ${reason} (limit ${limit}, observed ${observed})`);
    },
    "turn.paused": (e, m) => m.note(e, "warning", `Paused by quota ${e.payload.quota_id}: ${e.payload.message}`),
    "turn.continued": (e, m) => {
      const { quota_id, by, note } = e.payload;
      m.note(e, "warning", `Continued over quota ${quota_id} by ${by}${note ? `: “${note}”` : ""}`);
    },
    "turn.resumed": (e, m) => {
      const { quota_id, continued_by } = e.payload;
      m.note(e, "info", continued_by ? `Resumed: continued by ${continued_by}` : `Resumed: quota ${quota_id} has room`);
    },
    "quota.warning": (e, m) => m.note(e, "warning", `Quota ${e.payload.quota_id}: ${e.payload.used} of ${e.payload.limit} ${e.payload.dimension} used`),
    "model.fallback": (e, m) => m.note(e, "warning", `Model ${e.payload.from} failed over to ${e.payload.to}: ${e.payload.reason}`),
    "context.compaction.completed": (e, m) => {
      m.note(e, "info", `History compacted from ${e.payload.before_tokens} to ${e.payload.after_tokens} tokens`);
    },
    "cost.recorded": (e, m) => m.costRecorded(e),
    // A call a restart cut: its estimated spend counts on the turn, and the turn says so.
    "usage.lost": (e, m) => {
      m.costRecorded(e);
      const cost = e.payload.cost_usd === null ? "" : ` (about $${e.payload.cost_usd.toFixed(4)})`;
      m.note(e, "warning", `A ${e.payload.model} call was lost to a restart and sent again; its reservation is counted as spent${cost}`);
    },
    // A call a restart cut, read again at the provider instead of sent again: paid once.
    "model.attached": (e, m) => {
      if (e.payload.reattached_from)
        m.note(e, "info", `A model call cut by a restart was re-attached to its response ${e.payload.response_id}, not sent again`);
    },
    "runtime.warning": (e, m) => m.note(e, "warning", e.payload.message),
    "runtime.error": (e, m) => m.note(e, "error", e.payload.message),
    // A rule that fired shows on its turn; passes are in the event timeline.
    "guardrail.checked": (e, m) => {
      const { verdict, reason, failed, rule, stage, kind } = e.payload;
      if (verdict === "pass") return;
      const why = [reason, failed && `failed: ${failed}`].filter(Boolean).join("; ");
      m.note(e, verdict === "block" ? "error" : "warning", `Guardrail ${rule} (${stage}, ${kind}): ${verdict}${why ? ` (${why})` : ""}`);
    },
  };

  /** A turn that starts, or is cancelled before it started, takes its place in the conversation once. */
  private place(turn: Turn): void {
    if (hasPlace(turn)) return;
    this.turns = placeTurn(this.turns, turn, hasPlace);
  }

  private turnOf(e: RuntimeEvent): Turn {
    const id = e.turn_id ?? "";
    let turn = this.turnById.get(id);
    if (!turn) {
      turn = e.type === "turn.submitted" ? newTurn(id, e.payload.input, [...(e.payload.files ?? [])]) : newTurn(id, "", []);
      this.turnById.set(id, turn);
      this.turns.push(turn);
    }
    return turn;
  }

  /** A sub-agent's events carry its subagent_id; everything else belongs to the turn's top level. */
  private containerOf(e: RuntimeEvent): Container {
    const agent = e.subagent_id ? this.agents.get(e.subagent_id) : undefined;
    return agent ?? this.turnOf(e);
  }

  private callOf(e: CallEvent): ToolCall {
    const id = e.tool_call_id ?? e.event_id;
    let call = this.calls.get(id);
    if (call) return call;
    call = newCall(id, e);
    this.calls.set(id, call);
    // A script's inner call belongs under the script's card, not the turn's list.
    const script = e.parent_id ? this.calls.get(e.parent_id) : undefined;
    if (script?.name === "run_code") script.children.push(call);
    else {
      const container = this.containerOf(e);
      // Text streamed before the call is finished: what follows the call starts a new paragraph.
      this.closeText(container, "done");
      container.items.push(call);
    }
    return call;
  }

  private appendText(e: RuntimeEvent, text: string): void {
    const c = this.containerOf(e);
    if (!c.streaming) {
      c.streaming = { kind: "text", key: e.event_id, text: "", state: "streaming" };
      c.items.push(c.streaming);
    }
    c.streaming.text += text;
  }

  private closeText(c: Container, state: TextItem["state"]): void {
    if (c.streaming) c.streaming.state = state;
    c.streaming = null;
  }

  private note(e: RuntimeEvent, tone: NoteItem["tone"], text: string): void {
    const c = this.containerOf(e);
    this.closeText(c, "done");
    c.items.push({ kind: "note", key: e.event_id, tone, text });
  }

  private endTurn(e: EventOf<TerminalType>): void {
    const turn = this.turnOf(e);
    const outcome = turnOutcome(e);
    turn.status = outcome.status;
    this.closeText(turn, outcome.status === "completed" ? "done" : "interrupted");
    if (outcome.status === "completed") {
      turn.output = outcome.output;
      turn.stop_reason = outcome.stop_reason;
    } else if (outcome.error) {
      turn.error = `${outcome.error.code}: ${outcome.error.message}`;
    } else {
      turn.error = outcome.reason ?? "cancelled";
    }
    if (this.activeTurnId === turn.id) this.activeTurnId = null;
    this.recovering = false;
  }

  private runStatus(e: EventOf<"run.status">): void {
    const p = e.payload;
    const { phase } = p;
    const call = e.parent_id ? this.calls.get(e.parent_id) : undefined;
    if (call) {
      call.steps.push({ key: e.event_id, phase, exec_id: e.subagent_id ?? null });
    } else if (phase === "recovering") {
      this.recovering = true;
      this.note(e, "warning", `The runtime restarted; the turn resumes${p.attempt !== undefined ? ` (attempt ${p.attempt})` : ""}`);
    } else if (phase === "handoff") {
      this.agent = p.to ?? this.agent;
      this.note(e, "info", `Handed off from ${p.from ?? "?"} to ${p.to ?? "?"}${p.reason ? `: ${p.reason}` : ""}`);
    }
  }

  private toolStarted(e: EventOf<"tool.started">): void {
    const call = this.callOf(e);
    call.name = e.payload.name;
    call.args = e.payload.args;
    call.status = "running";
    call.started_at = e.timestamp;
    call.code_version = this.codeTools.get(call.name) ?? null;
    this.recovering = false;
  }

  private toolResult(e: EventOf<"tool.result">): void {
    const call = this.callOf(e);
    const { output, is_error, metadata } = e.payload;
    call.result = output;
    call.has_result = true;
    call.status = RESULT_STATUS[metadata.status] ?? (is_error ? "failed" : "succeeded");
    call.duration_ms = metadata.execution_time_ms;
    call.progress = null;
  }

  private actionRequired(e: EventOf<"action.required">): void {
    const approval = newApproval(e);
    this.approvals.set(approval.action_id, approval);
    const call = this.callOf(e);
    call.approval = approval;
    call.status = "waiting";
  }

  private actionResolved(e: EventOf<"action.resolved">): void {
    const approval = e.action_id ? this.approvals.get(e.action_id) : undefined;
    if (!approval) return;
    approval.status = e.payload.decision;
    approval.reason = e.payload.reason;
    const call = e.tool_call_id ? this.calls.get(e.tool_call_id) : [...this.calls.values()].find((c) => c.approval === approval);
    if (call && call.status === "waiting")
      call.status = approval.status === "approved" || approval.status === "answered" ? "running" : approval.status === "rejected" ? "rejected" : "timed out";
  }

  private subagentSpawned(e: EventOf<"subagent.spawned">): void {
    if (!e.subagent_id) return;
    const agent: SubAgent = {
      id: e.subagent_id,
      title: e.payload.title,
      depth: e.depth ?? e.payload.depth,
      status: "running",
      result: null,
      items: [],
      streaming: null,
    };
    this.agents.set(agent.id, agent);
    const parent = e.parent_id ? this.calls.get(e.parent_id) : undefined;
    parent?.agents.push(agent);
  }

  private subagentEnded(e: RuntimeEvent, status: "completed" | "failed", result: unknown): void {
    const agent = e.subagent_id ? this.agents.get(e.subagent_id) : undefined;
    if (!agent) return;
    agent.status = status;
    agent.result = result;
    this.closeText(agent, "done");
  }

  private costRecorded(e: EventOf<"cost.recorded" | "usage.lost">): void {
    const turn = this.turnOf(e);
    const { usage, cost_usd } = e.payload;
    turn.input_tokens += usage.input_tokens;
    turn.cached_input_tokens += usage.cached_input_tokens ?? 0;
    turn.output_tokens += usage.output_tokens;
    if (cost_usd !== null) turn.cost_usd = (turn.cost_usd ?? 0) + cost_usd;
  }
}
