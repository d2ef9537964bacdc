// The session's turn queue: submitting (idempotent by key, capped), removing, promoting, and live messages
// for the running turn. Inputs are recorded first, as events or inbox rows, in the transaction that
// acknowledges them; the turn runner takes it from there.

import { checkInputFits } from "../../engine/context-budget";
import { redactStage, type Verdict } from "../../engine/guardrails/run";
import { randomTraceId, traceFrom } from "../../engine/trace";
import { randomId } from "../../ids";
import type { OnBusy } from "../../protocol/busy";
import { ApiError } from "../../protocol/errors";
import type { ResponsesRequestRecord } from "../../protocol/event-shapes";
import type { EventDraft, PayloadOf, TurnTrace } from "../../protocol/events";
import type { FileRef } from "../../protocol/input-parts";
import type { TurnRegenerated } from "../../protocol/operations/turns";
import type { InjectResult, SubmitTurnBody, TurnAccepted, TurnSubmitted } from "../../protocol/wire";
import type { Capability } from "../capability";
import type { FilesHost, LogHost, SettingsHost, TimerHost, TurnsHost } from "../hosts";
import type { TurnRow } from "../store/session-store";
import { type BusyMode, WHILE_BUSY } from "./busy-strategies";
import { DEBOUNCE, joinable } from "./debounce";
import { forgetStored, submittedFiles, turnInput, turnInputs } from "./turn-attachments";

/**
 * Turns that may wait in the queue. Live messages that are still in the inbox count too: those that arrive
 * too late for their turn become queued turns when it ends, so they are refused when they could overflow it.
 */
export const MAX_QUEUED_TURNS = 20;

type TurnSource = NonNullable<PayloadOf<"turn.submitted">["source"]>;

/** The slice of the session the queue works on. */
export type QueueSession = LogHost & TurnsHost & TimerHost & SettingsHost & FilesHost;

/** A submitted turn's busy settings: on_busy and debounce_ms as declared, or the Responses API's mode (never debounced). */
type BusySettings = Pick<SubmitTurnBody, "on_busy" | "debounce_ms"> | { on_busy: "enqueue_unless_waiting"; debounce_ms?: undefined };

/** A submission as the queue takes it: the declared body, its busy mode the Responses API's when it comes from there. */
type Submission = Omit<SubmitTurnBody, "on_busy" | "debounce_ms"> & BusySettings;

/**
 * A turn as the queue takes it: its text, the references of its files (turn-attachments.ts), its key and busy
 * settings; the caller's trace, what submitted it when the runtime did (a due schedule), and the ended turn it
 * answers again (regenerate).
 */
export type TurnRequest = Omit<SubmitTurnBody, "input" | "on_busy" | "debounce_ms"> &
  BusySettings & {
    input: string;
    files?: FileRef[];
    responses_request?: ResponsesRequestRecord;
    trace?: TurnTrace;
    source?: TurnSource;
    replaces?: string;
    /** Who submitted it (the key or token id), which key and subject quotas count it against. */
    by?: string;
  };

/** What the queue asks of the turn runner. */
export interface QueueRunner {
  /** Starts the first queued turn when none is running. */
  startNext(): void;
  /** Cancels (or rolls back) the running turn for `byTurnId`, recording `drafts` (that turn's submission) in the same transaction. */
  supersede(byTurnId: string, drafts: EventDraft[], rollback: boolean): void;
  /** Rolls back the ended turn `turnId` for `byTurnId`, recording `drafts` (that turn's submission) in the same transaction. */
  rollBackEnded(turnId: string, byTurnId: string, drafts: EventDraft[]): void;
  /** Ends the running turn, if any (the session is erased). */
  interrupt(reason: string): { interrupted: boolean };
}

export class TurnQueue {
  /** Submissions under way (their files being fetched and stored): a session that has them is in use. */
  submitting = 0;
  constructor(
    private readonly s: QueueSession,
    private readonly runner: QueueRunner,
  ) {}

