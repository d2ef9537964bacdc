// Turn execution in this object: starting the next queued turn, running the loop (its executor), resuming a
// turn after a restart or a decision, interrupting it, and recording its end. The loop alone changes a
// turn's state; what arrives from outside (decisions, live messages) is recorded first and read by it.

import type { ModelMessage } from "ai";
import { runTurn, type TurnSetup } from "../../engine/loop";
import { randomTraceId, traceFrom } from "../../engine/trace";
import { closingEvents, finalMessages, hasDecisionToApply, newTurnState, type TurnState } from "../../engine/turn-state";
import { randomId } from "../../ids";
import { ApiError, errorMessage } from "../../protocol/errors";
import type { EventDraft, PayloadOf, TerminalDraft } from "../../protocol/events";
import { turnOutcome } from "../../views/turn-outcome";
import type { Capability } from "../capability";
import { partialAnswer, queueAfter, startedCalls } from "../queue/cut-turn";
import { held } from "../queue/debounce";
import { submittedFiles } from "../queue/turn-attachments";
import type { RemoteCancels } from "../remote-cancels/remote-cancels";
import { ReplayTurns } from "../replays/replay-turns";
import { type StepOutcome, stepOutcome } from "./orchestration-steps";
import { questionRelease } from "./question-release";
import { logTurnEnd } from "./turn-end-log";
import { type Executor, TurnTakenError, turnPorts } from "./turn-ports";
import { HEARTBEAT_MS, type RunnerSession } from "./turn-session";
import { TurnSetups } from "./turn-setup";

export class TurnRunner {
  private executor: Executor | null = null;
  /** Callers of follow(), by turn, resolved when the turn ends. */
  private readonly waiters = new Map<string, ((outcome: StepOutcome) => void)[]>();
  readonly setups: TurnSetups;
  /** The replayed turn of a replay session (docs/guides/fork-and-replay.md). */
  readonly replays: ReplayTurns;

  constructor(
    private readonly s: RunnerSession,
    /** Where the cancels owed to remote tasks whose question a turn's end drops are recorded and sent. */
    private readonly cancels: Pick<RemoteCancels, "record" | "send">,
  ) {
    this.setups = new TurnSetups(s);
    this.replays = new ReplayTurns(s);
  }

  /** Starts the first queued turn when none is running. */
  startNext(): void {
    const { store } = this.s;
    if (store.runningTurn()) return;
    const [next, ...rest] = store.queuedTurns();
    if (!next) {
      store.timers.unschedule("heartbeat");
      this.s.armAlarm();
      return;
    }
    if (held(store, next.turn_id, Date.now())) return; // its debounce window's alarm starts it
    const agent = this.s.agent();
    const state = newTurnState(next.turn_id, next.input, Date.now(), submittedFiles(next));
    const drafts: EventDraft[] = [];
    if (this.s.view().queued_turns.includes(next.turn_id)) drafts.push({ type: "queue.changed", payload: { queued: rest.map((t) => t.turn_id) } });
    // tool.catalog.resolved follows from launch, once the agent's MCP servers have been asked for their tools.
    drafts.push({ type: "turn.started", turn_id: next.turn_id, payload: { agent: agent.name, model: agent.model } });
    this.s.commit(drafts, () => {
      store.saveTurnState(state);
      store.timers.schedule("heartbeat", Date.now() + HEARTBEAT_MS);
    });
    this.s.armAlarm();
    this.launch(state, { fresh: true });
  }

  /** Continues a running turn that has no executor in this instance (after a restart, or a decision). */
  resume(why: string): void {
    const { store } = this.s;
    if (this.executor) return;
    const running = store.runningTurn();
    if (!running) {
      this.startNext(); // a queue left waiting by a failed hand-over
      return;
    }
    const state = store.turnState(running.turn_id);
    if (!state) {
      const error = { code: "lost" as const, message: "The turn's checkpoint is missing; it cannot be resumed" };
      this.end({ type: "turn.failed", turn_id: running.turn_id, payload: { error } }, newTurnState(running.turn_id, running.input, Date.now()));
      return;
    }
    // A turn waiting for people goes on only once a decision is recorded; a restart does not wake it.
    if (state.paused_at && !hasDecisionToApply(state, store.decisions(state.turn_id))) return;
    this.s.transact(() => store.timers.schedule("heartbeat", Date.now() + HEARTBEAT_MS));
    this.s.armAlarm();
    this.launch(state, state.paused_at ? {} : { recovering: why });
  }

