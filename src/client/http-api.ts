// The runtime's HTTP API (docs/reference/api.md, GET /openapi.json) as typed calls: agents, sessions, turns, approvals, queue, log pages, trees,
// tools, artifacts and files, each built from its operation's declaration (src/protocol/operations/: the path, the query's names, the
// body's and the answer's types); agent versions and eval runs come from VersionsApi (versions-api.ts). RuntimeClient (client.ts) adds the
// resuming event stream on top; http-transport.ts sends the requests.
import type { RuntimeEvent } from "../protocol/events";
import * as agents from "../protocol/operations/agents";
import * as chat from "../protocol/operations/chat";
import * as files from "../protocol/operations/files";
import * as resources from "../protocol/operations/resources";
import * as sessions from "../protocol/operations/sessions";
import * as streams from "../protocol/operations/streams";
import * as turns from "../protocol/operations/turns";
import * as usage from "../protocol/operations/usage";
import { pathOf, RawBody } from "./operation-request";
import type {
  ActionDecisionRequest,
  ActionResolved,
  AgentConfig,
  AgentPutBody,
  Artifact,
  ChatMessages,
  ChatMessagesQuery,
  CreateSessionBody,
  Decision,
  DownloadedFile,
  ErasureLeft,
  EventsPage,
  ExecutionTree,
  FileInfo,
  FilePage,
  ForkSessionBody,
  InjectResult,
  InputPart,
  InterruptResult,
  QueueResult,
  RecallSearch,
  Replay,
  ReplayStarted,
  ReplayTurnBody,
  SessionCreated,
  SessionFilters,
  SessionForked,
  SessionPage,
  SessionSnapshot,
  SubmitTurnRequest,
  ThreadView,
  ToolInventory,
  TurnContinued,
  TurnRegenerated,
  TurnSubmitted,
  UsageReport,
  WorkingMemory,
} from "./types";
import { VersionsApi } from "./versions-api";

export class HttpApi extends VersionsApi {
  // ---- agents ----

  /** `PUT /v1/agents/:name`: create or replace; answers the stored config with defaults filled in. */
  putAgent(name: string, config: AgentPutBody): Promise<AgentConfig> {
    return this.call(agents.putAgent, { params: { name }, body: config });
  }

  getAgent(name: string): Promise<AgentConfig> {
    return this.call(agents.getAgent, { params: { name } });
  }

  async listAgents(): Promise<AgentConfig[]> {
    return (await this.call(agents.listAgents)).agents;
  }

  deleteAgent(name: string): Promise<{ deleted: boolean; name: string }> {
    return this.call(agents.deleteAgent, { params: { name } });
  }

  // ---- sessions ----

  createSession(body: CreateSessionBody): Promise<SessionCreated> {
    return this.call(sessions.createSession, { body });
  }

  /** A page of the session index, newest first (pass `next_cursor` back as `cursor`). */
  listSessions(filters: SessionFilters = {}): Promise<SessionPage> {
    const { metadata = {}, ...plain } = filters;
    const byKey = Object.fromEntries(Object.entries(metadata).map(([k, v]) => [`metadata.${k}`, v]));
    return this.call(sessions.listSessions, { query: { ...plain, ...byKey } });
  }

  /** Erases the session, everything it owns and its forks and replays (idempotent); `left`: what could not be erased. */
  async eraseSession(sessionId: string): Promise<ErasureLeft> {
    return (await this.call(sessions.eraseSession, { params: { sid: sessionId } })) ?? { left: [] };
  }

  // ---- resources (memory across sessions) ----

  /** `GET /v1/resources/:rid/memory`; `agent` applies that agent's `memory.working` (scope, template). */
  getMemory(resourceId: string, agent?: string): Promise<WorkingMemory> {
    return this.call(resources.getMemory, { params: { rid: resourceId }, query: { agent } });
  }

  /** `PUT /v1/resources/:rid/memory`: replaces the document (422 when it breaks the agent's schema). */
  putMemory(resourceId: string, document: Record<string, unknown>, agent?: string): Promise<WorkingMemory> {
    return this.call(resources.putMemory, { params: { rid: resourceId }, query: { agent }, body: { document } });
  }

  /** `PATCH /v1/resources/:rid/memory`: applies a JSON merge patch. */
  patchMemory(resourceId: string, patch: Record<string, unknown>, agent?: string): Promise<WorkingMemory> {
    return this.call(resources.patchMemory, { params: { rid: resourceId }, query: { agent }, body: patch });
  }

  /** `GET /v1/resources/:rid/memory/search`: the resource's earlier turns matching the words of `q`. */
  searchMemory(resourceId: string, q: string, limit?: number): Promise<RecallSearch> {
    return this.call(resources.searchMemory, { params: { rid: resourceId }, query: { q, limit } });
  }

