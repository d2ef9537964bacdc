// One session in one Durable Object: the RPC surface the routes call, and `commit`, the one way a
// transition is recorded: events appended (and projected into the turns and actions tables) together with
// any checkpoint, in one synchronous SQLite transaction, before anyone sees them; then folded into the
// in-memory read model and broadcast. The queue, approvals and turn execution are modules of their own.

import { DurableObject } from "cloudflare:workers";
import type { ModelMessage } from "ai";
import type { Env } from "../env";
import type { AgentConfig } from "../protocol/agent-config";
import type { EventDraft, RuntimeEvent, TurnTrace } from "../protocol/events";
import { DEFAULT_POLICY, type Policy } from "../protocol/policy";
import type { CreateScheduleBody } from "../protocol/schedules";
import type { CreateSubscriptionBody } from "../protocol/subscriptions";
import type { SessionView } from "../protocol/views";
import type { ActionResolved, InjectResult, SubmitTurnBody, TurnAccepted } from "../protocol/wire";
import { ApiError, type Result, toResult } from "../runtime/errors";
import { buildTree } from "../runtime/execution-tree";
import { randomId } from "../runtime/ids";
import { emptyView, foldAll, foldEvent } from "../runtime/read-model";
import { Approvals } from "./approvals";
import { ChannelStore } from "./channel-store";
import { conversationJson, turnCursor } from "./chat-reads";
import { type FrameTarget, handleFrame, reply, sessionFrames } from "./command-frames";
import { type ForkSource, historyAt } from "./fork-history";
import { type PausedCut, pausedTurn } from "./fork-paused";
import { isInitialized, migrate, SESSION_MIGRATIONS } from "./migrate";
import type { StepOutcome } from "./orchestration-steps";
import { PendingWrites } from "./pending-writes";
import { APPROVAL_DEADLINE, project } from "./projections";
import { registry } from "./registry-object";
import { type ReplaySource, replaySource } from "./replay-source";
import type { ReplayResult, ReplaySpec } from "./replay-turns";
import { SCHEDULES_DUE, Schedules } from "./schedules";
import { HEARTBEAT_MS, type SessionContext } from "./session-context";
import { eraseSessionBlobs } from "./session-erase";
import { INDEX_RETRY, RETENTION, SessionIndexer } from "./session-indexer";
import { type SessionRow, SessionStore, type StoredEvent } from "./session-store";
import { openStream } from "./session-streams";
import { type ExportHeader, eventsPage, exportHeader, snapshotView, threadView } from "./session-views";
import { SESSION_ERASED_CLOSE, SocketHub } from "./socket-hub";
import { SUBSCRIPTIONS_DUE, SubscriptionDelivery } from "./subscription-delivery";
import { SubscriptionTable } from "./subscriptions";
import { TurnQueue } from "./turn-queue";
import { TurnRunner } from "./turn-runner";

const TURN_ENDS = new Set(["turn.completed", "turn.failed", "turn.cancelled"]);

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

