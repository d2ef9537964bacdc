// The AI SDK UI message stream (protocol v1) of one turn, projected from the turn's events: the assistant
// message's id is the turn id and every part id derives from a sequence, so replaying the log gives the
// same chunks. `TurnProjection` maps events to chunks; `turnStream` (ui-turn-stream.ts) makes a whole response of them.
import type { UIMessageChunk } from "ai";
import { type EventTable, ignored, onEvent } from "../protocol/event-table";
import type { EventOf, RuntimeEvent, TerminalType } from "../protocol/events";
import { fileRoute } from "../protocol/input-parts";

export type UiChunk = UIMessageChunk;

/** What an assistant message's metadata may hold. */
export interface ChatMessageMetadata {
  session_id?: string;
  stop_reason?: string;
  usage?: unknown;
  /** A structured (output_schema) final output. */
  output?: unknown;
  error?: { code: string; message: string };
  cancel_reason?: string;
  /** The turn that interrupted or rolled back this one (on_busy). */
  superseded_by?: string;
}

/** A sub-agent as its `data-subagent` part shows it (the part's id is the tool call that runs it). */
export interface SubagentCard {
  subagent_id: string;
  index: number;
  title: string;
  depth: number;
  status: "running" | "completed" | "failed";
  text: string;
  tools: { tool_call_id: string; name: string; status: "running" | "done" | "error" }[];
  result?: unknown;
  error?: string;
}

type ToolEvent = EventOf<"tool.started" | "tool.result" | "action.required">;

const nested = (e: RuntimeEvent): boolean => (e.depth ?? 0) > 0;

/** A tool part's name and input (a result alone carries no input). */
function toolOf(e: ToolEvent): { name: string; args: unknown } {
  if (e.type === "action.required") return { name: e.payload.tool_name, args: e.payload.args ?? {} };
  return { name: e.payload.name, args: e.type === "tool.started" ? (e.payload.args ?? {}) : {} };
}

/** A refused call (a person rejected it, or nobody decided in time) never ran. */
function resultOf(e: EventOf<"tool.result">): { output: unknown; isError: boolean; refused: boolean } {
  const { status } = e.payload.metadata;
  return { output: e.payload.output ?? null, isError: e.payload.is_error, refused: status === "rejected" || status === "timed_out" };
}

function settleCardTool(card: SubagentCard, e: EventOf<"tool.result">): void {
  const tool = card.tools.find((t) => t.tool_call_id === e.tool_call_id);
  if (tool) tool.status = e.payload.is_error ? "error" : "done";
}

export class TurnProjection {
  ended = false;
  private started = false;
  private stepOpen = false;
  /** The open step has had its executor model call (the next one starts a new step). */
  private stepCalled = false;
  private stepHasText = false;
  private textId: string | null = null;
  /** Tool calls with a tool part: the root's calls, and nested calls that asked for approval. */
  private readonly announced = new Set<string>();
  private readonly answered = new Set<string>();
  private readonly refused = new Set<string>();
  /** Pending approvals: action id → tool call id. */
  private readonly awaiting = new Map<string, string>();
  private readonly runningTools = new Set<string>();
  private readonly openModelCalls = new Set<string>();
  /** Each nested call's enclosing sub-agent call. */
  private readonly parentOf = new Map<string, string>();
  private readonly cards = new Map<string, Map<string, SubagentCard>>();
  /** The approvals the turn waits for with nothing else of it under way, or null when it is not paused. */
  pausedOn: string[] | null = null;

  constructor(readonly turnId: string) {}

  push(e: RuntimeEvent): UiChunk[] {
    if (e.type === "queue.changed") return this.queued(e);
    if (this.ended || e.turn_id !== this.turnId) return [];
    const out: UiChunk[] = [];
    if (e.tool_call_id && e.parent_id) this.parentOf.set(e.tool_call_id, e.parent_id);
    onEvent(TurnProjection.PROJECT, e, this, out);
    this.pausedOn = this.computePause();
    return out;
  }