  /** Whether the running turn is suspended, waiting for decisions. */
  waiting(): boolean {
    const running = this.s.store.runningTurn();
    if (!running || this.executor) return false;
    return Boolean(this.s.store.turnState(running.turn_id)?.paused_at);
  }

  /** Ends the running turn at once, from its last checkpoint; its executor, if any, writes nothing more. */
  interrupt(reason: string): { interrupted: boolean; turn_id: string | null } {
    return this.cut({ reason });
  }

  /**
   * Cancels the running turn for the turn `byTurnId` (on_busy "interrupt" or "rollback"): `drafts` (its submission, queued first) are
   * recorded with the cancellation in one transaction. Interrupted, the text the cut model call had streamed stays in the history as
   * the turn's partial answer; rolled back, nothing of the turn enters the history, and turn.rolled_back lists the tool calls it had
   * started. Then the new turn starts.
   */
  supersede(byTurnId: string, drafts: EventDraft[], rollback: boolean): void {
    this.cut({ reason: rollback ? "rolled_back" : "superseded", by_turn_id: byTurnId }, drafts);
  }

  /** Rolls back the ended turn `turnId` for `byTurnId` (regenerate): `drafts` (its submission) and turn.rolled_back are recorded
   * as the turn's messages leave the history, in one transaction; then the new turn starts. */
  rollBackEnded(turnId: string, byTurnId: string, drafts: EventDraft[]): void {
    const { store } = this.s;
    if (store.turnMessageCount(turnId) === 0) {
      throw new ApiError("conflict", `The history was compacted after turn '${turnId}': its answer is part of the summary and cannot be rolled back`, {
        turn_id: turnId,
      });
    }
    const rolledBack = { turn_id: turnId, by_turn_id: byTurnId, side_effects: startedCalls(store.eventsOfTurn(turnId)) };
    this.s.commit([...drafts, { type: "turn.rolled_back", payload: rolledBack }], () => store.removeTurnMessages(turnId), {
      snapshot: true,
    });
    this.setups.replaced(store.history());
    this.startNext();
  }

  private cut(payload: PayloadOf<"turn.cancelled">, before: EventDraft[] = []): { interrupted: boolean; turn_id: string | null } {
    // Held events (tool results, an answer) are facts of the turn: written first, so the checkpoint read below has them
    // and the closing events do not close their calls a second time.
    try {
      this.s.commit([]);
    } catch (err) {
      console.error("writing held events before an interrupt failed", err);
    }
    const running = this.s.store.runningTurn();
    if (!running) return { interrupted: false, turn_id: null };
    const exec = this.executor;
    this.executor = null;
    exec?.abort.abort(new Error(payload.reason));
    const state = this.s.store.turnState(running.turn_id) ?? newTurnState(running.turn_id, running.input, Date.now());
    const by = payload.by_turn_id;
    const log = by ? this.s.store.eventsOfTurn(running.turn_id) : [];
    const rolledBack = by && payload.reason === "rolled_back" ? { turn_id: running.turn_id, by_turn_id: by, side_effects: startedCalls(log) } : undefined;
    const partial = by && !rolledBack ? partialAnswer(state, log) : [];
    this.end({ type: "turn.cancelled", turn_id: running.turn_id, payload }, state, { before, partial, rolledBack });
    return { interrupted: true, turn_id: running.turn_id };
  }

  /** Resolves with the outcome of `turnId` when it ends; at once if it has ended. */
  follow(turnId: string): Promise<StepOutcome> {
    const ended = this.s.store.terminalEvent(turnId);
    if (ended) return Promise.resolve(stepOutcome(ended));
    return new Promise((resolve) => {
      const list = this.waiters.get(turnId) ?? [];
      list.push(resolve);
      this.waiters.set(turnId, list);
    });
  }