  /** `DELETE /v1/resources/:rid`: erases the resource's memory, and with `sessions` its sessions too; `left`: what could not be erased. */
  async eraseResource(resourceId: string, opts: { sessions?: boolean } = {}): Promise<ErasureLeft> {
    const query = { sessions: opts.sessions ? "true" : undefined };
    return (await this.call(resources.eraseResource, { params: { rid: resourceId }, query })) ?? { left: [] };
  }

  usage(query: { from?: string; to?: string; group_by?: "agent" | "owner" | "day"; agent?: string; owner?: string } = {}): Promise<UsageReport> {
    return this.call(usage.getUsage, { query });
  }

  /** `POST /v1/sessions/:sid/fork`: a new session holding this one's conversation as of `at_sequence`. */
  forkSession(sessionId: string, body: ForkSessionBody): Promise<SessionForked> {
    return this.call(sessions.forkSession, { params: { sid: sessionId }, body });
  }

  /** `POST /v1/sessions/:sid/turns/:turn_id/replay`: the recorded turn runs again in a new session (`exec_id`). */
  replayTurn(sessionId: string, turnId: string, body: ReplayTurnBody = {}): Promise<ReplayStarted> {
    return this.call(turns.replayTurn, { params: { sid: sessionId, turn_id: turnId }, body });
  }

  /** `GET /v1/replays/:exec_id`: the comparison, once the replay has ended (`status: "completed"`). */
  getReplay(execId: string): Promise<Replay> {
    return this.call(turns.getReplay, { params: { exec_id: execId } });
  }

  getSession(sessionId: string): Promise<SessionSnapshot> {
    // The schema takes any object as `agent`; the runtime answers the active agent's whole config (types.ts).
    return this.call(sessions.getSession, { params: { sid: sessionId } }) as Promise<SessionSnapshot>;
  }

  getThread(sessionId: string): Promise<ThreadView> {
    return this.call(sessions.getThread, { params: { sid: sessionId } });
  }

  /**
   * `POST .../turns`: 202 `{turn_id, status}`; it runs after the answer. The input is text, parts (text and
   * files: `{type: "file", file_id}` of an upload, or `data` in base64 with `media_type`), or the whole body.
   */
  submitTurn(sessionId: string, input: string | InputPart[] | SubmitTurnRequest): Promise<TurnSubmitted> {
    const body = typeof input === "string" || Array.isArray(input) ? { input } : input;
    return this.call(turns.submitTurn, { params: { sid: sessionId }, body });
  }

  /**
   * `POST .../turns/:turn_id/regenerate`: the session's last turn (running or ended) is rolled back and a new
   * turn with its input and files starts; 409 when `turnId` is not the last turn.
   */
  regenerate(sessionId: string, turnId: string, options: { idempotency_key?: string } = {}): Promise<TurnRegenerated> {
    return this.call(turns.regenerateTurn, { params: { sid: sessionId, turn_id: turnId }, body: options });
  }

  // ---- files ----

  /**
   * `POST .../files`: stores the bytes as a session file. The media type is `options.mediaType`, else the
   * Blob's own type; the runtime refuses one off its allowlist (415), too large (413) or unlike its bytes (422).
   */
  uploadFile(sessionId: string, data: Blob | Uint8Array, options: { mediaType?: string; filename?: string } = {}): Promise<FileInfo> {
    const mediaType = options.mediaType ?? (data instanceof Uint8Array ? "" : data.type);
    if (!mediaType) throw new TypeError("uploadFile: pass options.mediaType (the data has no type of its own)");
    const query = { filename: options.filename };
    return this.call(files.uploadFile, { params: { sid: sessionId }, query, body: new RawBody(data, mediaType) });
  }

  /** `GET .../files`: a page of the session's files, oldest first (pass `next_cursor` back as `cursor`). */
  listFiles(sessionId: string, page: { limit?: number; cursor?: string } = {}): Promise<FilePage> {
    return this.call(files.listFiles, { params: { sid: sessionId }, query: { limit: page.limit, cursor: page.cursor } });
  }

  /** `GET .../files/:file_id`: the bytes, or with `range` (`{start, end?}`, inclusive) only those (206). */
  async downloadFile(sessionId: string, fileId: string, options: { range?: { start: number; end?: number } } = {}): Promise<DownloadedFile> {
    const { range } = options;
    const headers = range ? { range: `bytes=${range.start}-${range.end ?? ""}` } : undefined;
    const res = await this.request(files.getFile, { params: { sid: sessionId, file_id: fileId } }, { headers });
    const bytes = new Uint8Array(await res.arrayBuffer());
    return {
      status: res.status,
      contentType: res.headers.get("content-type") ?? "application/octet-stream",
      contentDisposition: res.headers.get("content-disposition"),
      contentRange: res.headers.get("content-range"),
      bytes,
      text: () => new TextDecoder().decode(bytes),
    };
  }

  /** `DELETE .../files/:file_id` (turns that named it keep their reference). */
  async deleteFile(sessionId: string, fileId: string): Promise<void> {
    await this.call(files.deleteFile, { params: { sid: sessionId, file_id: fileId } });
  }