export class SessionObject extends DurableObject<Env> implements SessionContext {
  /** Opened when the session exists (or is being created). */
  store!: SessionStore;
  private channels!: ChannelStore;
  private folded: SessionView = emptyView();
  private session: SessionRow | null = null;
  /** The parsed agent config of `session.agent`. */
  private config: AgentConfig | null = null;
  private readonly hub: SocketHub;
  private readonly runner: TurnRunner;
  private readonly queue: TurnQueue;
  private readonly approvals: Approvals;
  private readonly indexer = new SessionIndexer(this);
  private readonly schedules: Schedules;
  private readonly subscriptions = new SubscriptionTable(this, () => this.delivery.changed());
  private readonly delivery = new SubscriptionDelivery(this, this.subscriptions);
  /** Text deltas and held tool results waiting for their commit; any other commit takes them first. */
  private readonly pending = new PendingWrites(() => {
    try {
      this.commit([]);
    } catch (err) {
      console.error("committing waiting events failed", err);
    }
  });

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    const positive = (raw: string | undefined, fallback: number) => (Number.isInteger(Number(raw)) && Number(raw) > 0 ? Number(raw) : fallback);
    this.hub = new SocketHub(
      ctx,
      (after, limit) => this.store.readEvents(after, limit),
      positive(env.WS_MAX_UNACKED_EVENTS, 10_000),
      positive(env.MAX_SOCKETS_PER_SESSION, 100),
    );
    this.frames = sessionFrames(
      this,
      this.hub,
      () => this.channels,
      () => this.store.lastSequence,
    );
    this.runner = new TurnRunner(
      this,
      {
        deltas: (drafts) => this.pending.deltas(drafts),
        hold: (drafts, checkpoint) => this.pending.hold(drafts, checkpoint),
      },
      (config, drafts) => {
        this.commit(drafts, () => this.store.setSessionAgent(JSON.stringify(config)));
        this.session = { ...this.row(), agent: JSON.stringify(config) };
        this.config = config;
      },
    );
    this.queue = new TurnQueue(this, () => this.runner.startNext());
    this.approvals = new Approvals(this, () => this.runner.resume("a decision was recorded"));
    this.schedules = new Schedules(this, this.queue);
    // An object nobody created (a request for an unknown session) reads one catalog row and writes nothing.
    if (!isInitialized(ctx.storage)) return;
    void ctx.blockConcurrencyWhile(async () => {
      this.open();
      if (!this.session) return;
      const snap = this.store.snapshot();
      const tail = this.store.readEvents(snap?.last_sequence ?? 0, Number.MAX_SAFE_INTEGER).map((e) => JSON.parse(e.body) as RuntimeEvent);
      this.folded = foldAll(tail, snap ?? emptyView());
      // The alarm wakes for the earliest schedule even if a crash lost its deadline entry.
      this.transact(() => this.schedules.arm());
      this.armAlarm();
      // A delivery cut off by the restart goes on at once (its batch keeps its id).
      this.delivery.poke();
      try {
        // A turn left running by a previous instance (eviction, deploy, crash) continues now.
        this.runner.resume("the session object restarted");
      } catch (err) {
        // Never fail the constructor: the object would refuse every request. The heartbeat tries again.
        console.error("resume on start failed", err);
      }
    });
  }

  private open(): void {
    migrate(this.ctx.storage, SESSION_MIGRATIONS);
    this.store = new SessionStore(this.ctx.storage.sql);
    this.channels = new ChannelStore(this.ctx.storage.sql);
    this.session = this.store.session();
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

  /**
   * Ends the session's turns, closes its subscribers, deletes its R2 objects, its index row and then its
   * storage and alarm. The index goes first: if it cannot be reached, nothing of the session is lost yet.
   */
  private async eraseNow(reason: string): Promise<void> {
    const sid = this.row().session_id;
    for (const t of this.store.queuedTurns()) this.queue.remove(t.turn_id, reason);
    this.runner.interrupt(reason);
    await registry(this.env).eraseFromIndex(sid);
    this.hub.closeAll(SESSION_ERASED_CLOSE, reason);
    await eraseSessionBlobs(this.env.BLOBS, sid);
    await this.ctx.storage.deleteAlarm();
    await this.ctx.storage.deleteAll();
    this.session = null;
    this.config = null;
    this.folded = emptyView();
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

  // ---- WebSocket (Hibernation API) ----

  private readonly frames: FrameTarget;

  override async webSocketMessage(ws: WebSocket, message: string | ArrayBuffer): Promise<void> {
    try {
      await handleFrame(this.frames, ws, message);
    } catch (err) {
      console.error("websocket frame failed", err);
      reply(ws, null, { ok: false, error: { code: "internal_error", message: "Internal error" } });
    }
  }

  override async webSocketClose(ws: WebSocket, code: number, reason: string): Promise<void> {
    this.hub.forget(ws);
    try {
      ws.close(code, reason);
    } catch {
      // already closed
    }
  }

  override async webSocketError(ws: WebSocket): Promise<void> {
    this.hub.forget(ws);
  }

  // ---- Alarm: one per object, multiplexed through the schedule table ----

  override async alarm(): Promise<void> {
    if (!this.session) return;
    let deliveries: Promise<void> | null = null;
    for (const kind of this.store.takeDue(Date.now())) {
      if (kind === "heartbeat") {
        this.runner.resume("the heartbeat found no running executor");
        if (this.store.runningTurn() && !this.runner.waiting()) this.store.schedule("heartbeat", Date.now() + HEARTBEAT_MS);
      } else if (kind.startsWith(APPROVAL_DEADLINE)) {
        this.approvals.expire(kind.slice(APPROVAL_DEADLINE.length));
      } else if (kind === SCHEDULES_DUE) {
        this.schedules.fireDue(Date.now());
      } else if (kind === SUBSCRIPTIONS_DUE) {
        deliveries = this.delivery.run();
      } else if (kind === INDEX_RETRY) {
        await this.indexer.sync();
      } else if (kind === RETENTION && this.indexer.retentionExpired(Date.now())) {
        await this.eraseNow("the session's retention period ended");
        return;
      }
    }
    this.armAlarm();
    await deliveries;
  }

  // ---- SessionContext ----

  bindings(): Env {
    return this.env;
  }

  row(): SessionRow {
    if (!this.session) throw new ApiError("not_found", "Session was not found");
    return this.session;
  }

  agent(): AgentConfig {
    this.config ??= JSON.parse(this.row().agent) as AgentConfig;
    return this.config;
  }

  policy(): Policy {
    return { ...DEFAULT_POLICY, ...(JSON.parse(this.row().policy) as Partial<Policy>) };
  }

  view(): SessionView {
    return this.folded;
  }

  /** One SQLite transaction; after a rollback the store forgets what it cached about stored rows. */
  transact<T>(fn: () => T): T {
    try {
      return this.ctx.storage.transactionSync(fn);
    } catch (err) {
      this.store.resync();
      throw err;
    }
  }

  commit(newDrafts: EventDraft[], mutate?: () => void, opts: { snapshot?: boolean } = {}): void {
    const waiting = this.pending.take();
    const drafts = [...waiting.drafts, ...newDrafts];
    if (drafts.length === 0 && !mutate && !waiting.checkpoint) return;
    const row = this.row();
    const ids = { session_id: row.session_id, thread_id: row.thread_id };
    let committed: { stored: StoredEvent[]; next: SessionView };
    try {
      committed = this.transact(() => {
        waiting.checkpoint?.();
        mutate?.();
        const appended = this.store.append(drafts, ids, Date.now(), randomId);
        project(
          this.store.sql,
          appended.map((a) => a.event),
        );
        let view = this.folded;
        for (const a of appended) view = foldEvent(view, a.event);
        if (opts.snapshot) this.store.saveSnapshot(view);
        return { stored: appended.map((a) => a.stored), next: view };
      });
    } catch (err) {
      this.pending.restore(waiting); // they are still facts of the turn; the next commit records them
      throw err;
    }
    this.folded = committed.next;
    this.hub.broadcast(committed.stored);
    this.delivery.poke();
    // The deployment's index learns of the session when it starts and when each turn ends.
    if (committed.stored.some((e) => e.type === "session.created" || TURN_ENDS.has(e.type))) void this.indexer.sync();
  }

  armAlarm(): void {
    const next = this.store.nextDue();
    void (next === null ? this.ctx.storage.deleteAlarm() : this.ctx.storage.setAlarm(next));
  }

  // ---- internals ----

  /** Runs `fn` for a session that exists; not_found otherwise. */
  private existing<T>(fn: () => T): T {
    this.row();
    return fn();
  }
}
