// One session in one Durable Object: the RPC surface the routes call. What it runs on (storage, sockets, the
// alarm, `commit`) is SessionCore (session-core.ts).

import type { ModelMessage } from "ai";
import type { Env } from "../env";
import type { AgentConfig } from "../protocol/agent-config";
import { ApiError, type Result, toResult } from "../protocol/errors";
import type { EventDraft, TurnTrace } from "../protocol/events";
import type { Policy } from "../protocol/policy";
import type { CreateScheduleBody } from "../protocol/schedules";
import type { CreateSubscriptionBody } from "../protocol/subscriptions";
import type { ActionResolved, InjectResult, SubmitTurnBody, TurnAccepted } from "../protocol/wire";
import { buildTree } from "../runtime/execution-tree";
import { randomId } from "../runtime/ids";
import { conversationJson, turnCursor } from "./chat-reads";
import { type FrameTarget, handleFrame, reply, sessionFrames } from "./command-frames";
import { type ForkSource, historyAt } from "./fork-history";
import { type PausedCut, pausedTurn } from "./fork-paused";
import type { StepOutcome } from "./orchestration-steps";
import { type ReplaySource, replaySource } from "./replay-source";
import type { ReplayResult, ReplaySpec } from "./replay-turns";
import { SessionCore } from "./session-core";
import type { SessionRow } from "./session-store";
import { openStream } from "./session-streams";
import { type ExportHeader, eventsPage, exportHeader, snapshotView, threadView } from "./session-views";
import type { TurnRunner } from "./turn-runner";

export interface CreateSessionInput {
  session_id: string;
  agent: AgentConfig;
  policy: Policy;
  metadata: Record<string, unknown>;
  /** Set for the child sessions of agent_orchestrate steps. */
  orchestration_depth?: number;
  /** Who opens it (a browser token's subject). */
  owner?: string | null;
  /** Set for a fork: where its conversation comes from, and that conversation. */
  fork?: { from_session: string; at_sequence: number; messages_json: string; paused_json: string | null };
  /** Set for a replay (a fork just before the replayed turn): the recorded turn it runs again. */
  replay?: ReplaySpec;
}