  /** Cancels the running turn (`turn.cancelled`); a no-op when idle. */
  interrupt(sessionId: string, reason?: string): Promise<InterruptResult> {
    return this.call(turns.interrupt, { params: { sid: sessionId }, body: reason === undefined ? {} : { reason } });
  }

  /** Lets a turn a pause quota holds make its waiting call over that quota once (`turn.continued`; admin keys); another quota that holds it pauses it again. */
  continueTurn(sessionId: string, turnId: string, note?: string): Promise<TurnContinued> {
    return this.call(turns.continueTurn, { params: { sid: sessionId, turn_id: turnId }, body: note === undefined ? {} : { note } });
  }

  /** Adds a user message to the running turn, or starts a new turn when idle. */
  injectMessage(sessionId: string, content: string): Promise<InjectResult> {
    return this.call(turns.injectMessage, { params: { sid: sessionId }, body: { content } });
  }

  /** Same as `injectMessage`. */
  inject(sessionId: string, content: string): Promise<InjectResult> {
    return this.injectMessage(sessionId, content);
  }

  /** Approves or rejects a pending tool call (`action.required`). */
  respondAction(sessionId: string, actionId: string, decision: Decision | ActionDecisionRequest, reason?: string): Promise<ActionResolved> {
    const body: ActionDecisionRequest = typeof decision === "string" ? { decision, ...(reason === undefined ? {} : { reason }) } : decision;
    return this.call(turns.resolveAction, { params: { sid: sessionId, action_id: actionId }, body });
  }

  /** Answers a question the agent asked with ask_user (`action.required` of kind user_input). */
  answer(sessionId: string, actionId: string, response: unknown): Promise<ActionResolved> {
    return this.respondAction(sessionId, actionId, { response });
  }

  removeQueued(sessionId: string, turnId: string): Promise<QueueResult> {
    return this.call(turns.removeQueuedTurn, { params: { sid: sessionId, turn_id: turnId } });
  }

  promoteQueued(sessionId: string, turnId: string): Promise<QueueResult> {
    return this.call(turns.promoteQueuedTurn, { params: { sid: sessionId, turn_id: turnId } });
  }

  /** One page of the log: events with `sequence > after` (default 0), at most `limit` (default 100, max 1000). */
  eventsPage(sessionId: string, options: { after?: number; limit?: number; signal?: AbortSignal } = {}): Promise<EventsPage> {
    const query = { after: options.after ?? 0, limit: options.limit };
    // The envelope's schema reads any event; the catalog types each by its `type` (types.ts).
    return this.call(streams.getEvents, { params: { sid: sessionId }, query }, { signal: options.signal }) as Promise<EventsPage>;
  }

  /** The log from `after` to its current end, page by page (no waiting for new events). */
  async *readLog(sessionId: string, options: { after?: number; signal?: AbortSignal } = {}): AsyncGenerator<RuntimeEvent> {
    let after = options.after ?? 0;
    for (;;) {
      const page = await this.eventsPage(sessionId, { after, limit: 1000, signal: options.signal });
      yield* page.events;
      if (!page.has_more || page.next_after <= after) return;
      after = page.next_after;
    }
  }

  /**
   * `GET .../messages`: the conversation as AI SDK UIMessages (useChat's initial messages); with `limit`, the newest
   * `limit` of them, before the message `before` when given (the first message of the page read before).
   */
  chatMessages(sessionId: string, options: ChatMessagesQuery & { signal?: AbortSignal } = {}): Promise<ChatMessages> {
    const query = { limit: options.limit, before: options.before };
    return this.call(chat.getChatMessages, { params: { sid: sessionId }, query }, { signal: options.signal });
  }

  tree(sessionId: string, turnId: string): Promise<ExecutionTree> {
    return this.call(turns.getExecutionTree, { params: { sid: sessionId, turn_id: turnId } });
  }

  tools(sessionId: string): Promise<ToolInventory> {
    return this.call(sessions.getTools, { params: { sid: sessionId } });
  }

  async artifact(sessionId: string, artifactId: string): Promise<Artifact> {
    const res = await this.request(streams.getArtifact, { params: { sid: sessionId, artifact_id: artifactId } });
    const bytes = new Uint8Array(await res.arrayBuffer());
    return { contentType: res.headers.get("content-type") ?? "application/octet-stream", bytes, text: () => new TextDecoder().decode(bytes) };
  }

  // ---- events over the WebSocket ----

  /**
   * `ws(s)://.../v1/sessions/:sid/ws?after=N&channel=C&frames=batch&access_token=KEY` (browsers cannot send
   * headers): the events committed together come as one frame.
   */
  socketUrl(sessionId: string, after: number, channel?: string): string {
    const query = { after, channel: channel || undefined, frames: "batch" as const, access_token: this.key };
    return `${this.baseUrl.replace(/^http/i, "ws")}${pathOf(streams.openWebSocket, { params: { sid: sessionId }, query })}`;
  }
}