  /**
   * Runs the loop for `state` in this instance. A `fresh` turn first records its tool catalog; a
   * `recovering` one lost its executor to a restart.
   */
  private launch(state: TurnState, mode: { fresh?: boolean; recovering?: string }): void {
    const exec: Executor = { turnId: state.turn_id, abort: new AbortController() };
    this.executor = exec;
    /** The turn's recalled conversations, kept by a handoff's setup. */
    let recalled: string | null = null;
    const ports = turnPorts(this.s, exec, {
      owns: (e) => this.executor === e && !e.abort.signal.aborted,
      finish: (e, event, st) => {
        this.release(e);
        try {
          this.end(event, st);
        } catch (err) {
          this.failTurn(st, err);
        }
      },
      suspended: (e, st) => {
        this.release(e);
        // Waiting for a human costs nothing: no executor and no heartbeat; each deadline is an alarm entry.
        this.s.store.timers.unschedule("heartbeat");
        this.s.armAlarm();
        // A decision recorded while the loop was on its way here: go on with it.
        if (hasDecisionToApply(st, this.s.store.decisions(st.turn_id))) this.resume("a decision arrived");
      },
      handoff: async (e, config, reason, version) => {
        const mcp = await this.setups.discover(config);
        const memory = await this.setups.workingMemory(config, state.turn_id, false, this.replays.working(state.turn_id));
        if (this.executor !== e) throw new TurnTakenError("turn no longer owned by this executor");
        const setup = this.setups.setupFor(this.setups.capped(config, state.turn_id), mcp, memory, recalled, version);
        const from = this.s.agent().name;
        this.s.switchAgent(config, [
          { type: "run.status", turn_id: state.turn_id, payload: { phase: "handoff", from, to: config.name, to_version: version, reason: reason ?? null } },
          ...this.setups.warnings(state.turn_id, mcp, memory),
        ]);
        return setup;
      },
      historyReplaced: (history) => this.setups.replaced(history),
    });
    const run = async () => {
      const config = this.s.agent();
      // A fresh turn has recorded no memory read yet; a resumed one keeps what it recorded (read once for both).
      const earlier = mode.fresh ? [] : this.s.store.eventsOfTurn(state.turn_id);
      // Automatic recall (the query's embedding, then the resource's search) starts first, in the submission's own
      // task for a turn that starts at once, and runs beside the rest of the setup; it never fails.
      const recalling = this.setups.recall(config, state.turn_id, this.replays.recalled(state.turn_id), earlier);
      // The tools of the agent's MCP servers are known only now; servers that do not answer are left out.
      const mcp = await this.setups.discover(config);
      const memory = await this.setups.workingMemory(config, state.turn_id, true, this.replays.working(state.turn_id), earlier);
      const recall = await recalling;
      recalled = recall.section;
      let setup: TurnSetup;
      try {
        const diverged = (payload: PayloadOf<"replay.diverged">) => ports.emit([{ type: "replay.diverged", turn_id: state.turn_id, payload }]);
        setup = this.replays.setupFor(state.turn_id, this.setups.setupFor(this.setups.capped(config, state.turn_id), mcp, memory, recalled), diverged);
      } catch (err) {
        ports.finish({ type: "turn.failed", turn_id: state.turn_id, payload: { error: { code: "configuration_error", message: errorMessage(err) } } }, state);
        return;
      }
      const drafts = [...this.setups.warnings(state.turn_id, mcp, memory), ...recall.drafts];
      if (mode.fresh) drafts.push(this.setups.catalogEvent(state.turn_id, setup));
      if (drafts.length > 0) ports.emit(drafts);
      await runTurn(state, setup, ports, mode.recovering);
    };
    run()
      .catch((err) => {
        if (err instanceof TurnTakenError || exec.abort.signal.aborted) return;
        // The loop could not even record its failure; leave a trace and let the heartbeat retry.
        console.error("turn executor failed", state.turn_id, err);
      })
      .finally(() => this.release(exec));
  }

  private release(exec: Executor): void {
    if (this.executor === exec) this.executor = null;
  }

