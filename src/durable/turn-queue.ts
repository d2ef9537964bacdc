// The session's turn queue: submitting (idempotent by key, capped), removing, promoting, and live messages
// for the running turn. Inputs are recorded first, as events or inbox rows, in the transaction that
// acknowledges them; the turn runner takes it from there.

import { ApiError } from "../protocol/errors";
import type { EventDraft, PayloadOf, TurnTrace } from "../protocol/events";
import type { FileRef } from "../protocol/input-parts";
import type { InjectResult, SubmitTurnBody, TurnAccepted } from "../protocol/wire";
import { checkInputFits } from "../runtime/context-budget";
import { redactStage, type Verdict } from "../runtime/guardrails/run";
import { randomId } from "../runtime/ids";
import { randomTraceId, traceFrom } from "../runtime/trace";
import type { Capability } from "./session-capability";
import type { SessionContext } from "./session-context";
import type { TurnRow } from "./session-store";
import { turnInput, turnInputs } from "./turn-attachments";

/**
 * Turns that may wait in the queue. Live messages that are still in the inbox count too: those that arrive
 * too late for their turn become queued turns when it ends, so they are refused when they could overflow it.
 */
export const MAX_QUEUED_TURNS = 20;

type TurnSource = NonNullable<PayloadOf<"turn.submitted">["source"]>;

/** The slice of the session the queue works on. */
export type QueueSession = Pick<SessionContext, "agent" | "bindings" | "commit" | "row" | "store" | "transact" | "view">;

/** A turn as the queue records it: its text, the references of its files (turn-attachments.ts), and its key. */
export interface TurnRequest {
  input: string;
  files?: FileRef[];
  idempotency_key?: string;
}

export class TurnQueue {
  constructor(
    private readonly s: QueueSession,
    /** Starts the first queued turn when none is running. */
    private readonly startNext: () => void,
  ) {}

  /**
   * Queues a turn; it joins `trace` (the caller's, from its traceparent) or starts a trace of its own.
   * `source` names what submitted it when the runtime did (a due schedule).
   */
  submit(body: TurnRequest, trace: TurnTrace = traceFrom(null, randomTraceId), source?: TurnSource): TurnAccepted & { duplicate?: boolean } {
    const { store } = this.s;
    const { input, verdicts } = this.redacted(body.input);
    body = { ...body, input };
    if (body.idempotency_key) {
      const prior = store.turnByIdempotencyKey(body.idempotency_key);
      if (prior) {
        if (prior.input !== body.input) {
          throw new ApiError("conflict", "idempotency_key was already used with a different body", { turn_id: prior.turn_id });
        }
        const submitted = this.s.view().turns.find((t) => t.turn_id === prior.turn_id);
        return { turn_id: prior.turn_id, status: submitted?.status === "queued" ? "queued" : "accepted", duplicate: true };
      }
    }
    this.checkSize("input", body.input);
    const queuedBefore = store.queuedTurns();
    const busy = store.runningTurn() !== null || queuedBefore.length > 0;
    if (busy) this.checkRoom();
    const turn_id = randomId("trn");
    const key = body.idempotency_key ? { idempotency_key: body.idempotency_key } : {};
    const drafts: EventDraft[] = [
      {
        type: "turn.submitted",
        turn_id,
        trace,
        payload: { input: body.input, ...(body.files ? { files: body.files } : {}), queued: busy, ...key, ...(source ? { source } : {}) },
      },
    ];
    drafts.push(...verdictEvents(turn_id, verdicts));
    if (busy) drafts.push({ type: "queue.changed", payload: { queued: [...queuedBefore.map((t) => t.turn_id), turn_id] } });
    this.s.commit(drafts);
    this.startNext();
    return { turn_id, status: busy ? "queued" : "accepted" };
  }

  /** A live message: the running turn takes it before its next model call; with none running it is a new turn. */
  inject(content: string): InjectResult {
    const { store } = this.s;
    const running = store.runningTurn();
    if (!running) return { delivery: "new_turn", ...this.submit({ input: content }) };
    const { input, verdicts } = this.redacted(content);
    this.checkSize("content", input);
    this.checkRoom();
    const message_id = randomId("msg");
    const add = () => store.addToInbox(running.turn_id, message_id, input, Date.now());
    if (verdicts.length === 0) this.s.transact(add);
    else this.s.commit(verdictEvents(running.turn_id, verdicts, message_id), add);
    return { delivery: "injected", turn_id: running.turn_id, message_id };
  }

  /**
   * An input with the agent's input redaction rules applied. They run here, before the input is stored (the
   * log, the inbox, a schedule), so no stored copy holds what they remove; the other input rules run in the turn.
   */
  redacted(input: string): { input: string; verdicts: Verdict[] } {
    const r = redactStage(this.s.agent().guardrails, "input", input);
    return { input: r.value as string, verdicts: r.verdicts };
  }

  remove(turnId: string, reason = "removed from the queue"): string[] {
    this.queued(turnId);
    const queued = this.s.store
      .queuedTurns()
      .filter((t) => t.turn_id !== turnId)
      .map((t) => t.turn_id);
    this.s.commit([
      { type: "turn.cancelled", turn_id: turnId, payload: { reason } },
      { type: "queue.changed", payload: { queued } },
    ]);
    return queued;
  }

  promote(turnId: string): string[] {
    this.queued(turnId);
    const rest = this.s.store
      .queuedTurns()
      .filter((t) => t.turn_id !== turnId)
      .map((t) => t.turn_id);
    const queued = [turnId, ...rest];
    this.s.commit([{ type: "queue.changed", payload: { queued } }]);
    return queued;
  }

  /** Refuses an input that alone is over the agent's history budget: no trimming could make it fit. */
  checkSize(path: string, input: string): void {
    checkInputFits(this.s.agent(), input, path);
  }

  /** Refuses a new queued turn or live message when the queue could overflow. */
  private checkRoom(): void {
    const waiting = this.s.store.queuedTurns().length + this.s.store.inboxSize();
    if (waiting >= MAX_QUEUED_TURNS) {
      throw new ApiError("rate_limited", `The turn queue is full (${MAX_QUEUED_TURNS} turns and live messages waiting); retry when a turn has finished`);
    }
  }

  private queued(turnId: string): TurnRow {
    const turn = this.s.store.turn(turnId);
    if (!turn) throw ApiError.notFound("Turn", turnId);
    if (turn.status !== "queued") throw new ApiError("conflict", `Turn '${turnId}' is ${turn.status}, not queued`);
    return turn;
  }

  /** Its session operations: submitting, live messages, and queue control. */
  capability(): Capability {
    return {
      operations: {
        submitTurn: async ({ body, trace }) => {
          const { input, ...rest } = body as SubmitTurnBody;
          const inputs = turnInputs(this.s.bindings(), this.s.row().session_id);
          return this.submit({ ...rest, ...(await turnInput(input, inputs)) }, trace);
        },
        injectMessage: ({ body }) => this.inject((body as { content: string }).content),
        removeQueued: ({ params }) => ({ queued: this.remove(params.turn_id!) }),
        promoteQueued: ({ params }) => ({ queued: this.promote(params.turn_id!) }),
      },
    };
  }
}

function verdictEvents(turn_id: string, verdicts: Verdict[], message_id?: string): EventDraft[] {
  return verdicts.map((v) => ({ type: "guardrail.checked", turn_id, payload: { ...v, ...(message_id ? { message_id } : {}) } }));
}
