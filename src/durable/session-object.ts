// One session: its event log, read model, turn queue and the running turn, in one Durable Object.
// Every state change is a transition: events plus table updates in one synchronous SQLite transaction,
// appended before anyone sees them, then folded into the in-memory read model and broadcast.
import { DurableObject } from "cloudflare:workers";
import type { ModelMessage } from "ai";
import type { Env } from "../env";
import { type EventDraft, isTerminalTurnEvent, type RuntimeEvent } from "../protocol/events";
import type { ActionResolved, ApprovalDecision, InjectResult, SubmitTurnBody, TurnAccepted } from "../protocol/wire";
import { type AgentConfig, BUDGET_CAPS } from "../runtime/config";
import { ApiError, type Result, toResult } from "../runtime/errors";
import { buildTree } from "../runtime/execution-tree";
import { randomId } from "../runtime/ids";
import { errorMessage, runTurn, type TurnPorts, type TurnSetup } from "../runtime/loop";
import { resolveModel } from "../runtime/models";
import { DEFAULT_POLICY, type Policy } from "../runtime/policy";
import { emptyView, foldAll, foldEvent, type SessionView } from "../runtime/read-model";
import { discoverMcpTools, McpConnections, type McpDiscovery } from "../runtime/tools/mcp-client";
import { describeTool, resolveToolbelt } from "../runtime/tools/toolbelt";
import { closingEvents, finalMessages, levels, newTurnState, pendingApprovals, type TurnState } from "../runtime/turn-state";
import { parseAllowlist } from "../runtime/url-allowlist";
import { type FrameTarget, handleFrame, reply } from "./command-frames";
import { DeltaBatcher } from "./delta-batcher";
import { isInitialized, migrate, SESSION_MIGRATIONS } from "./migrate";
import { orchestrationLimits, runChildSession, type StepOutcome, stepOutcome } from "./orchestration-steps";
import { providerEnv } from "./providers";
import { registry } from "./registry-object";
import { type SessionRow, SessionStore, type StoredEvent } from "./session-store";
import { SocketHub } from "./socket-hub";
import { r2Workspace } from "./workspace-store";

/** Carries the caller's key hash from the Worker to the object on WebSocket upgrades (set by the Worker only). */
export const KEY_HASH_HEADER = "x-runtime-key-hash";

/** Where a spilled payload lives in R2: under its session, so one session cannot read another's. */
export function artifactKey(sessionId: string, artifactId: string): string {
  return `sessions/${sessionId}/artifacts/${artifactId}`;
}

/** While a turn is active the object re-arms this alarm; it resumes a turn whose executor is gone. */
export const HEARTBEAT_MS = 30_000;
export const MAX_QUEUED_TURNS = 20;
/** Resumes of one turn after restarts before it is given up as lost. */
export const MAX_RECOVERIES = 3;
const APPROVAL_DEADLINE = "approval:";
export const MAX_EVENTS_PAGE = 1000;
export const MAX_PAGE_BYTES = 1_000_000;

interface Executor {
  turnId: string;
  abort: AbortController;
  /** The loop's own state object: live messages are added to its inbox. */
  state: TurnState;
}

/** Thrown into a loop whose turn was taken away (interrupted) so it stops without writing. */
class TurnTakenError extends Error {}

export interface CreateSessionInput {
  session_id: string;
  agent: AgentConfig;
  policy: Policy;
  metadata: Record<string, unknown>;
}

