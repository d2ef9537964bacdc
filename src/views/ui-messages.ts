// The session's conversation as AI SDK UIMessage[] (what useChat takes as its initial messages after a
// reload), folded from the log: each turn is the user's input and the assistant message its UI stream
// builds (ui-stream.ts), so a reload shows what a connected client built, with pending approvals asking.
import type { FileUIPart, UIMessage } from "ai";
import type { EventOf, RuntimeEvent } from "../protocol/events";
import { fileRoute } from "../protocol/input-parts";
import { placesTurn, placeTurn } from "./conversation-order";
import { type ChatMessageMetadata, TurnProjection, type UiChunk } from "./ui-stream";

/** The idempotency key of a turn that regenerates the answer to user message `id`. */
export function regenerateKey(userMessageId: string, nonce: string): string {
  return `${userMessageId}${REGENERATE}${nonce}`;
}

const REGENERATE = "#regenerate-";

type Part = Record<string, unknown> & { type: string };

interface TurnFold {
  user: UIMessage | null;
  assistant: { id: string; role: "assistant"; metadata: ChatMessageMetadata; parts: Part[] };
  projection: TurnProjection;
  openText: Map<string, Part>;
  /** Replaced by a regenerated answer. */
  hidden: boolean;
  /** It has its place in the conversation (conversation-order.ts): it started, or was cancelled before. */
  placed: boolean;
}

export class ConversationFold {
  /** In conversation order (conversation-order.ts). */
  private turns: TurnFold[] = [];
  private readonly byId = new Map<string, TurnFold>();
  /**
   * A rollback, a regenerated answer or a turn taking its place after one of this fold's named a turn this fold
   * has not seen: folded from a later point of the log than its start (a page, chat-page.ts), the turns before
   * that point were needed.
   */
  reachesBack = false;

  push(e: RuntimeEvent): void {
    if (e.type === "turn.rolled_back") {
      this.rolledBack(e.payload.turn_id, e.payload.by_turn_id);
      return;
    }
    if (!e.turn_id) return;
    if (e.type === "turn.submitted") {
      this.submitted(e);
      return;
    }
    const turn = this.byId.get(e.turn_id);
    if (placesTurn(e)) this.place(turn);
    if (!turn) return;
    for (const chunk of turn.projection.push(e)) apply(turn, chunk);
    if (e.type === "action.resolved") respond(turn.assistant.parts, e);
  }

  /**
   * Folds what `e` does across turns only (a submission, a rollback, a turn taking its place), for a page's window
   * (chat-page.ts): a turn's own events, its start and cancellation among them, follow through `push`.
   */
  pushAcross(e: RuntimeEvent): void {
    if (placesTurn(e)) this.place(e.turn_id ? this.byId.get(e.turn_id) : undefined);
    else this.push(e);
  }

  messages(): UIMessage[] {
    return this.turns.flatMap(shown);
  }

  /** The turns in conversation order. */
  turnIds(): string[] {
    return this.turns.map((t) => t.assistant.id);
  }

  /** The messages turn `turnId` shows: its answer counts only the events of it pushed so far. */
  messagesOf(turnId: string): UIMessage[] {
    const turn = this.byId.get(turnId);
    return turn ? shown(turn) : [];
  }

  /** The id of the user message turn `turnId` shows, if any (known from its submission alone). */
  userIdOf(turnId: string): string | undefined {
    return this.byId.get(turnId)?.user?.id;
  }

  /** A turn (undefined: one this fold has not seen) takes its place, once. */
  private place(turn: TurnFold | undefined): void {
    if (!turn) {
      // A turn from before the fold's start placed after one of its own is among them in the conversation.
      if (this.turns.some((t) => t.placed)) this.reachesBack = true;
      return;
    }
    if (turn.placed) return;
    this.turns = placeTurn(this.turns, turn, (t) => t.placed);
    turn.placed = true;
  }

  /**
   * A rolled-back turn leaves the conversation, its user message too, unless the turn that replaced it
   * regenerates it (it has no user message of its own): then that turn answers the same user message.
   */
  private rolledBack(turnId: string, byTurnId: string): void {
    const turn = this.byId.get(turnId);
    if (!turn) {
      this.reachesBack = true;
      return;
    }
    const by = this.byId.get(byTurnId);
    if (by && !by.user) by.user = turn.user;
    this.turns.splice(this.turns.indexOf(turn), 1);
    this.byId.delete(turnId);
  }