  /**
   * Queues a turn; it joins `request.trace` (the caller's, from its traceparent) or starts a trace of its own.
   * While a turn runs, `on_busy` picks the strategy (absent: enqueue; busy-strategies.ts).
   */
  submit(request: TurnRequest): TurnSubmitted {
    const { store } = this.s;
    const { input, verdicts } = this.redacted(request.input);
    const body = { ...request, input };
    const duplicate = this.duplicate(body);
    if (duplicate) return duplicate;
    const running = store.runningTurn();
    const message = { input, verdicts, files: body.files };
    const strategy = running ? WHILE_BUSY[body.on_busy ?? "enqueue"] : null;
    if (running && strategy && "answer" in strategy) return strategy.answer(running, () => this.injectInto(running.turn_id, message, "input"));
    this.checkRefused(body.on_busy);
    this.checkSize("input", body.input);
    const now = Date.now();
    const { debounce_ms } = body;
    const openWindow = (turnId: string) => () => {
      if (debounce_ms) store.timers.schedule(DEBOUNCE + turnId, now + debounce_ms);
    };
    const joins = joinable(store, body, now);
    // Each message that joins the turn restarts its wait.
    if (joins) return this.injectInto(joins, message, "input", openWindow(joins));
    const queuedBefore = store.queuedTurns().map((t) => t.turn_id);
    const busy = running !== null || queuedBefore.length > 0;
    if (busy) this.checkRoom();
    const turn_id = randomId("trn");
    const queued = busy || debounce_ms !== undefined;
    const drafts: EventDraft[] = [
      { type: "turn.submitted", turn_id, trace: body.trace ?? traceFrom(null, randomTraceId), payload: submittedPayload(body, queued) },
    ];
    drafts.push(...verdictEvents(turn_id, verdicts));
    if (running && strategy && "place" in strategy && strategy.place === "ahead") {
      // An entry for a turn whose submission failed below would be harmless: its alarm finds no such turn.
      if (debounce_ms) this.s.transact(openWindow(turn_id));
      // Ahead of the turns already queued: it starts as soon as the running one has been cancelled.
      drafts.push({ type: "queue.changed", payload: { queued: [turn_id, ...queuedBefore] } });
      this.runner.supersede(turn_id, drafts, strategy.rollback);
      this.s.armAlarm();
      return { turn_id, status: debounce_ms ? "queued" : "accepted", superseded_turn_id: running.turn_id };
    }
    if (body.replaces) {
      this.runner.rollBackEnded(body.replaces, turn_id, drafts);
      return { turn_id, status: "accepted" };
    }
    if (queued) drafts.push({ type: "queue.changed", payload: { queued: [...queuedBefore, turn_id] } });
    this.s.commit(drafts, openWindow(turn_id));
    this.runner.startNext();
    if (debounce_ms) this.s.armAlarm();
    return { turn_id, status: queued ? "queued" : "accepted" };
  }

  /** The turn an idempotency key already started, answered again; a different body with the key is a conflict. */
  private duplicate(body: TurnRequest): TurnSubmitted | null {
    const prior = body.idempotency_key ? this.s.store.turnByIdempotencyKey(body.idempotency_key) : null;
    if (!prior) return null;
    if (prior.input !== body.input) throw new ApiError("conflict", "idempotency_key was already used with a different body", { turn_id: prior.turn_id });
    const submitted = this.s.view().turns.find((t) => t.turn_id === prior.turn_id);
    return { turn_id: prior.turn_id, status: submitted?.status === "queued" ? "queued" : "accepted", duplicate: true };
  }

  /**
   * Answers the session's last turn again (docs/guides/busy-sessions.md): it is rolled back, running or ended, and a
   * new turn with the input and files it was submitted with starts. A turn before the last, or a queued one, is refused.
   */
  regenerate(turnId: string, idempotency_key: string | undefined, trace?: TurnTrace, by?: string): TurnRegenerated {
    const { store } = this.s;
    const turn = store.turn(turnId);
    if (!turn) throw ApiError.notFound("Turn", turnId);
    // A retry with the key answers the turn it started (it is the last turn now, not the one it names).
    if (!(idempotency_key && store.turnByIdempotencyKey(idempotency_key))) this.checkLast(turnId);
    const request = { input: turn.input, files: submittedFiles(turn), ...(idempotency_key ? { idempotency_key } : {}), by };
    const running = store.runningTurn()?.turn_id === turnId;
    const r = this.submit(running ? { ...request, on_busy: "rollback", trace } : { ...request, trace, replaces: turnId });
    return { turn_id: r.turn_id, status: "accepted", rolled_back_turn_id: turnId, ...(r.duplicate ? { duplicate: true } : {}) };
  }

  /** Refuses to regenerate a turn that is not the session's last one, or that has not answered yet. */
  private checkLast(turnId: string): void {
    const last = this.s.view().turns.at(-1);
    if (last?.turn_id !== turnId) {
      const detail = last ? ` (its last turn is '${last.turn_id}')` : "";
      throw new ApiError("conflict", `Turn '${turnId}' is not the session's last turn${detail}; only the last turn can be regenerated`, {
        turn_id: turnId,
        last_turn_id: last?.turn_id ?? null,
      });
    }
    if (last.status === "queued") throw new ApiError("conflict", `Turn '${turnId}' is queued: it has no answer to regenerate yet`, { turn_id: turnId });
  }

  /** A live message: the running turn takes it before its next model call; with none running it is a new turn. */
  inject(content: string, by?: string): InjectResult {
    const running = this.s.store.runningTurn();
    if (!running) return { delivery: "new_turn", ...(this.submit({ input: content, by }) as TurnAccepted) };
    const { turn_id, message_id } = this.injectInto(running.turn_id, this.redacted(content), "content");
    return { delivery: "injected", turn_id, message_id: message_id! };
  }

