// One session in one Durable Object, the machinery under its RPC surface (session-object.ts): storage, sockets,
// the alarm, and `commit`, the one way a transition is recorded: events appended (and projected into the turns
// and actions tables) together with any checkpoint, in one synchronous SQLite transaction, before anyone sees
// them; then folded into the in-memory read model and broadcast; and the one alarm, shared by the kinds of
// entries the capabilities register. The queue, approvals, turn execution, schedules, subscriptions, the index,
// forks, replays and the read views are capabilities (session-capability.ts) of their own.

import { DurableObject } from "cloudflare:workers";
import { type InProcessTools, NO_IN_PROCESS_TOOLS } from "../engine/tools/in-process";
import { type Env, positiveSetting } from "../env";
import { randomId } from "../ids";
import { isInitialized, migrate, SESSION_MIGRATIONS } from "../objects/migrate";
import type { AgentConfig } from "../protocol/agent-config";
import { CLOSE_CODES } from "../protocol/close-codes";
import { ApiError } from "../protocol/errors";
import type { EventDraft, RuntimeEvent } from "../protocol/events";
import { DEFAULT_POLICY, type Policy } from "../protocol/policy";
import type { SessionView } from "../protocol/views";
import { emptyView, foldAll, foldEvent } from "../views/read-model";
import { type Capabilities, connect } from "./capabilities";
import { alarmFor, type Capability } from "./capability";
import { COPY_DUE, FileLedger } from "./files/file-ledger";
import { fileLimits } from "./files/file-rules";
import { eraseSessionBlobs } from "./files/session-erase";
import type { SessionHosts } from "./hosts";
import { keepaliveMs } from "./keepalive";
import { PendingWrites } from "./store/pending-writes";
import { project } from "./store/projections";
import { type SessionRow, SessionStore, type StoredEvent } from "./store/session-store";
import { ChannelStore } from "./streams/channel-store";
import { SOCKETS_DUE, SocketHub } from "./streams/socket-hub";

export abstract class SessionCore extends DurableObject<Env> implements SessionHosts {
  /** Opened when the session exists (or is being created). */
  store!: SessionStore;
  readonly sql: SqlStorage;
  channels!: ChannelStore;
  protected folded: SessionView = emptyView();
  protected session: SessionRow | null = null;
  /** The parsed agent config of `session.agent`. */
  protected config: AgentConfig | null = null;
  /** `openedAgent()`, read once from the log. */
  private opened: string | null = null;
  private ledger: FileLedger | null = null;
  readonly hub: SocketHub;
  /** The session's capabilities (capabilities.ts): the queue, approvals, the runner, schedules and the rest. */
  protected readonly parts: Capabilities;
  /** When this instance last set the alarm: null if it has fired since (or none was set), undefined if unknown. */
  private alarmAt: number | null | undefined = undefined;
  /** Text deltas and held events (tool results, an answer naming calls) waiting for their commit; any other commit takes them first. */
  readonly pending = new PendingWrites(() => {
    try {
      this.commit([]);
    } catch (err) {
      console.error("committing waiting events failed", err);
    }
  });

  /** The deployment's in-process tools: createRuntime's subclass passes them (the Worker's module scope holds them). */
  private readonly tools: InProcessTools;

  constructor(ctx: DurableObjectState, env: Env, tools: InProcessTools = NO_IN_PROCESS_TOOLS) {
    super(ctx, env);
    this.tools = tools;
    this.sql = ctx.storage.sql;
    this.hub = new SocketHub(
      ctx,
      (after, limit) => this.store.readEvents(after, limit),
      {
        maxUnacked: positiveSetting(env.WS_MAX_UNACKED_EVENTS, 10_000),
        maxSockets: positiveSetting(env.MAX_SOCKETS_PER_SESSION, 100),
        keepaliveMs: keepaliveMs(env),
      },
      (at) => {
        this.store.timers.schedule(SOCKETS_DUE, at);
        this.armAlarm();
      },
    );
    this.parts = connect(this);
    // An object nobody created (a request for an unknown session) reads one catalog row and writes nothing.
    if (!isInitialized(ctx.storage)) return;
    void ctx.blockConcurrencyWhile(async () => {
      this.open();
      if (!this.session) return;
      const snap = this.store.snapshot();
      const tail = this.store.readEvents(snap?.last_sequence ?? 0, Number.MAX_SAFE_INTEGER).map((e) => JSON.parse(e.body) as RuntimeEvent);
      this.folded = foldAll(tail, snap ?? emptyView());
      for (const c of this.parts.list) {
        if (!("started" in c)) continue;
        try {
          c.started();
        } catch (err) {
          // Never fail the constructor: the object would refuse every request. The heartbeat tries again.
          console.error("a capability's start failed", err);
        }
      }
      this.armAlarm();
    });
  }