  private submitted(e: EventOf<"turn.submitted">): void {
    const { input } = e.payload;
    const key = e.payload.idempotency_key || null;
    const turnId = e.turn_id!;
    const at = key?.lastIndexOf(REGENERATE) ?? -1;
    const regenerated = at > 0 ? this.turns.findLast((t) => t.user?.id === key!.slice(0, at)) : undefined;
    if (at > 0 && !regenerated) this.reachesBack = true;
    if (regenerated) {
      // The client dropped the answer it regenerates and everything after it.
      for (const t of this.turns.slice(this.turns.indexOf(regenerated))) {
        t.hidden = true;
        if (t !== regenerated) t.user = null;
      }
    }
    const turn: TurnFold = {
      user: regenerated
        ? null
        : { id: key ?? `${turnId}-input`, role: "user", parts: [...(input ? [{ type: "text" as const, text: input }] : []), ...fileParts(e)] },
      assistant: { id: turnId, role: "assistant", metadata: { session_id: e.session_id }, parts: [] },
      projection: new TurnProjection(turnId),
      openText: new Map(),
      hidden: false,
      placed: false,
    };
    this.turns.push(turn);
    this.byId.set(turnId, turn);
  }
}

function shown(t: TurnFold): UIMessage[] {
  return [...(t.user ? [t.user] : []), ...(t.hidden || t.assistant.parts.length === 0 ? [] : [t.assistant as UIMessage])];
}

/**
 * The turn's files as UI file parts. Their url is the file's route, relative to the runtime's base URL; a browser
 * adds `?access_token=` (an <img> sends no header).
 */
function fileParts(e: EventOf<"turn.submitted">): FileUIPart[] {
  return (e.payload.files ?? []).map((f) => ({
    type: "file",
    mediaType: f.media_type,
    ...(f.filename ? { filename: f.filename } : {}),
    url: fileRoute(e.session_id, f.file_id),
  }));
}

export function conversation(events: Iterable<RuntimeEvent>): UIMessage[] {
  const fold = new ConversationFold();
  for (const e of events) fold.push(e);
  return fold.messages();
}

/** The current step's parts: a re-announced call updates its part there, as the AI SDK client does. */
function currentStep(parts: Part[]): Part[] {
  const start = parts.findLastIndex((p) => p.type === "step-start");
  return parts.slice(start + 1);
}

function toolPart(parts: Part[], toolCallId: unknown): Part | undefined {
  return parts.findLast((p) => p.type === "dynamic-tool" && p.toolCallId === toolCallId);
}

/** Applies one chunk as the AI SDK's processUIMessageStream does, for the chunks ui-stream.ts sends. */
function apply(turn: TurnFold, c: UiChunk): void {
  const { parts } = turn.assistant;
  switch (c.type) {
    case "start-step":
      parts.push({ type: "step-start" });
      break;
    case "text-start":
    case "reasoning-start": {
      const part: Part =
        c.type === "text-start" ? { type: "text", text: "", state: "streaming" } : { type: "reasoning", id: c.id, text: "", state: "streaming" };
      turn.openText.set(c.id, part);
      parts.push(part);
      break;
    }
    case "text-delta":
    case "reasoning-delta": {
      const part = turn.openText.get(c.id);
      if (part) part.text += c.delta;
      break;
    }
    case "text-end":
    case "reasoning-end": {
      const part = turn.openText.get(c.id);
      if (part) part.state = "done";
      turn.openText.delete(c.id);
      break;
    }
    case "tool-input-available": {
      const existing = currentStep(parts).find((p) => p.type === "dynamic-tool" && p.toolCallId === c.toolCallId);
      if (existing) Object.assign(existing, { state: "input-available", input: c.input });
      else parts.push({ type: "dynamic-tool", toolName: c.toolName, toolCallId: c.toolCallId, state: "input-available", input: c.input });
      break;
    }
    case "tool-approval-request":
      update(parts, c.toolCallId, { state: "approval-requested", approval: { id: c.approvalId } });
      break;
    case "tool-output-available":
      update(parts, c.toolCallId, { state: "output-available", output: c.output });
      break;
    case "tool-output-error":
      update(parts, c.toolCallId, { state: "output-error", errorText: c.errorText });
      break;
    case "tool-output-denied":
      update(parts, c.toolCallId, { state: "output-denied" });
      break;
    case "file":
      parts.push({ type: "file", mediaType: c.mediaType, url: c.url });
      break;
    case "start":
    case "finish":
    case "message-metadata":
      Object.assign(turn.assistant.metadata, c.messageMetadata ?? {});
      break;
    default:
      if (c.type.startsWith("data-")) {
        const data = c as { type: string; id?: string; data: unknown };
        const existing = parts.find((p) => p.type === data.type && p.id === data.id);
        if (existing) existing.data = data.data;
        else parts.push({ type: data.type, id: data.id, data: data.data });
      }
  }
}

function update(parts: Part[], toolCallId: string, patch: Record<string, unknown>): void {
  const part = toolPart(parts, toolCallId);
  if (part) Object.assign(part, patch);
}

/** A decision recorded for a pending approval: the part shows it answered, as the client's own answer does. */
function respond(parts: Part[], e: EventOf<"action.resolved">): void {
  const part = parts.find((p) => p.type === "dynamic-tool" && (p.approval as { id?: string } | undefined)?.id === e.action_id);
  if (!part) return;
  const { decision, reason } = e.payload;
  part.approval = { id: e.action_id, approved: decision === "approved", ...(reason ? { reason } : {}) };
  if (part.state === "approval-requested") part.state = "approval-responded";
}
