// The Open Responses stream of one response, folded from its turn's events: `response.created`, the output
// items as they come (`response.output_item.added`, `response.output_text.delta`, ...), and the end
// (`response.completed`; `response.failed`, also for a cancelled turn, as Responses streams have no event of
// their own for that; or `response.incomplete` when the turn waits for a person). The fold is pure: the same log gives the same events with the same `sequence_number`s, so a
// stream resumed with `starting_after=N` (even after a restart) folds again and sends what follows N.
//
// A response ends where its turn pauses: the first event of the turn after a pause that is not one more
// request joining it ends the response before that event (live, the stream also ends at a pause nothing
// follows yet: `pause()`). A response that continues a paused turn folds the turn from its start to keep
// track of what waits, and begins at the first decision recorded after its `after`.
import type { EventOf, RuntimeEvent } from "../protocol/events";
import {
  APPROVAL_SERVER_LABEL,
  asText,
  echoRequest,
  type IncompleteReason,
  itemId,
  type OutputItem,
  type ResponseObject,
  type ResponseRef,
  responseShell,
  responseUsage,
  seconds,
  withFileUrls,
} from "./response-object";
import { TurnActivity } from "./turn-activity";

/** Every event name the stream sends (`error` only for a failure of the stream itself, response-streams.ts). */
export const STREAM_EVENTS = [
  "response.created",
  "response.queued",
  "response.in_progress",
  "response.output_item.added",
  "response.content_part.added",
  "response.output_text.delta",
  "response.output_text.done",
  "response.content_part.done",
  "response.function_call_arguments.done",
  "response.output_item.done",
  "response.completed",
  "response.incomplete",
  "response.failed",
  "error",
] as const;
export type StreamEventType = (typeof STREAM_EVENTS)[number];

export type ResponsesEvent = { type: StreamEventType; sequence_number: number } & Record<string, unknown>;

type MessageItem = Extract<OutputItem, { type: "message" }>;

export class ResponsesFold {
  readonly response: ResponseObject;
  /** The response ended: its turn ended, or paused. */
  ended = false;
  private begun = false;
  private next = 0;
  private message: { item: MessageItem; index: number } | null = null;
  private textSent = false;
  /** Calls with a function_call item (in this response, or before it began). */
  private readonly called = new Set<string>();
  private readonly activity = new TurnActivity();
  private readonly awaiting = this.activity.awaiting;
  /** The agent's last model call stopped at its output cap. */
  private cut = false;
  /** The turn paused after this response began (the next event of the turn ends the response). */
  private pausedHere = false;

  /** `origin`: the runtime's, as the request reached it: the files of tool results carry absolute URLs under it. */
  constructor(
    private readonly ref: ResponseRef,
    id: string,
    model: string,
    private readonly origin: string,
  ) {
    this.response = responseShell(id, model, 0);
  }

  /** The events of the stream that `e` makes (none for another turn's event, or once the response ended). */
  push(e: RuntimeEvent): ResponsesEvent[] {
    if (this.ended || e.turn_id !== this.ref.turn_id) return [];
    const out: ResponsesEvent[] = [];
    if (!this.begun && this.begins(e)) this.begin(e, out);
    if (!this.begun) {
      this.activity.track(e);
      // A question's call was shown when the response before paused; an approved call is shown when it starts.
      if (e.type === "tool.started" || (e.type === "action.required" && e.payload.kind === "user_input")) this.called.add(e.tool_call_id!);
      return out;
    }
    if (this.pausedHere && e.type !== "action.required") {
      // A reminder changes nothing; a turn cancelled while it waits first closes what waited (in the
      // transaction of its turn.cancelled), and the response ends with the turn.
      if (e.type === "action.reminder" || closesWaiting(e)) return out;
      return [...out, ...this.pause(e.type === "turn.cancelled" ? e : undefined)];
    }
    this.activity.track(e);
    this.project(e, out);
    this.pausedHere = !this.ended && this.pausedOn() !== null;
    return out;
  }

  /** The approvals and questions the turn waits for with nothing else of it under way, or null. */
  pausedOn(): string[] | null {
    return !this.ended && this.activity.paused() ? [...this.awaiting.keys()] : null;
  }

