// What the session view shows, folded from the session's events in log order: the same fold rebuilds the
// view from the whole log on load and then keeps it live, so a reload shows exactly what was there.
// Objects are updated in place (a long stream of text deltas would otherwise copy the conversation per
// event); `version` grows with every applied event so the view knows when to draw again.
import type { RuntimeEvent } from "../../../../src/client/index";
import type { Approval, CallStatus, Container, NoteItem, SubAgent, TextItem, ToolCall, Turn } from "./items";

type Payload = Record<string, unknown>;

const str = (v: unknown): string | null => (typeof v === "string" ? v : null);
const num = (v: unknown): number | null => (typeof v === "number" && Number.isFinite(v) ? v : null);

/** finish_reason values of a model call that did not end on its own (a restart, an interrupt, a provider error). */
const INTERRUPTED = new Set(["cancelled", "interrupted", "error"]);
const RESULT_STATUS: Record<string, CallStatus> = { success: "succeeded", error: "failed", rejected: "rejected", timed_out: "timed out" };

export class SessionModel {
  readonly events: RuntimeEvent[] = [];
  readonly turns: Turn[] = [];
  readonly approvals = new Map<string, Approval>();
  agent = "";
  queued: string[] = [];
  activeTurnId: string | null = null;
  recovering = false;
  version = 0;
  private readonly turnById = new Map<string, Turn>();
  private readonly calls = new Map<string, ToolCall>();
  private readonly agents = new Map<string, SubAgent>();

  get lastSequence(): number {
    return this.events.at(-1)?.sequence ?? 0;
  }

  get pendingApprovals(): Approval[] {
    return [...this.approvals.values()].filter((a) => a.status === "pending");
  }

  turn(id: string): Turn | undefined {
    return this.turnById.get(id);
  }

  /** Folds one event; one already applied (a sequence not past the last) is ignored and answers false. */
  apply(e: RuntimeEvent): boolean {
    if (e.sequence <= this.lastSequence) return false;
    this.events.push(e);
    this.version++;
    const p = e.payload as Payload;
    switch (e.type) {
      case "session.created":
        this.agent = str(p.agent) ?? "";
        break;
      case "turn.submitted":
        this.turnOf(e).status = p.queued ? "queued" : "accepted";
        break;
      case "queue.changed":
        this.queued = Array.isArray(p.queued) ? p.queued.filter((id): id is string => typeof id === "string") : [];
        break;
      case "turn.started":
        this.turnOf(e).status = "running";
        this.activeTurnId = e.turn_id ?? null;
        this.recovering = false;
        break;
      case "turn.completed":
      case "turn.failed":
      case "turn.cancelled":
        this.endTurn(e, p);
        break;
      case "run.status":
        this.runStatus(e, p);
        break;
      case "model.requested":
        this.containerOf(e).streaming = null;
        break;
      case "model.delta":
        this.appendText(e, str(p.text) ?? "");
        break;
      case "model.completed":
        this.recovering = false;
        this.closeText(this.containerOf(e), INTERRUPTED.has(str(p.finish_reason) ?? "") ? "interrupted" : "done");
        if (p.finish_reason === "error") this.note(e, "error", `Model call failed: ${str((p.error as Payload | undefined)?.message) ?? "unknown error"}`);
        break;
      case "reasoning.summary":
        this.note(e, "plan", str(p.text) ?? "");
        break;
      case "message.injected":
        this.containerOf(e).items.push({ kind: "injected", key: e.event_id, content: str(p.content) ?? "" });
        break;
      case "tool.started":
        this.toolStarted(e, p);
        break;
      case "mcp.progress":
        this.callOf(e).progress = str(p.message) ?? (num(p.progress) !== null ? `${p.progress}${num(p.total) !== null ? ` / ${p.total}` : ""}` : null);
        break;
      case "tool.result":
        this.toolResult(e, p);
        break;
      case "action.required":
        this.actionRequired(e, p);
        break;
      case "action.resolved":
        this.actionResolved(e, p);
        break;
      case "subagent.spawned":
        this.subagentSpawned(e, p);
        break;
      case "subagent.completed":
      case "subagent.failed": {
        const agent = e.subagent_id ? this.agents.get(e.subagent_id) : undefined;
        if (agent) {
          agent.status = e.type === "subagent.completed" ? "completed" : "failed";
          agent.result = e.type === "subagent.completed" ? p.result : p.error;
          this.closeText(agent, "done");
        }
        break;
      }
      case "budget.exceeded":
        this.note(e, "error", `Budget exceeded: ${str(p.reason) ?? "limit"} (limit ${String(p.limit)}, observed ${String(p.observed)})`);
        break;
      case "model.fallback":
        this.note(e, "warning", `Model ${str(p.from) ?? "?"} failed over to ${str(p.to) ?? "?"}: ${str(p.reason) ?? "unknown error"}`);
        break;
      case "context.compaction.completed":
        this.note(e, "info", `History compacted from ${String(p.before_tokens)} to ${String(p.after_tokens)} tokens`);
        break;
      case "cost.recorded":
        this.costRecorded(e, p);
        break;
      case "runtime.warning":
        this.note(e, "warning", str(p.message) ?? "warning");
        break;
      case "runtime.error":
        this.note(e, "error", str(p.message) ?? "error");
        break;
      default:
        // model.requested phases, tool catalogs, spills and compaction starts have nothing to show outside the timeline.
        break;
    }
    return true;
  }