  /**
   * Records the (redacted) `input` and its files' references in the inbox of `turnId` (running, or waiting for
   * its debounce window), with `also` in the same transaction; `path` names the field in a refusal.
   */
  private injectInto(
    turnId: string,
    { input, verdicts, files }: { input: string; verdicts: Verdict[]; files?: FileRef[] },
    path: string,
    also = () => {},
  ): TurnSubmitted {
    const { store } = this.s;
    this.checkSize(path, input);
    this.checkRoom();
    const message_id = randomId("msg");
    const add = () => {
      store.addToInbox(turnId, message_id, input, Date.now(), files);
      also();
    };
    if (verdicts.length === 0) this.s.transact(add);
    else this.s.commit(verdictEvents(turnId, verdicts, message_id), add);
    return { turn_id: turnId, status: "injected", message_id };
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
    // Messages that had joined it (debounce_ms) go with it.
    this.s.commit(
      [
        { type: "turn.cancelled", turn_id: turnId, payload: { reason } },
        { type: "queue.changed", payload: { queued } },
      ],
      () => this.s.store.clearInbox(turnId),
    );
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

  /**
   * The body with its busy mode: a turn of the Responses API takes that API's (busy-strategies.ts), another the
   * agent's default on_busy (for `via`) when it names none.
   */
  private withDefault(body: SubmitTurnBody, via: "chat" | undefined, responses: boolean): Submission {
    if (responses) {
      const { on_busy: _, debounce_ms: __, ...rest } = body; // the API's busy mode, never a debounce
      return { ...rest, on_busy: "enqueue_unless_waiting" };
    }
    const agent = this.s.agent();
    const onBusy: OnBusy | undefined = body.on_busy ?? (via === "chat" ? (agent.chat_on_busy ?? agent.on_busy) : agent.on_busy);
    return onBusy ? { ...body, on_busy: onBusy } : body;
  }

  /**
   * Throws when the busy strategy of `mode` refuses a turn while the running turn waits for a person. Checked
   * in the step that places the turn, so what the turn runs cannot change in between.
   */
  private checkRefused(mode: BusyMode | undefined): void {
    const strategy = WHILE_BUSY[mode ?? "enqueue"];
    const refusal = "refuses" in strategy && this.s.store.runningTurn() ? strategy.refuses?.(this.s.view().pending_actions) : null;
    if (refusal) throw refusal;
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

  /** Its session operations: submitting, regenerating, live messages, and queue control. */
  capability() {
    return {
      operations: {
        regenerateTurn: ({ params, body, trace, by }) => this.regenerate(params.turn_id, body?.idempotency_key, trace, by),
        submitTurn: async ({ body, trace, via, responses, by }) => {
          const { input, ...rest } = this.withDefault(body, via, responses !== undefined);
          // Also before its files are stored, so a refusal here stores none. The turn is checked again as it is placed:
          // a refusal there (a turn that began to wait meanwhile, the queue filled) forgets the files stored for it.
          this.checkRefused(rest.on_busy);
          const inputs = turnInputs(this.s.bindings(), this.s.fileLedger(), this.s.agent().model);
          this.submitting += 1;
          try {
            const taken = await turnInput(input, inputs);
            // Stored again for a resend the key answers, or for a turn refused as it is placed: forgotten with it.
            const forget = () => forgetStored(input, taken.files, inputs).catch((err: unknown) => console.error("turn-queue: files left", err));
            let submitted: TurnSubmitted;
            try {
              submitted = this.submit({ ...rest, ...taken, ...(responses ? { responses_request: responses } : {}), trace, by });
            } catch (err) {
              if (err instanceof ApiError && err.status < 500) await forget();
              throw err;
            }
            if (submitted.duplicate) await forget();
            return submitted;
          } finally {
            this.submitting -= 1;
          }
        },
        injectMessage: ({ body, by }) => this.inject(body.content, by),
        removeQueuedTurn: ({ params }) => ({ queued: this.remove(params.turn_id) }),
        promoteQueuedTurn: ({ params }) => ({ queued: this.promote(params.turn_id) }),
      },
      // A debounced turn's window closed: it starts when it is first in the queue and nothing runs.
      alarms: [{ kind: DEBOUNCE, prefix: true, fire: () => this.runner.startNext() }],
      // Every turn ends; ending one may queue and start another (live messages too late for it become turns).
      erase: (reason) => {
        do {
          for (const t of this.s.store.queuedTurns()) this.remove(t.turn_id, reason);
        } while (this.runner.interrupt(reason).interrupted);
      },
    } satisfies Capability;
  }
}

/** The turn.submitted payload of a request. */
function submittedPayload(body: TurnRequest, queued: boolean): PayloadOf<"turn.submitted"> {
  return {
    input: body.input,
    ...(body.files ? { files: body.files } : {}),
    queued,
    ...(body.idempotency_key ? { idempotency_key: body.idempotency_key } : {}),
    ...(body.by ? { by: body.by } : {}),
    ...(body.source ? { source: body.source } : {}),
    ...(body.debounce_ms ? { on_busy: body.on_busy ?? "enqueue", debounce_ms: body.debounce_ms } : {}),
    ...(body.responses_request ? { responses_request: body.responses_request } : {}),
  };
}

function verdictEvents(turn_id: string, verdicts: Verdict[], message_id?: string): EventDraft[] {
  return verdicts.map((v) => ({ type: "guardrail.checked", turn_id, payload: { ...v, ...(message_id ? { message_id } : {}) } }));
}