  /**
   * Ends the response at the pause: what waits becomes output items, and the status `incomplete`; or
   * `cancelled` when the turn was cancelled while it waited (nobody answered: the response ends with it).
   */
  pause(cancelled?: EventOf<"turn.cancelled">): ResponsesEvent[] {
    const out: ResponsesEvent[] = [];
    if (this.ended) return out;
    this.closeMessage(out);
    let reason: IncompleteReason = "user_input_required";
    for (const a of this.awaiting.values()) {
      const args = asText(a.payload.args ?? {});
      if (a.payload.kind === "tool_approval") {
        reason = "approval_required";
        if (!this.response.output.some((i) => i.id === a.action_id)) {
          this.addItem(
            { type: "mcp_approval_request", id: a.action_id!, server_label: APPROVAL_SERVER_LABEL, name: a.payload.tool_name, arguments: args },
            out,
          );
        }
      } else if (!this.response.output.some((i) => i.type === "function_call" && i.call_id === a.tool_call_id)) {
        this.addItem(
          { type: "function_call", id: this.id("fc", a.sequence), call_id: a.tool_call_id!, name: a.payload.tool_name, arguments: args, status: "completed" },
          out,
        );
      }
    }
    if (cancelled) {
      this.response.status = "cancelled";
      this.finish("response.failed", out, cancelled);
    } else {
      Object.assign(this.response, { status: "incomplete", incomplete_details: { reason } });
      this.finish("response.incomplete", out);
    }
    return out;
  }

  /** Where the response begins: its turn's first event, or the first decision after `after`. */
  private begins(e: RuntimeEvent): boolean {
    if (this.ref.after === null) return true;
    return e.sequence > this.ref.after && e.type === "action.resolved";
  }

  private begin(e: RuntimeEvent, out: ResponsesEvent[]): void {
    this.begun = true;
    this.response.created_at = seconds(e.timestamp);
    const queued = e.type === "turn.submitted" && e.payload.queued;
    this.response.status = queued ? "queued" : "in_progress";
    const request = e.type === "turn.submitted" || e.type === "action.resolved" ? e.payload.responses_request : undefined;
    if (request) echoRequest(this.response, request);
    this.emit("response.created", { response: this.snapshot() }, out);
    this.emit(queued ? "response.queued" : "response.in_progress", { response: this.snapshot() }, out);
  }

  private project(e: RuntimeEvent, out: ResponsesEvent[]): void {
    const root = (e.depth ?? 0) === 0;
    switch (e.type) {
      case "turn.started":
        if (this.response.status === "queued") {
          this.response.status = "in_progress";
          this.emit("response.in_progress", { response: this.snapshot() }, out);
        }
        return;
      case "model.delta":
        if (root) this.text(e.payload.text, e.sequence, out);
        return;
      case "model.completed":
        if (root && (e.payload.phase ?? "executor") === "executor") {
          this.cut = e.payload.finish_reason === "length";
          this.closeMessage(out);
        }
        return;
      case "reasoning.summary":
        if (root) this.addItem({ type: "reasoning", id: this.id("rs", e.sequence), summary: [{ type: "summary_text", text: e.payload.text }] }, out);
        return;
      case "tool.started":
        if (root) this.call(e.tool_call_id!, e.payload.name, e.payload.args, e.sequence, out);
        return;
      case "tool.result":
        if (root) {
          this.call(e.tool_call_id!, e.payload.name, {}, e.sequence, out);
          const output = asText(withFileUrls(e.payload.output, this.origin, this.ref.session_id));
          this.addItem({ type: "function_call_output", id: this.id("fco", e.sequence), call_id: e.tool_call_id!, output, status: "completed" }, out);
        }
        return;
      case "turn.completed":
        this.completed(e, out);
        return;
      case "turn.failed":
        this.closeMessage(out);
        Object.assign(this.response, { status: "failed", error: { code: e.payload.error.code, message: e.payload.error.message } });
        this.finish("response.failed", out, e);
        return;
      case "turn.cancelled":
        this.closeMessage(out);
        this.response.status = "cancelled";
        this.finish("response.failed", out, e);
        return;
      default:
        return;
    }
  }