export class SessionObject extends DurableObject<Env> {
  /** Opened when the session exists (or is being created). */
  private store!: SessionStore;
  private view: SessionView = emptyView();
  private row: SessionRow | null = null;
  private config: AgentConfig | null = null;
  private policy: Policy = DEFAULT_POLICY;
  private history: ModelMessage[] | null = null;
  private executor: Executor | null = null;
  /** Clients of the agent's MCP servers, kept between turns (tool listings are cached for a short while). */
  private mcpConnections: McpConnections | null = null;
  /** Callers of runToEnd, by turn, resolved when the turn ends. */
  private readonly waiters = new Map<string, ((outcome: StepOutcome) => void)[]>();
  private readonly hub: SocketHub;
  /** model.delta events waiting for their commit; any other commit takes them first. */
  private readonly deltas = new DeltaBatcher(() => {
    try {
      this.commit([]);
    } catch (err) {
      console.error("committing text deltas failed", err);
    }
  });

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    const maxUnacked = Number(env.WS_MAX_UNACKED_EVENTS);
    this.hub = new SocketHub(ctx, (after, limit) => this.store.readEvents(after, limit), Number.isInteger(maxUnacked) && maxUnacked > 0 ? maxUnacked : 10_000);
    // An object nobody created (a request for an unknown session) reads one catalog row and writes nothing.
    if (!isInitialized(ctx.storage)) return;
    void ctx.blockConcurrencyWhile(async () => {
      this.open();
      if (!this.row) return;
      this.config = JSON.parse(this.row.agent) as AgentConfig;
      this.policy = { ...DEFAULT_POLICY, ...(JSON.parse(this.row.policy) as Partial<Policy>) };
      const snap = this.store.snapshot();
      const tail = this.store.readEvents(snap?.last_sequence ?? 0, Number.MAX_SAFE_INTEGER).map((e) => JSON.parse(e.body) as RuntimeEvent);
      this.view = foldAll(tail, snap ?? emptyView());
      try {
        // A turn left running by a previous instance (eviction, deploy, crash) continues now.
        this.resumeIfOrphaned("the session object restarted");
      } catch (err) {
        // Never fail the constructor: the object would refuse every request. The heartbeat tries again.
        console.error("resume on start failed", err);
      }
    });
  }

  private open(): void {
    migrate(this.ctx.storage, SESSION_MIGRATIONS);
    this.store = new SessionStore(this.ctx.storage.sql);
    this.row = this.store.session();
  }

  // ---- RPC surface (called by the routes) ----

  async create(input: CreateSessionInput): Promise<Result<{ session_id: string; thread_id: string }>> {
    return toResult(() => {
      if (!this.store) this.open();
      if (this.row) throw new ApiError("conflict", `Session '${input.session_id}' already exists`);
      const row: SessionRow = {
        session_id: input.session_id,
        thread_id: randomId("thr"),
        agent: JSON.stringify(input.agent),
        metadata: JSON.stringify(input.metadata),
        policy: JSON.stringify(input.policy),
        created_at: Date.now(),
      };
      this.row = row;
      this.config = input.agent;
      this.policy = input.policy;
      const payload = { agent: input.agent.name, model: input.agent.model, policy: input.policy, metadata: input.metadata };
      this.commit([{ type: "session.created", payload }], () => this.store.insertSession(row));
      return { session_id: row.session_id, thread_id: row.thread_id };
    });
  }

  async snapshot(): Promise<Result<Record<string, unknown>>> {
    return toResult(() => {
      const { row, config, view } = this.mustExist();
      return {
        session_id: row.session_id,
        agent: config,
        policy: this.policy,
        status: view.status,
        created_at: row.created_at,
        metadata: view.metadata,
        threads: [{ thread_id: row.thread_id, status: view.status, active_turn_id: view.active_turn_id }],
        turns: view.turns,
        turn_count: view.turn_count,
        last_sequence: view.last_sequence,
        channels: this.store.channels(),
      };
    });
  }

  async thread(): Promise<Result<Record<string, unknown>>> {
    return toResult(() => this.threadView(this.mustExist().view));
  }

  async submitTurn(body: SubmitTurnBody): Promise<Result<TurnAccepted & { duplicate?: boolean }>> {
    return toResult(() => this.submit(body));
  }

  async interrupt(reason?: string): Promise<Result<{ interrupted: boolean; turn_id: string | null }>> {
    return toResult(() => {
      this.mustExist();
      return this.interruptActive(reason ?? "interrupted by client");
    });
  }

  /**
   * Live message injection: the running turn takes it before its next model call; with no running turn it
   * becomes a new turn.
   */
  async injectMessage(content: string): Promise<Result<InjectResult>> {
    return toResult(() => {
      this.mustExist();
      const running = this.store.runningTurn();
      if (!running) return { delivery: "new_turn" as const, ...this.submit({ input: content }) };
      const state = this.executor?.state ?? this.store.turnState(running.turn_id);
      if (!state) throw new ApiError("conflict", "The running turn has no checkpoint to inject into");
      const message_id = randomId("msg");
      (state.inbox ??= []).push({ message_id, content });
      this.transact(() => this.store.saveTurnState(state));
      return { delivery: "injected" as const, turn_id: running.turn_id, message_id };
    });
  }

  async removeQueued(turnId: string): Promise<Result<{ queued: string[] }>> {
    return toResult(() => {
      this.mustExist();
      this.queuedTurn(turnId);
      return { queued: this.dropQueued(turnId, "removed from the queue") };
    });
  }

  /** Ends one turn, whether it runs or waits in the queue; a turn that already ended is left alone. */
  async cancelTurn(turnId: string, reason: string): Promise<Result<{ cancelled: boolean }>> {
    return toResult(() => {
      this.mustExist();
      const status = this.store.turn(turnId)?.status;
      if (status === "running") return { cancelled: this.interruptActive(reason).interrupted };
      if (status !== "queued") return { cancelled: false };
      this.dropQueued(turnId, reason);
      return { cancelled: true };
    });
  }

  async promoteQueued(turnId: string): Promise<Result<{ queued: string[] }>> {
    return toResult(() => {
      this.mustExist();
      this.queuedTurn(turnId);
      const queued = [
        turnId,
        ...this.store
          .queuedTurns()
          .filter((t) => t.turn_id !== turnId)
          .map((t) => t.turn_id),
      ];
      this.commit([{ type: "queue.changed", payload: { queued } }], () => this.store.moveTurnToFront(turnId));
      return { queued };
    });
  }

  /** Events after `after` as one JSON document, built from the stored bodies without re-serializing them. */
  async eventsPage(after: number, limit: number): Promise<Result<string>> {
    return toResult(() => {
      this.mustExist();
      this.checkCursor(after);
      const page = this.store.readEvents(after, Math.min(limit, MAX_EVENTS_PAGE));
      // A page also stops at about MAX_PAGE_BYTES (always at least one event), so one response stays small.
      let bytes = 0;
      let count = 0;
      while (count < page.length && (count === 0 || bytes + page[count]!.body.length <= MAX_PAGE_BYTES)) bytes += page[count++]!.body.length;
      const taken = page.slice(0, count);
      const next = taken.length > 0 ? taken[taken.length - 1]!.sequence : after;
      return `{"events":[${taken.map((e) => e.body).join(",")}],"next_after":${next},"has_more":${next < this.store.lastSequence}}`;
    });
  }

  async tools(): Promise<Result<{ tools: ReturnType<typeof describeTool>[]; policy: Policy }>> {
    return toResult(async () => {
      const { config } = this.mustExist();
      const mcp = await this.discoverMcp(config);
      return { tools: [...resolveToolbelt(config, this.policy, mcp.tools).values()].map(describeTool), policy: this.policy };
    });
  }

  /**
   * Submits `input` (idempotent by `key`) and resolves when that turn ends: the way an orchestration step
   * runs this session. A turn that already ended answers at once from the log.
   */
  async runToEnd(input: string, key: string): Promise<Result<StepOutcome>> {
    return toResult(async () => {
      this.mustExist();
      const { turn_id } = this.submit({ input, idempotency_key: key });
      const ended = this.store.eventsOfTurn(turn_id).find((e) => isTerminalTurnEvent(e.type));
      if (ended) return stepOutcome(ended);
      return new Promise<StepOutcome>((resolve) => {
        const list = this.waiters.get(turn_id) ?? [];
        list.push(resolve);
        this.waiters.set(turn_id, list);
      });
    });
  }

  /** The turn's execution tree, folded from its events. */
  async tree(turnId: string): Promise<Result<ReturnType<typeof buildTree>>> {
    return toResult(() => {
      this.mustExist();
      if (!this.store.turn(turnId)) throw ApiError.notFound("Turn", turnId);
      return buildTree(this.store.eventsOfTurn(turnId));
    });
  }

  /** A human decision on a pending approval; `by` identifies the caller (a hash of its API key). */
  async resolveAction(actionId: string, decision: "approve" | "reject", reason: string | undefined, by: string): Promise<Result<ActionResolved>> {
    return toResult(() => {
      this.mustExist();
      return this.decide(actionId, decision === "approve" ? "approved" : "rejected", reason ?? null, by);
    });
  }

  /** WebSocket upgrades and SSE streams (they need a Response, so they come through fetch). */
  override async fetch(request: Request): Promise<Response> {
    const url = new URL(request.url);
    const result = await toResult(() => {
      this.mustExist();
      const channel = url.searchParams.get("channel");
      // An EventSource reconnects to the same URL (with its original `after`) and adds Last-Event-ID: that wins.
      const afterParam = request.headers.get("last-event-id") ?? url.searchParams.get("after");
      let after = afterParam === null ? null : Number(afterParam);
      if (after !== null && (!Number.isInteger(after) || after < 0)) {
        throw ApiError.validation([{ path: "after", reason: "must be a non-negative integer" }]);
      }
      if (after === null && channel) after = this.store.channelCursor(channel) ?? 0;
      after ??= 0;
      this.checkCursor(after);
      if (url.pathname.endsWith("/ws")) {
        if (channel) this.store.ackChannel(channel, after, Date.now());
        return this.hub.acceptWebSocket(after, { channel, key_hash: request.headers.get(KEY_HASH_HEADER) ?? "unknown" });
      }
      return this.hub.openSse(after);
    });
    if (result.ok) return result.value;
    return Response.json({ error: result.error }, { status: new ApiError(result.error.code, "").status });
  }

  // ---- WebSocket (Hibernation API) ----

  private readonly frames: FrameTarget = {
    submitTurn: (body) => this.submitTurn(body),
    interrupt: (reason) => this.interrupt(reason),
    resolveAction: (actionId, decision, reason, by) => this.resolveAction(actionId, decision, reason, by),
    injectMessage: (content) => this.injectMessage(content),
    keyHash: (ws) => this.hub.attachment(ws).key_hash,
    ack: (ws, sequence) => {
      const { channel } = this.hub.attachment(ws);
      if (!channel) return { ok: false, error: new ApiError("validation_failed", "ack needs a socket opened with ?channel=<id>").toBody().error };
      const acked = Math.min(sequence, this.store.lastSequence);
      this.store.ackChannel(channel, acked, Date.now());
      this.hub.acked(ws, acked);
      return { ok: true, value: { channel, acked_sequence: this.store.channelCursor(channel) } };
    },
  };

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
    if (!this.row) return;
    for (const kind of this.store.takeDue(Date.now())) {
      if (kind === "heartbeat") {
        this.resumeIfOrphaned("the heartbeat found no running executor");
        if (this.store.runningTurn() && !this.waiting()) this.store.schedule("heartbeat", Date.now() + HEARTBEAT_MS);
      } else if (kind.startsWith(APPROVAL_DEADLINE)) {
        const actionId = kind.slice(APPROVAL_DEADLINE.length);
        if (this.store.action(actionId)?.status === "pending") this.decide(actionId, "timed_out", "no decision before the deadline", "runtime");
      }
    }
    await this.armAlarm();
  }

  // ---- internals ----

  private mustExist(): { row: SessionRow; config: AgentConfig; view: SessionView } {
    if (!this.row || !this.config) throw new ApiError("not_found", "Session was not found");
    return { row: this.row, config: this.config, view: this.view };
  }

  private threadView(view: SessionView) {
    return {
      session_id: view.session_id,
      thread_id: view.thread_id,
      status: view.status,
      active_turn_id: view.active_turn_id,
      pending_actions: view.pending_actions,
      queued_turns: view.queued_turns,
      last_outcome: view.last_outcome,
      budget: { used: view.usage, limits: { max_steps: this.config!.max_steps, ...BUDGET_CAPS, ...this.config!.budget } },
      last_sequence: view.last_sequence,
    };
  }

  private checkCursor(after: number): void {
    if (after > this.store.lastSequence) {
      throw ApiError.validation([{ path: "after", reason: `is beyond the last sequence (${this.store.lastSequence})` }]);
    }
  }

  /** Cancels a queued turn; returns the queue left. */
  private dropQueued(turnId: string, reason: string): string[] {
    const queued = this.store
      .queuedTurns()
      .filter((t) => t.turn_id !== turnId)
      .map((t) => t.turn_id);
    this.commit(
      [
        { type: "turn.cancelled", turn_id: turnId, payload: { reason } },
        { type: "queue.changed", payload: { queued } },
      ],
      () => this.store.setTurnStatus(turnId, "cancelled"),
    );
    return queued;
  }

  private queuedTurn(turnId: string) {
    const turn = this.store.turn(turnId);
    if (!turn) throw ApiError.notFound("Turn", turnId);
    if (turn.status !== "queued") throw new ApiError("conflict", `Turn '${turnId}' is ${turn.status}, not queued`);
    return turn;
  }

  /** One SQLite transaction; after a rollback the store forgets what it cached about stored rows. */
  private transact<T>(fn: () => T): T {
    try {
      return this.ctx.storage.transactionSync(fn);
    } catch (err) {
      this.store.resync();
      throw err;
    }
  }

  /** Appends events (and applies `mutate`) in one transaction, then folds and broadcasts them. */
  private commit(newDrafts: EventDraft[], mutate?: () => void, opts: { snapshot?: boolean } = {}): void {
    const deltas = this.deltas.take();
    const drafts = [...deltas, ...newDrafts];
    if (drafts.length === 0 && !mutate) return;
    const ids = { session_id: this.row!.session_id, thread_id: this.row!.thread_id };
    let committed: { stored: StoredEvent[]; next: SessionView };
    try {
      committed = this.transact(() => {
        mutate?.();
        const appended = this.store.append(drafts, ids, Date.now(), randomId);
        let view = this.view;
        for (const a of appended) view = foldEvent(view, a.event);
        if (opts.snapshot) this.store.saveSnapshot(view);
        return { stored: appended.map((a) => a.stored), next: view };
      });
    } catch (err) {
      this.deltas.restore(deltas); // they are still facts of the turn; the next commit records them
      throw err;
    }
    const { stored, next } = committed;
    this.view = next;
    this.hub.broadcast(stored);
  }

  private submit(body: SubmitTurnBody): TurnAccepted & { duplicate?: boolean } {
    this.mustExist();
    if (body.idempotency_key) {
      const prior = this.store.turnByIdempotencyKey(body.idempotency_key);
      if (prior) {
        if (prior.input !== body.input) {
          throw new ApiError("conflict", "idempotency_key was already used with a different body", { turn_id: prior.turn_id });
        }
        const submitted = this.view.turns.find((t) => t.turn_id === prior.turn_id);
        return { turn_id: prior.turn_id, status: submitted?.status === "queued" ? "queued" : "accepted", duplicate: true };
      }
    }
    const queuedBefore = this.store.queuedTurns();
    const busy = this.store.runningTurn() !== null || queuedBefore.length > 0;
    if (busy && queuedBefore.length >= MAX_QUEUED_TURNS) {
      throw new ApiError("rate_limited", `The turn queue is full (${MAX_QUEUED_TURNS} turns); retry when a turn has finished`);
    }
    const turn_id = randomId("trn");
    const drafts: EventDraft[] = [{ type: "turn.submitted", turn_id, payload: { input: body.input, queued: busy } }];
    if (busy) drafts.push({ type: "queue.changed", payload: { queued: [...queuedBefore.map((t) => t.turn_id), turn_id] } });
    this.commit(drafts, () =>
      this.store.insertTurn({ turn_id, status: "queued", input: body.input, idempotency_key: body.idempotency_key ?? null, created_at: Date.now() }),
    );
    this.startNextTurn();
    return { turn_id, status: busy ? "queued" : "accepted" };
  }

  /** Starts the first queued turn when none is running. */
  private startNextTurn(): void {
    if (this.store.runningTurn()) return;
    const [next, ...rest] = this.store.queuedTurns();
    if (!next) {
      this.store.unschedule("heartbeat");
      void this.armAlarm();
      return;
    }
    const config = this.config!;
    const state = newTurnState(next.turn_id, next.input, Date.now());
    const drafts: EventDraft[] = [];
    if (this.view.queued_turns.includes(next.turn_id)) drafts.push({ type: "queue.changed", payload: { queued: rest.map((t) => t.turn_id) } });
    // tool.catalog.resolved follows from launch, once the agent's MCP servers have been asked for their tools.
    drafts.push({ type: "turn.started", turn_id: next.turn_id, payload: { agent: config.name, model: config.model } });
    this.commit(drafts, () => {
      this.store.setTurnStatus(next.turn_id, "running");
      this.store.saveTurnState(state);
      this.store.schedule("heartbeat", Date.now() + HEARTBEAT_MS);
    });
    void this.armAlarm();
    this.launch(state, true);
  }

  /** Continues a running turn that has no executor in this instance. */
  private resumeIfOrphaned(why: string): void {
    if (this.executor) return;
    const running = this.store.runningTurn();
    if (!running) {
      this.startNextTurn(); // a queue left waiting by a failed hand-over
      return;
    }
    const state = this.store.turnState(running.turn_id);
    const lost = (message: string) =>
      this.finishTurn(
        { type: "turn.failed", turn_id: running.turn_id, payload: { error: { code: "lost", message } } },
        state ?? newTurnState(running.turn_id, running.input, Date.now()),
      );
    if (!state) {
      lost("The turn's checkpoint is missing; it cannot be resumed");
      return;
    }
    if (state.paused_at) return; // waiting for a human: a decision resumes it, not a restart
    // Consecutive resumes without progress (reset by every model response and tool result) are capped.
    state.recoveries = (state.recoveries ?? 0) + 1;
    if (state.recoveries > MAX_RECOVERIES) {
      lost(`The turn was resumed ${MAX_RECOVERIES} times without progress`);
      return;
    }
    // Model calls cut by the restart (at any level) are closed; the loop makes them again. Started tools are
    // the loop's to settle.
    const closing = closingEvents(state, "interrupted", Date.now(), "model_calls");
    for (const level of levels(state)) level.state.open_model_step = null;
    this.commit(
      [
        ...closing,
        { type: "run.status", turn_id: running.turn_id, payload: { phase: "recovering", detail: `Resuming the turn: ${why}`, attempt: state.recoveries } },
      ],
      () => {
        this.store.saveTurnState(state);
        this.store.schedule("heartbeat", Date.now() + HEARTBEAT_MS);
      },
    );
    void this.armAlarm();
    this.launch(state);
  }

  /**
   * Runs the loop for `state` in this instance. The loop writes only while this executor owns the turn. A
   * `fresh` turn (just started, not resumed) first records its tool catalog.
   */
  private launch(state: TurnState, fresh = false): void {
    const exec: Executor = { turnId: state.turn_id, abort: new AbortController(), state };
    this.executor = exec;
    const owned = () => {
      if (this.executor !== exec || exec.abort.signal.aborted) throw new TurnTakenError("turn no longer owned by this executor");
    };
    const ports: TurnPorts = {
      emit: (events, st) => {
        owned();
        if (!st && events.every((e) => e.type === "model.delta")) {
          if (this.deltas.add(events)) this.commit([]);
          return;
        }
        if (st && events.some((e) => e.type === "model.completed" || e.type === "tool.result")) st.recoveries = 0;
        this.commit(events, st ? () => this.store.saveTurnState(st) : undefined);
      },
      finish: (event, st) => {
        owned();
        this.executor = null;
        exec.abort.abort(new Error("the turn has ended")); // stops tools still running in parallel
        try {
          this.finishTurn(event, st);
        } catch (err) {
          this.failTurn(st, err);
        }
      },
      handoff: async (agent, reason) => {
        const config = await registry(this.env).get(agent);
        owned();
        if (!config) throw new Error(`Agent "${agent}" is not registered`);
        const mcp = await this.discoverMcp(config);
        owned();
        const setup = this.setupFor(config, mcp);
        const from = this.config!.name;
        this.commit(
          [
            { type: "run.status", turn_id: state.turn_id, payload: { phase: "handoff", from, to: agent, reason: reason ?? null } },
            ...mcpWarnings(state.turn_id, mcp),
          ],
          () => this.store.setSessionAgent(JSON.stringify(config)),
        );
        this.config = config;
        return setup;
      },
      requestApproval: (event, st, action) => {
        owned();
        this.commit([event], () => {
          this.store.saveTurnState(st);
          this.store.insertAction({ ...action, turn_id: st.turn_id, tool_call_id: event.tool_call_id! });
          this.store.schedule(`${APPROVAL_DEADLINE}${action.action_id}`, action.expires_at);
        });
        void this.armAlarm();
      },
      suspend: (st) => {
        owned();
        this.executor = null;
        st.paused_at = Date.now();
        // Waiting for a human costs nothing: no executor and no heartbeat; each deadline is an alarm entry.
        this.transact(() => {
          this.store.saveTurnState(st);
          this.store.unschedule("heartbeat");
        });
        void this.armAlarm();
      },
      runAgent: (request) => runChildSession(this.env, { session_id: this.row!.session_id, turn_id: state.turn_id, policy: this.policy }, request),
      listAgents: async () => {
        const agents: AgentConfig[] = await registry(this.env).list();
        return agents.map((a) => ({ name: a.name, description: (a.instructions.split("\n")[0] ?? "").slice(0, 200) || "(no instructions)" }));
      },
      spill: async (content, about) => {
        const id = randomId("art");
        await this.env.BLOBS.put(artifactKey(this.row!.session_id, id), content, {
          httpMetadata: { contentType: about.content_type },
          customMetadata: { turn_id: about.turn_id, tool_call_id: about.tool_call_id, tool_name: about.tool_name },
        });
        return id;
      },
      replaceHistory: (history, event, st) => {
        owned();
        this.commit([event], () => {
          this.store.replaceHistory(history);
          this.store.saveTurnState(st);
        });
        this.history = history;
      },
      now: () => Date.now(),
      newId: randomId,
      signal: exec.abort.signal,
      tool: {
        session_id: this.row!.session_id,
        fetch: (input, init) => fetch(input, init),
        urlAllowlist: parseAllowlist(this.env.TOOL_URL_ALLOWLIST),
        workspace: r2Workspace(this.env.BLOBS, this.row!.session_id, this.policy.workspace_root),
        memory: {
          get: (key) => this.store.memoryGet(key),
          set: (key, value) => this.store.memorySet(key, value, Date.now()),
          list: (prefix, limit) => this.store.memoryList(prefix, limit),
        },
      },
    };
    const run = async () => {
      const config = this.config!;
      // The tools of the agent's MCP servers are known only now; servers that do not answer are left out.
      const mcp = await this.discoverMcp(config);
      let setup: TurnSetup;
      try {
        setup = this.setupFor(config, mcp);
      } catch (err) {
        ports.finish({ type: "turn.failed", turn_id: state.turn_id, payload: { error: { code: "configuration_error", message: errorMessage(err) } } }, state);
        return;
      }
      const drafts = mcpWarnings(state.turn_id, mcp);
      if (fresh) drafts.push({ type: "tool.catalog.resolved", turn_id: state.turn_id, payload: { tools: [...setup.tools.values()].map(describeTool) } });
      if (drafts.length > 0) ports.emit(drafts);
      await runTurn(state, setup, ports);
    };
    run()
      .catch((err) => {
        if (err instanceof TurnTakenError || exec.abort.signal.aborted) return;
        // The loop could not even record its failure; leave a trace and let the heartbeat retry.
        console.error("turn executor failed", state.turn_id, err);
      })
      .finally(() => {
        if (this.executor === exec) this.executor = null;
      });
  }

  private setupFor(config: AgentConfig, mcp: McpDiscovery): TurnSetup {
    const providers = providerEnv(this.env);
    const metadata = JSON.parse(this.row!.metadata) as { orchestration_depth?: unknown };
    return {
      config,
      model: resolveModel(config.model, providers),
      tools: resolveToolbelt(config, this.policy, mcp.tools),
      history: this.loadHistory(),
      resolveModel: (spec) => resolveModel(spec, providers),
      orchestration: {
        ...orchestrationLimits(this.env),
        depth: typeof metadata.orchestration_depth === "number" ? metadata.orchestration_depth : 0,
      },
    };
  }

  /** The tools of the agent's MCP servers (none without servers); never fails, unreachable servers become warnings. */
  private async discoverMcp(config: AgentConfig): Promise<McpDiscovery> {
    if (config.mcp_servers.length === 0) return { tools: [], warnings: [] };
    this.mcpConnections ??= new McpConnections({ fetch: (input, init) => fetch(input, init), urlAllowlist: parseAllowlist(this.env.TOOL_URL_ALLOWLIST) });
    return discoverMcpTools(config, this.mcpConnections);
  }

  /** Whether the running turn is suspended, waiting for decisions. */
  private waiting(): boolean {
    const running = this.store.runningTurn();
    if (!running || this.executor) return false;
    return Boolean(this.store.turnState(running.turn_id)?.paused_at);
  }

  /** Records a decision on a pending approval and lets the turn go on (resuming it if it was suspended). */
  private decide(actionId: string, decision: ApprovalDecision, reason: string | null, by: string): ActionResolved {
    const action = this.store.action(actionId);
    if (!action) throw ApiError.notFound("Action", actionId);
    if (action.status !== "pending") {
      throw new ApiError("conflict", `Action '${actionId}' was already resolved (${action.status})`, { status: action.status });
    }
    const running = this.store.runningTurn();
    const state = running?.turn_id === action.turn_id ? (this.executor?.state ?? this.store.turnState(action.turn_id)) : null;
    // The call may belong to a sub-agent: look through every level of the turn.
    const place = state ? levels(state).find((l) => l.state.calls?.some((c) => c.approval?.action_id === actionId)) : undefined;
    const call = place?.state.calls?.find((c) => c.approval?.action_id === actionId);
    if (!state || !place || !call?.approval) throw new ApiError("conflict", `Action '${actionId}' belongs to a turn that is no longer running`);
    call.approval = { ...call.approval, status: decision, reason };
    const resume = !this.executor;
    if (resume && state.paused_at) {
      state.waited_ms = (state.waited_ms ?? 0) + (Date.now() - state.paused_at);
      state.paused_at = null;
    }
    this.commit(
      [
        {
          type: "action.resolved",
          turn_id: action.turn_id,
          action_id: actionId,
          tool_call_id: action.tool_call_id,
          // The same envelope as its action.required: a sub-agent's decision stays under its parent call.
          parent_id: place.parent_id,
          depth: place.depth,
          ...(place.subagent_id ? { subagent_id: place.subagent_id } : {}),
          payload: { decision, tool_name: action.tool_name, by, reason },
        },
      ],
      () => {
        this.store.decideAction(actionId, decision, by, reason, Date.now());
        this.store.unschedule(`${APPROVAL_DEADLINE}${actionId}`);
        this.store.saveTurnState(state);
        if (resume) this.store.schedule("heartbeat", Date.now() + HEARTBEAT_MS);
      },
    );
    void this.armAlarm();
    if (resume) this.launch(state);
    return { action_id: actionId, turn_id: action.turn_id, tool_call_id: action.tool_call_id, decision };
  }

  private interruptActive(reason: string): { interrupted: boolean; turn_id: string | null } {
    const running = this.store.runningTurn();
    if (!running) return { interrupted: false, turn_id: null };
    const exec = this.executor;
    this.executor = null;
    exec?.abort.abort(new Error(reason));
    const state = exec?.state ?? this.store.turnState(running.turn_id) ?? newTurnState(running.turn_id, running.input, Date.now());
    this.finishTurn({ type: "turn.cancelled", turn_id: running.turn_id, payload: { reason } }, state);
    return { interrupted: true, turn_id: running.turn_id };
  }

  /**
   * Records a turn's end: terminal event, history, checkpoint removal and snapshot in one transaction. Live
   * messages that arrived too late to enter the turn become queued turns in the same transaction.
   */
  private finishTurn(event: EventDraft, state: TurnState): void {
    const turnId = state.turn_id;
    const status = event.type === "turn.completed" ? "completed" : event.type === "turn.failed" ? "failed" : "cancelled";
    const messages = finalMessages(state, status === "completed" ? "the turn reached max_steps" : `the turn was ${status}`);
    const leftovers = (state.inbox ?? []).map((m) => ({ turn_id: randomId("trn"), input: m.content, message_id: m.message_id }));
    const drafts: EventDraft[] = [
      ...closingEvents(state, status === "cancelled" ? "cancelled" : "interrupted", Date.now()),
      event,
      ...leftovers.map(
        (t): EventDraft => ({ type: "turn.submitted", turn_id: t.turn_id, payload: { input: t.input, queued: true, message_id: t.message_id } }),
      ),
    ];
    if (leftovers.length > 0) {
      drafts.push({ type: "queue.changed", payload: { queued: [...this.view.queued_turns, ...leftovers.map((t) => t.turn_id)] } });
    }
    this.commit(
      drafts,
      () => {
        for (const c of pendingApprovals(state)) {
          this.store.decideAction(c.approval!.action_id, "rejected", "runtime", `the turn was ${status}`, Date.now());
          this.store.unschedule(`${APPROVAL_DEADLINE}${c.approval!.action_id}`);
        }
        this.store.setTurnStatus(turnId, status);
        this.store.appendHistory(turnId, messages);
        this.store.deleteTurnState(turnId);
        for (const t of leftovers)
          this.store.insertTurn({ turn_id: t.turn_id, status: "queued", input: t.input, idempotency_key: null, created_at: Date.now() });
      },
      { snapshot: true },
    );
    this.history?.push(...messages);
    const waiting = this.waiters.get(turnId);
    if (waiting) {
      this.waiters.delete(turnId);
      const outcome = stepOutcome({ type: event.type, payload: event.payload } as RuntimeEvent);
      for (const resolve of waiting) resolve(outcome);
    }
    this.startNextTurn();
  }

  /**
   * The last resort when recording a turn's end failed (for example a row over SQLite's size limit): end it
   * with a minimal turn.failed that keeps only the user's input in the history, so the session goes on.
   */
  private failTurn(state: TurnState, cause: unknown): void {
    console.error("recording the end of a turn failed", state.turn_id, cause);
    const [input] = state.messages;
    const minimal = { ...newTurnState(state.turn_id, "", state.started_at), messages: input ? [input] : [] };
    this.finishTurn(
      {
        type: "turn.failed",
        turn_id: state.turn_id,
        payload: { error: { code: "internal_error", message: `Recording the turn's end failed: ${errorMessage(cause)}` } },
      },
      minimal,
    );
  }

  private loadHistory(): ModelMessage[] {
    this.history ??= this.store.history();
    return this.history;
  }

  private async armAlarm(): Promise<void> {
    const next = this.store.nextDue();
    if (next === null) await this.ctx.storage.deleteAlarm();
    else await this.ctx.storage.setAlarm(next);
  }
}

/** A runtime.warning per MCP server or tool that discovery had to leave out. */
function mcpWarnings(turnId: string, mcp: McpDiscovery): EventDraft[] {
  return mcp.warnings.map((w) => ({ type: "runtime.warning", turn_id: turnId, payload: { code: w.code, server: w.server, message: w.message } }));
}
