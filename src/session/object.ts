// One session in one Durable Object: a short host over SessionCore (session-core.ts: storage, sockets, the
// alarm, `commit`). The session operations the routes and the sockets' command frames reach go through one
// dispatcher, `call`, to the capability that serves them (session-capability.ts); the few RPCs that are no
// operation of the API (creating the session, erasing it, and what other parts of the runtime ask) are here.

import type { ModelMessage } from "ai";
import type { InProcessTools } from "../engine/tools/in-process";
import type { Env } from "../env";
import { randomId } from "../ids";
import type { AgentConfig } from "../protocol/agent-config";
import { ApiError, type Result, toResult, unwrap } from "../protocol/errors";
import type { EventDraft } from "../protocol/events";
import { checkTokenReach, type Principal } from "../protocol/permissions";
import type { Policy } from "../protocol/policy";
import type { OpInput, OpName } from "../protocol/session-operations";
import type { SubmitTurnBody } from "../protocol/wire";
import type { SessionOperations } from "./capabilities";
import { SessionCore } from "./core";
import type { FileLedger, FileOp, FileRow } from "./files/file-ledger";
import type { DerivedKind } from "./forks/derived-sessions";
import { type PausedCut, pausedTurn } from "./forks/fork-paused";
import { keepaliveMs } from "./keepalive";
import type { ResultIn } from "./operations";
import type { ReplaySpec } from "./replays/replay-row";
import type { StepOutcome } from "./runner/orchestration-steps";
import { turnCursor } from "./store/log-reads";
import type { SessionRow } from "./store/session-store";
import { A2A_PATH, serveA2a } from "./streams/a2a-streams";
import { CHAT_STREAM_PATH, chatStream } from "./streams/chat-stream";
import { type FrameTarget, handleFrame, reply, sessionFrames } from "./streams/command-frames";
import { RESPONSES_PATH, serveResponses } from "./streams/response-streams";
import { openStream, tokenExpiry } from "./streams/session-streams";
import type { A2aPushConfigs } from "./subscriptions/a2a-push";

export interface CreateSessionInput {
  session_id: string;
  agent: AgentConfig;
  /** The version of a registered agent the session runs, and the label that chose it (none: an inline agent). */
  agent_version?: { version: number; label: string | null } | null;
  policy: Policy;
  metadata: Record<string, unknown>;
  /** Set for the child sessions of agent_orchestrate steps. */
  orchestration_depth?: number;
  /** Who opens it (a browser token's subject). */
  owner?: string | null;
  /** The resource whose memory the session uses (registered with the resource's memory object first). */
  resource_id?: string | null;
  /** Set for a fork: where its conversation comes from, that conversation, and the source's files (copied after). */
  fork?: { from_session: string; at_sequence: number; messages_json: string; paused_json: string | null; files: FileRow[] };
  /** Set for a replay (a fork just before the replayed turn): the recorded turn it runs again. */
  replay?: ReplaySpec;
}

/** The path of POST /v1/chat's turn on the session object: a `ChatTurnRequest` in, the turn's chat stream out. */
export const CHAT_TURN_PATH = "/chat-turn";

/** A chat turn as the Worker sends it to the session object (chatTurn below). */
export interface ChatTurnRequest {
  /** How to open the session when it does not exist yet (a new chat); absent: a missing session is 404. */
  create?: CreateSessionInput;
  /** A browser token's binding, checked against the session before anything is recorded. */
  reach?: Pick<Extract<Principal, { kind: "token" }>, "session_id" | "subject" | "agent">;
  by: string;
  body: SubmitTurnBody;
}

/** What the session answers for operation `N` (the result of the handler that serves it). */
export type OpResult<N extends OpName> = ResultIn<SessionOperations, N>;
type Dispatch = { [N in OpName]: (input: OpInput<N>) => OpResult<N> | Promise<OpResult<N>> };

export class SessionObject extends SessionCore {
  /** WebSocket command frames: the same operations, over a session's sockets. */
  private readonly frames: FrameTarget;

  constructor(ctx: DurableObjectState, env: Env, tools?: InProcessTools) {
    super(ctx, env, tools);
    this.frames = sessionFrames(
      this,
      this.hub,
      () => this.channels,
      () => this.store.lastSequence,
    );
  }

  /** Runs the session operation `name` (declared in src/protocol/operations/) for a session that exists. */
  async call<N extends OpName>(name: N, input: OpInput<N>): Promise<Result<OpResult<N>>> {
    const operations: Dispatch = this.parts.operations;
    return toResult(() => this.existing(() => operations[name](input)));
  }