export class SessionObject extends SessionCore {
  /** WebSocket command frames: the same RPC surface, over a session's sockets. */
  private readonly frames: FrameTarget;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.frames = sessionFrames(
      this,
      this.hub,
      () => this.channels,
      () => this.store.lastSequence,
    );
  }

  // ---- RPC surface (called by the routes) ----

  async create(input: CreateSessionInput): Promise<Result<{ session_id: string; thread_id: string }>> {
    return toResult(() => {
      if (!this.store) this.open();
      if (this.session) throw new ApiError("conflict", `Session '${input.session_id}' already exists`);
      const row: SessionRow = {
        session_id: input.session_id,
        thread_id: randomId("thr"),
        agent: JSON.stringify(input.agent),
        metadata: JSON.stringify(input.metadata),
        policy: JSON.stringify(input.policy),
        created_at: Date.now(),
        orchestration_depth: input.orchestration_depth ?? 0,
        owner: input.owner ?? null,
      };
      this.session = row;
      const payload = { agent: input.agent.name, model: input.agent.model, policy: input.policy, metadata: input.metadata, owner: row.owner };
      const { fork } = input;
      const drafts: EventDraft[] = [{ type: "session.created", payload }];
      if (fork) drafts.unshift({ type: "session.forked", payload: { from_session: fork.from_session, at_sequence: fork.at_sequence } });
      const paused = fork?.paused_json ? pausedTurn(JSON.parse(fork.paused_json) as PausedCut, input.agent, row.created_at) : null;
      if (paused) drafts.push(...paused.drafts);
      try {
        this.commit(drafts, () => {
          this.store.insertSession(row);
          if (fork) this.store.appendHistory("fork", JSON.parse(fork.messages_json) as ModelMessage[]);
          if (paused) this.store.saveTurnState(paused.state);
          if (input.replay) this.runner.replays.save(input.replay);
        });
        if (paused) this.armAlarm(); // the approvals' deadlines
      } catch (err) {
        this.session = null;
        throw err;
      }
      // The agent's own subscriptions, each from the start of the log (its URLs were checked with the config).
      for (const spec of input.agent.subscriptions ?? []) this.subscriptions.create({ ...spec, after: 0 });
      return { session_id: row.session_id, thread_id: row.thread_id };
    });
  }

  /** What a fork at `at` starts from: this session's config and its conversation as of that sequence. */
  async forkSource(at: number): Promise<Result<ForkSource>> {
    return toResult(() =>
      this.existing(() => {
        const cut = historyAt(this.store, at);
        // As JSON: model messages are too rich a type for the RPC's typing, and are stored as JSON anyway.
        const conversation = { messages_json: JSON.stringify(cut.messages), paused_json: cut.paused && JSON.stringify(cut.paused) };
        return { agent: this.agent(), policy: this.policy(), metadata: this.row().metadata, owner: this.row().owner, ...conversation };
      }),
    );
  }

  /** What a replay of `turnId` starts from (the fork before it, its input, its recording). */
  async replaySource(turnId: string): Promise<Result<ReplaySource & Omit<ForkSource, "messages_json" | "paused_json">>> {
    return toResult(() =>
      this.existing(() => ({
        ...replaySource(this.store, turnId),
        agent: this.agent(),
        policy: this.policy(),
        metadata: this.row().metadata,
        owner: this.row().owner,
      })),
    );
  }

  /** A replay session's outcome; not_found for any other session. */
  async replayResult(): Promise<Result<ReplayResult>> {
    return toResult(() =>
      this.existing(() => {
        const result = this.runner.replays.result();
        if (!result) throw ApiError.notFound("Replay", this.row().session_id);
        return result;
      }),
    );
  }

  async snapshot(): Promise<Result<ReturnType<typeof snapshotView>>> {
    return toResult(() => this.existing(() => snapshotView(this, this.channels.list())));
  }

  /** Who owns the session and which agent it runs (for the access check of agent-bound tokens). */
  async access(): Promise<Result<{ access: { owner: string | null; agent: string } }>> {
    return toResult(() => this.existing(() => ({ access: { owner: this.row().owner, agent: this.agent().name } })));
  }

  async thread(): Promise<Result<ReturnType<typeof threadView>>> {
    return toResult(() => threadView(this));
  }

  async submitTurn(body: SubmitTurnBody, trace?: TurnTrace): Promise<Result<TurnAccepted & { duplicate?: boolean }>> {
    return toResult(() => this.existing(() => this.queue.submit(body, trace)));
  }

  async interrupt(reason?: string): Promise<Result<{ interrupted: boolean; turn_id: string | null }>> {
    return toResult(() => this.existing(() => this.runner.interrupt(reason ?? "interrupted by client")));
  }

  /** Live message injection: the running turn takes it before its next model call; with none running it is a new turn. */
  async injectMessage(content: string): Promise<Result<InjectResult>> {
    return toResult(() => this.existing(() => this.queue.inject(content)));
  }

  async removeQueued(turnId: string): Promise<Result<{ queued: string[] }>> {
    return toResult(() => this.existing(() => ({ queued: this.queue.remove(turnId) })));
  }

  async promoteQueued(turnId: string): Promise<Result<{ queued: string[] }>> {
    return toResult(() => this.existing(() => ({ queued: this.queue.promote(turnId) })));
  }

  /** Ends one turn, whether it runs or waits in the queue; a turn that already ended is left alone. */
  async cancelTurn(turnId: string, reason: string): Promise<Result<{ cancelled: boolean }>> {
    return toResult(() =>
      this.existing(() => {
        const status = this.store.turn(turnId)?.status;
        if (status === "running") return { cancelled: this.runner.interrupt(reason).interrupted };
        if (status !== "queued") return { cancelled: false };
        this.queue.remove(turnId, reason);
        return { cancelled: true };
      }),
    );
  }

  /** Erases everything the session owns (DELETE /v1/sessions/:sid); true when there was something to erase. */
  async erase(): Promise<Result<{ erased: boolean }>> {
    return toResult(async () => {
      if (!this.session) return { erased: false };
      await this.eraseNow("the session was erased");
      return { erased: true };
    });
  }

  /** A human decision on a pending approval; `by` identifies the caller (a hash of its API key). */
  async resolveAction(actionId: string, decision: "approve" | "reject", reason: string | undefined, by: string): Promise<Result<ActionResolved>> {
    return toResult(() => this.existing(() => this.approvals.decide(actionId, decision === "approve" ? "approved" : "rejected", reason ?? null, by)));
  }

  /**
   * Submits `input` (idempotent by `key`) and resolves when that turn ends: the way an orchestration step
   * runs this session. A turn that already ended answers at once from the log.
   */
  async runToEnd(input: string, key: string): Promise<Result<StepOutcome>> {
    return toResult(() => this.existing(() => this.runner.follow(this.queue.submit({ input, idempotency_key: key }).turn_id)));
  }

  async createSchedule(body: CreateScheduleBody) {
    return toResult(() => this.existing(() => this.schedules.create(body)));
  }

  async listSchedules() {
    return toResult(() => this.existing(() => ({ schedules: this.schedules.list() })));
  }

  async deleteSchedule(scheduleId: string) {
    return toResult(() => this.existing(() => this.schedules.delete(scheduleId)));
  }

  async createSubscription(body: CreateSubscriptionBody) {
    return toResult(() => this.existing(() => this.subscriptions.create(body)));
  }

  async listSubscriptions() {
    return toResult(() => this.existing(() => ({ subscriptions: this.subscriptions.list() })));
  }

  async enableSubscription(id: string, enabled: boolean) {
    return toResult(() => this.existing(() => this.subscriptions.setEnabled(id, enabled)));
  }

  async deleteSubscription(id: string) {
    return toResult(() => this.existing(() => this.subscriptions.delete(id)));
  }

  /** Events after `after` as one JSON document, built from the stored bodies without re-serializing them. */
  async eventsPage(after: number, limit: number): Promise<Result<string>> {
    return toResult(() => this.existing(() => eventsPage(this.store, after, limit)));
  }

  /** The first line of an export: what the session is, besides its log. */
  async exportHeader(): Promise<Result<ExportHeader>> {
    return toResult(() => this.existing(() => exportHeader(this)));
  }

  /** For the AI SDK chat routes: the sequence before the turn's first event. */
  async chatCursor(turnId: string): Promise<Result<number>> {
    return toResult(() => this.existing(() => turnCursor(this.store, turnId)));
  }

  /** For the AI SDK chat routes: the conversation as a JSON array of UIMessages. */
  async chatMessages(): Promise<Result<string>> {
    return toResult(() => this.existing(() => conversationJson(this.store)));
  }

  async tools(): Promise<Result<{ tools: Awaited<ReturnType<TurnRunner["setups"]["inventory"]>>; policy: Policy }>> {
    return toResult(() => this.existing(async () => ({ tools: await this.runner.setups.inventory(), policy: this.policy() })));
  }

  /** The turn's execution tree, folded from its events. */
  async tree(turnId: string): Promise<Result<ReturnType<typeof buildTree>>> {
    return toResult(() =>
      this.existing(() => {
        if (!this.store.turn(turnId)) throw ApiError.notFound("Turn", turnId);
        return buildTree(this.store.eventsOfTurn(turnId));
      }),
    );
  }

  /** WebSocket upgrades and SSE streams (they need a Response, so they come through fetch). */
  override async fetch(request: Request): Promise<Response> {
    const result = await toResult(() => this.existing(() => openStream(request, this.store, this.channels, this.hub)));
    if (result.ok) return result.value;
    return Response.json({ error: result.error }, { status: new ApiError(result.error.code, "").status });
  }

  override async webSocketMessage(ws: WebSocket, message: string | ArrayBuffer): Promise<void> {
    try {
      await handleFrame(this.frames, ws, message);
    } catch (err) {
      console.error("websocket frame failed", err);
      reply(ws, null, { ok: false, error: { code: "internal_error", message: "Internal error" } });
    }
  }
}