  protected open(): void {
    const owned = this.parts.list.flatMap((c: Capability) => (c.tables ? [c.tables] : []));
    migrate(this.ctx.storage, SESSION_MIGRATIONS, owned);
    this.store = new SessionStore(this.ctx.storage.sql);
    this.channels = new ChannelStore(this.ctx.storage.sql);
    this.session = this.store.session();
  }

  // ---- WebSocket (Hibernation API) ----

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
    this.alarmAt = null;
    if (!this.session) return;
    const background: Promise<void>[] = [];
    for (const entry of this.store.timers.takeDue(Date.now())) {
      const due = alarmFor(this.parts.list, entry);
      const outcome = due && (await due.kind.fire(Date.now(), due.key));
      if (outcome?.stop) return;
      if (outcome?.background) background.push(outcome.background);
    }
    this.armAlarm();
    await Promise.all(background);
  }

  // ---- The seams of hosts.ts ----

  bindings(): Env {
    return this.env;
  }

  inProcessTools(): InProcessTools {
    return this.tools;
  }

  row(): SessionRow {
    if (!this.session) throw ApiError.noSession();
    return this.session;
  }

  agent(): AgentConfig {
    this.config ??= JSON.parse(this.row().agent) as AgentConfig;
    return this.config;
  }

  openedAgent(): string {
    this.row();
    this.opened ??= this.store.openedAgent();
    return this.opened;
  }

  policy(): Policy {
    return { ...DEFAULT_POLICY, ...(JSON.parse(this.row().policy) as Partial<Policy>) };
  }

  view(): SessionView {
    return this.folded;
  }

  fileLedger(): FileLedger {
    this.ledger ??= new FileLedger(this.ctx.storage.sql, this.env.BLOBS, this.row().session_id, fileLimits(this.env), {
      copy: () => this.store.timers.schedule(COPY_DUE, Date.now()),
      changed: () => void this.parts.indexer.sync(),
    });
    return this.ledger;
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

  commit(newDrafts: EventDraft[], mutate?: () => void, opts: { snapshot?: boolean; checkpoint?: () => void } = {}): void {
    const waiting = this.pending.take();
    const drafts = [...waiting.drafts, ...newDrafts];
    const checkpoint = opts.checkpoint ?? waiting.checkpoint;
    if (drafts.length === 0 && !mutate && !checkpoint) return;
    const row = this.row();
    const ids = { session_id: row.session_id, thread_id: row.thread_id };
    let committed: { stored: StoredEvent[]; next: SessionView };
    try {
      committed = this.transact(() => {
        checkpoint?.();
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
    for (const c of this.parts.list) if ("committed" in c) c.committed(committed.stored);
  }

  armAlarm(): void {
    const next = this.store.timers.earliest();
    // The alarm only moves earlier. One that fires early finds nothing due and sets the next, while moving it
    // later or deleting it is a write at every turn's end (locally an fsync before the turn's last frames), and
    // a turn starting within a heartbeat of the last one would move it earlier again, a write its commit waits for.
    if (next === null || (this.alarmAt != null && this.alarmAt <= next)) return;
    this.alarmAt = next;
    void this.ctx.storage.setAlarm(next);
  }

  switchAgent(config: AgentConfig, drafts: EventDraft[]): void {
    this.commit(drafts, () => this.store.setSessionAgent(JSON.stringify(config)));
    this.session = { ...this.row(), agent: JSON.stringify(config) };
    this.config = config;
  }

  // ---- internals ----

  /** Runs `fn` for a session that exists; not_found otherwise. */
  protected existing<T>(fn: () => T): T {
    this.row();
    return fn();
  }

  /**
   * Ends the session's turns, closes its subscribers, deletes its R2 objects, its index row and then its
   * storage and alarm. The index goes first: if it cannot be reached, nothing of the session is lost yet.
   */
  async eraseNow(reason: string): Promise<void> {
    const sid = this.row().session_id;
    for (const c of this.parts.list) if ("stop" in c) c.stop();
    for (const c of this.parts.list) if ("erase" in c) await c.erase(reason);
    this.hub.closeAll(CLOSE_CODES.session_erased.code, reason);
    await eraseSessionBlobs(this.env.BLOBS, sid);
    await this.ctx.storage.deleteAlarm();
    this.alarmAt = null;
    await this.ctx.storage.deleteAll();
    this.session = null;
    this.config = null;
    this.opened = null;
    this.ledger = null;
    this.folded = emptyView();
  }
}