  private static readonly PROJECT: EventTable<[TurnProjection, UiChunk[]], void> = {
    ...ignored(
      "action.approval.recorded",
      "turn.rolled_back",
      "tool.result.late",
      "session.created",
      "session.forked",
      "session.version_changed",
      "turn.submitted",
      "queue.changed",
      "run.status",
    ),
    "turn.started": (_e, p, out) => {
      p.started = true;
      p.openStep(out);
    },
    "model.requested": (e, p, out) => {
      if (e.step_id) p.openModelCalls.add(e.step_id);
      if (!nested(e) && e.payload.phase === "executor") p.nextStep(out);
    },
    "model.completed": (e, p, out) => {
      if (e.step_id) p.openModelCalls.delete(e.step_id);
      // The call's text is whole now (tool calls may follow, and the turn may pause for them).
      if (!nested(e) && (e.payload.phase ?? "executor") === "executor") p.closeText(out);
    },
    "model.delta": (e, p, out) => {
      if (nested(e)) p.updateCard(e, out, (c) => (c.text += e.payload.text));
      else p.appendText(`text-${e.sequence}`, e.payload.text, out);
    },
    "reasoning.summary": (e, p, out) => {
      if (!nested(e)) p.reasoning(e, out);
    },
    "tool.started": (e, p, out) => {
      p.runningTools.add(e.tool_call_id!);
      if (nested(e) && !p.announced.has(e.tool_call_id!)) {
        p.updateCard(e, out, (c) => c.tools.push({ tool_call_id: e.tool_call_id!, name: e.payload.name, status: "running" }));
      } else {
        p.announce(e, out, true);
      }
    },
    "action.required": (e, p, out) => {
      // A call waiting for approval has not started: its input comes with the request. A question (ask_user)
      // stays a tool part in input-available: the client answers it with its tool output.
      p.announce(e, out, false);
      if (e.payload.kind === "tool_approval") out.push({ type: "tool-approval-request", approvalId: e.action_id!, toolCallId: e.tool_call_id! });
      p.awaiting.set(e.action_id!, e.tool_call_id!);
    },
    "action.resolved": (e, p) => {
      p.awaiting.delete(e.action_id!);
      if (e.payload.decision === "rejected" || e.payload.decision === "timed_out") p.refused.add(e.tool_call_id!);
    },
    "tool.result": (e, p, out) => {
      p.runningTools.delete(e.tool_call_id!);
      if (p.announced.has(e.tool_call_id!) || !nested(e)) p.toolResult(e, out);
      else p.updateCard(e, out, (c) => settleCardTool(c, e));
    },
    "subagent.spawned": (e, p, out) => p.updateCard(e, out, (c) => Object.assign(c, { title: e.payload.title, index: e.payload.index })),
    "subagent.completed": (e, p, out) => p.updateCard(e, out, (c) => Object.assign(c, { status: "completed", result: e.payload.result })),
    "subagent.failed": (e, p, out) => p.updateCard(e, out, (c) => Object.assign(c, { status: "failed", error: e.payload.error || undefined })),
    // A file a tool returned: a file part of the message, which the browser fetches from its route.
    "artifact.created": (e, _p, out) => {
      if (!nested(e)) out.push({ type: "file", url: fileRoute(e.session_id, e.payload.file_id), mediaType: e.payload.media_type });
    },
    "turn.completed": (e, p, out) => p.end(e, out),
    "turn.failed": (e, p, out) => p.end(e, out),
    "turn.cancelled": (e, p, out) => p.end(e, out),
  };

  /**
   * While the turn waits behind others, where it stands (1: next): a transient `data-queued` part, which
   * useChat hands to `onData` without adding it to the message.
   */
  private queued(e: EventOf<"queue.changed">): UiChunk[] {
    const position = e.payload.queued.indexOf(this.turnId) + 1;
    if (this.started || this.ended || position === 0) return [];
    return [{ type: "data-queued", id: this.turnId, data: { turn_id: this.turnId, position }, transient: true }];
  }

  private computePause(): string[] | null {
    if (this.ended || this.awaiting.size === 0 || this.openModelCalls.size > 0) return null;
    // The sub-agent calls enclosing a waiting call wait too; any other call still running keeps the turn busy.
    const blocked = new Set<string>();
    for (const call of this.awaiting.values()) {
      for (let c = this.parentOf.get(call); c && !blocked.has(c); c = this.parentOf.get(c)) blocked.add(c);
    }
    for (const call of this.runningTools) if (!blocked.has(call)) return null;
    return [...this.awaiting.keys()];
  }

  private openStep(out: UiChunk[]): void {
    out.push({ type: "start-step" });
    this.stepOpen = true;
    this.stepCalled = false;
    this.stepHasText = false;
  }

  private closeText(out: UiChunk[]): void {
    if (this.textId) out.push({ type: "text-end", id: this.textId });
    this.textId = null;
  }

  private closeStep(out: UiChunk[]): void {
    this.closeText(out);
    if (this.stepOpen) out.push({ type: "finish-step" });
    this.stepOpen = false;
  }

  /** An executor call of the root: a new step, unless the open one has not had its call yet. */
  private nextStep(out: UiChunk[]): void {
    if (this.stepOpen && this.stepCalled) this.closeStep(out);
    if (!this.stepOpen) this.openStep(out);
    this.stepCalled = true;
  }