  /**
   * Records a turn's end: what it left open closed, the terminal event, its messages moved to the history, its
   * checkpoint removed, in one transaction. Live messages that arrived too late to enter it become queued turns.
   */
  private end(
    event: TerminalDraft,
    state: TurnState,
    cut: { before?: EventDraft[]; partial?: ModelMessage[]; rolledBack?: PayloadOf<"turn.rolled_back"> } = {},
  ): void {
    const { store } = this.s;
    // Held events (an answer whose calls max_steps leaves unrun, results) first: what is read below must have them.
    this.s.commit([]);
    const turnId = state.turn_id;
    const { status } = turnOutcome(event);
    const closeAs = status === "cancelled" ? "cancelled" : "interrupted";
    // A rolled-back turn leaves nothing in the conversation the model sees.
    const messages = cut.rolledBack
      ? []
      : [...finalMessages(state, status === "completed" ? "the turn reached max_steps" : `the turn was ${status}`, closeAs), ...(cut.partial ?? [])];
    const before = cut.before ?? [];
    const late = store.inbox(turnId, state.messages_taken ?? 0).map((m) => ({ ...m, turn_id: randomId("trn") }));
    const closing = closingEvents(state, closeAs, Date.now(), undefined, store.decisions(turnId));
    const release = questionRelease(this.cancels, state, closeAs); // a remote task its question left waiting is cancelled
    const drafts: EventDraft[] = [
      ...before,
      ...closing,
      event,
      // A session-level event (no turn_id): nothing of a turn follows its terminal event.
      ...(cut.rolledBack ? [{ type: "turn.rolled_back", payload: cut.rolledBack } as const] : []),
      ...late.map(
        (t): EventDraft => ({
          type: "turn.submitted",
          turn_id: t.turn_id,
          trace: traceFrom(null, randomTraceId),
          payload: { input: t.content, ...(t.files ? { files: t.files } : {}), queued: true, message_id: t.message_id },
        }),
      ),
    ];
    if (late.length > 0) {
      const queued = [...queueAfter(before, store.queuedTurns()), ...late.map((t) => t.turn_id)];
      drafts.push({ type: "queue.changed", payload: { queued } });
    }
    drafts.push(...this.replays.closing(turnId, [...closing, event]));
    this.s.commit(
      drafts,
      () => {
        store.appendHistory(turnId, messages);
        store.deleteTurnState(turnId);
        store.clearInbox(turnId);
        release.record();
      },
      { snapshot: true },
    );
    release.send();
    this.setups.remember(messages);
    logTurnEnd(this.s, event, state);
    const waiting = this.waiters.get(turnId);
    if (waiting) {
      this.waiters.delete(turnId);
      const outcome = stepOutcome(event);
      for (const resolve of waiting) resolve(outcome);
    }
    this.startNext();
  }

  /**
   * The last resort when recording a turn's end failed (for example a row over SQLite's size limit): end it
   * with a minimal turn.failed that keeps only the user's input in the history, so the session goes on.
   */
  private failTurn(state: TurnState, cause: unknown): void {
    console.error("recording the end of a turn failed", state.turn_id, cause);
    const [input] = state.messages;
    const minimal = { ...newTurnState(state.turn_id, "", state.started_at), messages: input ? [input] : [] };
    const error = { code: "internal_error" as const, message: `Recording the turn's end failed: ${errorMessage(cause)}` };
    this.end({ type: "turn.failed", turn_id: state.turn_id, payload: { error } }, minimal);
  }

  /** Its session operations (interrupt, the tool inventory) and its alarm kind (the heartbeat of a running turn). */
  capability() {
    return {
      operations: {
        interrupt: ({ body }) => this.interrupt(body?.reason ?? "interrupted by client"),
        getTools: async () => ({ tools: await this.setups.inventory(), policy: this.s.policy() }),
      },
      alarms: [
        {
          kind: "heartbeat",
          fire: () => {
            this.resume("the heartbeat found no running executor");
            if (this.s.store.runningTurn() && !this.waiting()) this.s.store.timers.schedule("heartbeat", Date.now() + HEARTBEAT_MS);
          },
        },
      ],
      // A turn left running by a previous instance (eviction, deploy, crash) continues now.
      started: () => this.resume("the session object restarted"),
    } satisfies Capability;
  }
}