  private completed(e: EventOf<"turn.completed">, out: ResponsesEvent[]): void {
    const { output, usage } = e.payload;
    // A final output that was not streamed (a fixed message, a structured output) is sent as text.
    if (!this.textSent && output !== undefined && output !== null && output !== "") this.text(asText(output), e.sequence, out);
    this.closeMessage(out);
    this.response.usage = responseUsage(usage);
    if (this.cut) {
      // The answer stopped at the output cap (max_output_tokens, or the agent's max_tokens), as Responses reports it.
      Object.assign(this.response, { status: "incomplete", incomplete_details: { reason: "max_output_tokens" } });
      this.finish("response.incomplete", out, e);
    } else {
      this.response.status = "completed";
      this.finish("response.completed", out, e);
    }
  }

  /** A function_call item for a call of the agent's, once per call (a result alone carries no arguments), made by event `at`. */
  private call(callId: string, name: string, args: unknown, at: number, out: ResponsesEvent[]): void {
    if (this.called.has(callId)) return;
    this.called.add(callId);
    this.closeMessage(out);
    const item: OutputItem = { type: "function_call", id: this.id("fc", at), call_id: callId, name, arguments: asText(args ?? {}), status: "completed" };
    this.addItem(item, out, { type: "response.function_call_arguments.done", item_id: item.id, arguments: item.arguments });
  }

  /** Text of the answer: a message item, begun by event `at` when none is open. */
  private text(delta: string, at: number, out: ResponsesEvent[]): void {
    if (!this.message) {
      const item: MessageItem = { type: "message", id: this.id("msg", at), status: "in_progress", role: "assistant", content: [] };
      const index = this.response.output.push(item) - 1;
      this.message = { item, index };
      this.emit("response.output_item.added", { output_index: index, item: clone(item) }, out);
      item.content.push({ type: "output_text", text: "", annotations: [] });
      this.emit("response.content_part.added", { item_id: item.id, output_index: index, content_index: 0, part: clone(item.content[0]) }, out);
    }
    const { item, index } = this.message;
    item.content[0]!.text += delta;
    this.textSent = true;
    this.emit("response.output_text.delta", { item_id: item.id, output_index: index, content_index: 0, delta, logprobs: [] }, out);
  }

  private closeMessage(out: ResponsesEvent[]): void {
    if (!this.message) return;
    const { item, index } = this.message;
    this.message = null;
    const part = item.content[0]!;
    this.emit("response.output_text.done", { item_id: item.id, output_index: index, content_index: 0, text: part.text, logprobs: [] }, out);
    this.emit("response.content_part.done", { item_id: item.id, output_index: index, content_index: 0, part: clone(part) }, out);
    item.status = "completed";
    this.emit("response.output_item.done", { output_index: index, item: clone(item) }, out);
  }

  /** A whole item: added and done, with `between` (its arguments' event) in between. */
  private addItem(item: OutputItem, out: ResponsesEvent[], between?: Record<string, unknown> & { type: StreamEventType }): void {
    const index = this.response.output.push(item) - 1;
    this.emit("response.output_item.added", { output_index: index, item: clone(item) }, out);
    if (between) {
      const { type, ...fields } = between;
      this.emit(type, { output_index: index, ...fields }, out);
    }
    this.emit("response.output_item.done", { output_index: index, item: clone(item) }, out);
  }

  private finish(type: StreamEventType, out: ResponsesEvent[], e?: RuntimeEvent): void {
    this.ended = true;
    if (e) this.response.completed_at = seconds(e.timestamp);
    this.emit(type, { response: this.snapshot() }, out);
  }

  private id(prefix: string, sequence: number): string {
    return itemId(prefix, this.ref.session_id, sequence);
  }

  private emit(type: StreamEventType, fields: Record<string, unknown>, out: ResponsesEvent[]): void {
    out.push({ type, sequence_number: this.next++, ...fields });
  }

  private snapshot(): ResponseObject {
    return clone(this.response);
  }
}

const clone = <T>(v: T): T => structuredClone(v);

/** An event that closes a waiting turn's calls as it is cancelled (turn-state.ts closingEvents): nothing else follows a pause so. */
const closesWaiting = (e: RuntimeEvent): boolean =>
  e.type === "tool.result" || e.type === "subagent.failed" || (e.type === "action.resolved" && e.payload.by === "runtime" && e.payload.decision === "rejected");