  private appendText(id: string, delta: string, out: UiChunk[]): void {
    if (!this.stepOpen) this.openStep(out);
    if (!this.textId) {
      this.textId = id;
      out.push({ type: "text-start", id });
    }
    out.push({ type: "text-delta", id: this.textId, delta });
    this.stepHasText = true;
  }

  private reasoning(e: EventOf<"reasoning.summary">, out: UiChunk[]): void {
    if (!this.stepOpen) this.openStep(out);
    const id = `reasoning-${e.sequence}`;
    out.push({ type: "reasoning-start", id }, { type: "reasoning-delta", id, delta: e.payload.text }, { type: "reasoning-end", id });
  }

  /** The call's tool part with its input; again when an approved call starts (its part shows it running). */
  private announce(e: ToolEvent, out: UiChunk[], starting: boolean): void {
    const call = e.tool_call_id!;
    if (this.announced.has(call) && !starting) return;
    const { name, args } = toolOf(e);
    out.push({ type: "tool-input-available", toolCallId: call, toolName: name, input: args, dynamic: true });
    this.announced.add(call);
  }

  private toolResult(e: EventOf<"tool.result">, out: UiChunk[]): void {
    const call = e.tool_call_id!;
    if (!this.announced.has(call)) this.announce(e, out, false); // a result always has its part
    const { output, isError, refused } = resultOf(e);
    if (refused) out.push({ type: "tool-output-denied", toolCallId: call });
    else if (isError)
      out.push({ type: "tool-output-error", toolCallId: call, errorText: typeof output === "string" ? output : JSON.stringify(output), dynamic: true });
    else out.push({ type: "tool-output-available", toolCallId: call, output, dynamic: true });
    this.answered.add(call);
  }

  /** Sub-agent activity: the `data-subagent` part of the call that runs the sub-agent, sent whole on each change. */
  private updateCard(e: RuntimeEvent, out: UiChunk[], change: (card: SubagentCard) => void): void {
    const parent = e.parent_id;
    if (!parent || !e.subagent_id) return;
    const group = this.cards.get(parent) ?? new Map<string, SubagentCard>();
    this.cards.set(parent, group);
    const card = group.get(e.subagent_id) ?? {
      subagent_id: e.subagent_id,
      index: 0,
      title: "",
      depth: e.depth ?? 1,
      status: "running",
      text: "",
      tools: [],
    };
    change(card);
    group.set(e.subagent_id, card);
    const subagents = [...group.values()].sort((a, b) => a.index - b.index).map((c) => ({ ...c, tools: c.tools.map((t) => ({ ...t })) }));
    out.push({ type: "data-subagent", id: parent, data: { tool_call_id: parent, subagents } });
  }

  private end(e: EventOf<TerminalType>, out: UiChunk[]): void {
    // Calls the turn left without an outcome get one, so no card stays waiting after the turn.
    for (const call of this.announced) {
      if (this.answered.has(call)) continue;
      if (this.refused.has(call)) out.push({ type: "tool-output-denied", toolCallId: call });
      else out.push({ type: "tool-output-error", toolCallId: call, errorText: "The turn ended before this call finished", dynamic: true });
    }
    this.awaiting.clear();
    this.ended = true;
    if (e.type === "turn.completed") {
      const { output, stop_reason, usage } = e.payload;
      // A final output that was not streamed (a fixed message, say) is sent as text.
      if (!this.stepHasText && output !== undefined && output !== null && output !== "") {
        const id = `text-${e.sequence}`;
        this.appendText(id, typeof output === "string" ? output : JSON.stringify(output), out);
      }
      this.closeStep(out);
      const metadata: ChatMessageMetadata = { stop_reason, usage, ...(typeof output === "string" ? {} : { output }) };
      out.push({ type: "finish", finishReason: stop_reason === "final_answer" ? "stop" : "other", messageMetadata: metadata });
    } else if (e.type === "turn.failed") {
      this.closeStep(out);
      const error = { code: e.payload.error.code, message: e.payload.error.message };
      out.push({ type: "message-metadata", messageMetadata: { error } satisfies ChatMessageMetadata });
      out.push({ type: "error", errorText: `${error.code}: ${error.message}` });
    } else {
      this.closeStep(out);
      const { reason, by_turn_id } = e.payload;
      const metadata: ChatMessageMetadata = { cancel_reason: reason, ...(by_turn_id ? { superseded_by: by_turn_id } : {}) };
      out.push({ type: "abort", reason }, { type: "finish", finishReason: "other", messageMetadata: metadata });
    }
  }
}