  // ---- RPCs that are no operation of the API ----

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
        resource_id: input.resource_id ?? null,
      };
      this.session = row;
      const pinned = input.agent_version;
      const payload = {
        agent: input.agent.name,
        ...(pinned ? { version: pinned.version, ...(pinned.label ? { label: pinned.label } : {}) } : {}),
        model: input.agent.model,
        policy: input.policy,
        metadata: input.metadata,
        owner: row.owner,
      };
      const drafts: EventDraft[] = [{ type: "session.created", payload: row.resource_id ? { ...payload, resource_id: row.resource_id } : payload }];
      const { fork } = input;
      if (fork) drafts.unshift({ type: "session.forked", payload: { from_session: fork.from_session, at_sequence: fork.at_sequence } });
      const paused = fork?.paused_json ? pausedTurn(JSON.parse(fork.paused_json) as PausedCut, input.agent, row.created_at) : null;
      if (paused) drafts.push(...paused.drafts);
      try {
        this.commit(drafts, () => {
          this.store.insertSession(row);
          this.fileLedger().created(fork?.files ?? []);
          if (fork) this.store.appendHistory("fork", JSON.parse(fork.messages_json) as ModelMessage[]);
          if (paused) this.store.saveTurnState(paused.state);
          if (input.replay) this.parts.runner.replays.save(input.replay);
        });
        if (paused || fork?.files.length) this.armAlarm(); // the approvals' deadlines, the copying of the source's files
      } catch (err) {
        this.session = null;
        throw err;
      }
      // The agent's own subscriptions, each from the start of the log (its URLs were checked with the config).
      for (const spec of input.agent.subscriptions ?? []) this.parts.subscriptions.create({ ...spec, after: 0 });
      return { session_id: row.session_id, thread_id: row.thread_id };
    });
  }

  /**
   * Who owns the session, which agent runs it now and which agent it was opened with (what an agent-bound
   * token is checked against: a handoff changes `agent`, not `opened_agent`).
   */
  async access(): Promise<Result<{ access: { owner: string | null; agent: string; opened_agent: string } }>> {
    return toResult(() => this.existing(() => ({ access: { owner: this.row().owner, agent: this.agent().name, opened_agent: this.openedAgent() } })));
  }

  /** An operation of the session's file ledger (file-ledger.ts), for the file, fork and export routes. */
  async fileOp<K extends FileOp>(op: K, ...args: Parameters<FileLedger[K]>): Promise<Result<Awaited<ReturnType<FileLedger[K]>>>> {
    return toResult<Awaited<ReturnType<FileLedger[K]>>>(() =>
      this.existing(() => {
        const ledger = this.fileLedger();
        return (ledger[op] as (...a: Parameters<FileLedger[K]>) => Promise<Awaited<ReturnType<FileLedger[K]>>>).apply(ledger, args);
      }),
    );
  }

  /** A2A push notification configs of this session's tasks (a2a-push.ts), for the A2A route. */
  async pushConfig<K extends "create" | "get" | "list" | "delete">(
    op: K,
    ...args: Parameters<A2aPushConfigs[K]>
  ): Promise<Result<ReturnType<A2aPushConfigs[K]>>> {
    return toResult(() => this.existing(() => (this.parts.pushConfigs[op] as (...a: unknown[]) => ReturnType<A2aPushConfigs[K]>)(...args)));
  }

  /** Ends one turn, whether it runs or waits in the queue; a turn that already ended is left alone. */
  async cancelTurn(turnId: string, reason: string): Promise<Result<{ cancelled: boolean }>> {
    return toResult(() =>
      this.existing(() => {
        const status = this.store.turn(turnId)?.status;
        if (status === "running") return { cancelled: this.parts.runner.interrupt(reason).interrupted };
        if (status !== "queued") return { cancelled: false };
        this.parts.queue.remove(turnId, reason);
        return { cancelled: true };
      }),
    );
  }

  /** A fork or replay of this session is about to be created: it is erased with this session. */
  async addDerived(sessionId: string, kind: DerivedKind): Promise<Result<null>> {
    return toResult(() =>
      this.existing(() => {
        this.parts.derived.add(sessionId, kind, Date.now());
        return null;
      }),
    );
  }

  /**
   * Erases everything the session owns (DELETE /v1/sessions/:sid); true when there was something to erase.
   * `derived`: its forks and replays, for the caller to erase in turn (each erase is one call, however deep).
   * `unused`: only a session no turn was ever submitted to and none is being submitted to (one opened for a first
   * message that was refused, which another message may have reached meanwhile).
   */
  async erase(unused = false): Promise<Result<{ erased: boolean; derived: string[] }>> {
    return toResult(async () => {
      if (!this.session || (unused && (this.store.hasTurns() || this.parts.queue.submitting > 0))) return { erased: false, derived: [] };
      const derived = this.parts.derived.ids();
      await this.eraseNow("the session was erased");
      return { erased: true, derived };
    });
  }

  /**
   * Submits `input` (idempotent by `key`) and resolves when that turn ends: the way an orchestration step
   * runs this session. A turn that already ended answers at once from the log.
   */
  async runToEnd(input: string, key: string, by: string | null): Promise<Result<StepOutcome>> {
    return toResult(() =>
      this.existing(() => this.parts.runner.follow(this.parts.queue.submit({ input, idempotency_key: key, ...(by === null ? {} : { by }) }).turn_id)),
    );
  }

  /** Resolves when turn `turnId` ends (at once if it has): how an eval run waits for its case's turn, again after a restart. */
  async followTurn(turnId: string): Promise<Result<StepOutcome>> {
    return toResult(() => this.existing(() => this.parts.runner.follow(turnId)));
  }

  /** WebSocket upgrades, SSE streams, the chat routes' streams, the Responses and A2A reads (they need a Response, so they come through fetch). */
  override async fetch(request: Request): Promise<Response> {
    const path = new URL(request.url).pathname;
    const result = await toResult(() => {
      if (path === CHAT_TURN_PATH) return this.chatTurn(request);
      return this.existing(() => {
        if (path === CHAT_STREAM_PATH) return this.chatStream(request);
        if (path === RESPONSES_PATH) return this.responses(request);
        if (path === A2A_PATH) return this.a2a(request);
        return openStream(request, this.store, this.channels, this.hub);
      });
    });
    if (result.ok) return result.value;
    return Response.json({ error: result.error }, { status: new ApiError(result.error.code, "").status });
  }

  /**
   * POST /v1/chat's turn in one call: the session opened first when `create` says how and it does not exist
   * yet, a token's reach checked, the turn submitted, and its UI message stream answered.
   */
  private async chatTurn(request: Request): Promise<Response> {
    const { create, reach, by, body } = (await request.json()) as ChatTurnRequest;
    if (create && !this.session) unwrap(await this.create(create));
    return this.existing(async () => {
      const row = this.row();
      if (reach) checkTokenReach(reach, { session_id: row.session_id, owner: row.owner, opened_agent: this.openedAgent() });
      const { turn_id } = unwrap(await this.call("submitTurn", { params: { sid: row.session_id }, body, by, via: "chat" }));
      return this.chatStream(request, turn_id);
    });
  }

  /** The UI message stream of a turn (for the AI SDK chat routes: `turnId`, or the URL's `turn`), answering the approvals `decided`. */
  private chatStream(request: Request, turnId = new URL(request.url).searchParams.get("turn") ?? ""): Promise<Response> {
    const url = new URL(request.url);
    const decided = url.searchParams.getAll("decided");
    return chatStream({
      turnId,
      after: turnCursor(this.store, turnId),
      metadata: { session_id: this.row().session_id },
      decided: decided.length > 0 ? new Set(decided) : undefined,
      openEvents: this.openEvents,
      stillWaiting: (actionIds, sequence) => this.stillWaiting(turnId, actionIds, sequence),
      keepaliveMs: keepaliveMs(this.env),
      expiresAt: tokenExpiry(request),
      signal: request.signal,
    });
  }

  /** A response of the Open Responses routes (src/routes/responses.ts): its object, input items or stream. */
  private responses(request: Request): Promise<Response> {
    return serveResponses(request, {
      store: this.store,
      model: this.openedAgent(),
      openEvents: this.openEvents,
      stillWaiting: (turnId, actionIds, sequence) => this.stillWaiting(turnId, actionIds, sequence),
      keepaliveMs: keepaliveMs(this.env),
      expiresAt: tokenExpiry(request),
    });
  }

  /** A task of the A2A routes (src/routes/a2a.ts): its object now, once it settles, or its stream. */
  private a2a(request: Request): Promise<Response> {
    return serveA2a(request, {
      store: this.store,
      openEvents: this.openEvents,
      stillWaiting: (turnId, actionIds, sequence) => this.stillWaiting(turnId, actionIds, sequence),
      keepaliveMs: keepaliveMs(this.env),
      expiresAt: tokenExpiry(request),
    });
  }

  private readonly openEvents = (after: number, signal: AbortSignal) => this.existing(() => this.hub.openSse(after, null, signal));

  /** Whether the turn still waits for all of `actionIds` and nothing follows `sequence` in the log yet. */
  private async stillWaiting(turnId: string, actionIds: string[], sequence: number): Promise<boolean> {
    const thread = unwrap(await this.call("getThread", { params: { sid: this.row().session_id }, by: "" }));
    const pending = new Set(thread.pending_actions.map((a) => a.action_id));
    return thread.active_turn_id === turnId && thread.last_sequence <= sequence && actionIds.every((id) => pending.has(id));
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