  private turnOf(e: RuntimeEvent): Turn {
    const id = e.turn_id ?? "";
    let turn = this.turnById.get(id);
    if (!turn) {
      const p = e.payload as Payload;
      turn = {
        id,
        input: str(p.input) ?? "",
        status: "accepted",
        items: [],
        streaming: null,
        output: null,
        stop_reason: null,
        error: null,
        input_tokens: 0,
        cached_input_tokens: 0,
        output_tokens: 0,
        cost_usd: null,
      };
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

  private callOf(e: RuntimeEvent): ToolCall {
    const id = e.tool_call_id ?? e.event_id;
    let call = this.calls.get(id);
    if (!call) {
      const p = e.payload as Payload;
      call = {
        kind: "tool",
        key: id,
        name: str(p.name) ?? str(p.tool_name) ?? "tool",
        args: p.args,
        depth: e.depth ?? 0,
        status: "running",
        result: null,
        has_result: false,
        started_at: null,
        duration_ms: null,
        approval: null,
        progress: null,
        agents: [],
        steps: [],
      };
      this.calls.set(id, call);
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

  private endTurn(e: RuntimeEvent, p: Payload): void {
    const turn = this.turnOf(e);
    turn.status = e.type === "turn.completed" ? "completed" : e.type === "turn.failed" ? "failed" : "cancelled";
    this.closeText(turn, e.type === "turn.completed" ? "done" : "interrupted");
    if (e.type === "turn.completed") {
      turn.output = p.output;
      turn.stop_reason = str(p.stop_reason);
    } else if (e.type === "turn.failed") {
      const error = p.error as Payload | undefined;
      turn.error = `${str(error?.code) ?? "error"}: ${str(error?.message) ?? ""}`;
    } else {
      turn.error = str(p.reason) ?? "cancelled";
    }
    if (this.activeTurnId === turn.id) this.activeTurnId = null;
    this.recovering = false;
  }

  private runStatus(e: RuntimeEvent, p: Payload): void {
    const phase = str(p.phase) ?? "";
    const call = e.parent_id ? this.calls.get(e.parent_id) : undefined;
    if (call) {
      call.steps.push({ key: e.event_id, phase, exec_id: e.subagent_id ?? null });
    } else if (phase === "recovering") {
      this.recovering = true;
      this.note(e, "warning", `The runtime restarted; the turn resumes${num(p.attempt) !== null ? ` (attempt ${p.attempt})` : ""}`);
    } else if (phase === "handoff") {
      this.agent = str(p.to) ?? this.agent;
      this.note(e, "info", `Handed off from ${str(p.from) ?? "?"} to ${str(p.to) ?? "?"}${str(p.reason) ? `: ${p.reason}` : ""}`);
    }
  }

  private toolStarted(e: RuntimeEvent, p: Payload): void {
    const call = this.callOf(e);
    call.name = str(p.name) ?? call.name;
    call.args = p.args;
    call.status = "running";
    call.started_at = e.timestamp;
    this.recovering = false;
  }

  private toolResult(e: RuntimeEvent, p: Payload): void {
    const call = this.callOf(e);
    const meta = (p.metadata ?? {}) as Payload;
    call.result = "output" in p ? p.output : p.output_preview;
    call.has_result = true;
    call.status = RESULT_STATUS[str(meta.status) ?? ""] ?? (p.is_error ? "failed" : "succeeded");
    call.duration_ms = num(meta.execution_time_ms) ?? (call.started_at === null ? null : e.timestamp - call.started_at);
    call.progress = null;
  }

  private actionRequired(e: RuntimeEvent, p: Payload): void {
    const approval: Approval = {
      action_id: e.action_id ?? e.event_id,
      turn_id: e.turn_id ?? null,
      tool_name: str(p.tool_name) ?? "tool",
      args: p.args,
      expires_at: num(p.expires_at),
      status: "pending",
      reason: null,
    };
    this.approvals.set(approval.action_id, approval);
    const call = this.callOf(e);
    call.approval = approval;
    call.status = "waiting";
  }

  private actionResolved(e: RuntimeEvent, p: Payload): void {
    const approval = e.action_id ? this.approvals.get(e.action_id) : undefined;
    if (!approval) return;
    const decision = str(p.decision);
    approval.status = decision === "approved" || decision === "rejected" || decision === "timed_out" ? decision : "rejected";
    approval.reason = str(p.reason);
    const call = e.tool_call_id ? this.calls.get(e.tool_call_id) : [...this.calls.values()].find((c) => c.approval === approval);
    if (call && call.status === "waiting") call.status = approval.status === "approved" ? "running" : approval.status === "rejected" ? "rejected" : "timed out";
  }

  private subagentSpawned(e: RuntimeEvent, p: Payload): void {
    if (!e.subagent_id) return;
    const agent: SubAgent = {
      id: e.subagent_id,
      title: str(p.title) ?? "sub-agent",
      depth: e.depth ?? num(p.depth) ?? 1,
      status: "running",
      result: null,
      items: [],
      streaming: null,
    };
    this.agents.set(agent.id, agent);
    const parent = e.parent_id ? this.calls.get(e.parent_id) : undefined;
    parent?.agents.push(agent);
  }

  private costRecorded(e: RuntimeEvent, p: Payload): void {
    const turn = this.turnOf(e);
    const usage = (p.usage ?? {}) as Payload;
    turn.input_tokens += num(usage.input_tokens) ?? 0;
    turn.cached_input_tokens += num(usage.cached_input_tokens) ?? 0;
    turn.output_tokens += num(usage.output_tokens) ?? 0;
    const cost = num(p.cost_usd);
    if (cost !== null) turn.cost_usd = (turn.cost_usd ?? 0) + cost;
  }
}
