// The runtime's HTTP API (docs/reference/api.md, GET /openapi.json) as typed calls: agents, sessions, turns, approvals, queue, log pages,
// trees, tools, artifacts and files. RuntimeClient (client.ts) adds the resuming event stream on top;
// http-transport.ts sends the requests.
import type { RuntimeEvent } from "../protocol/events";
import type { ResponseLike } from "./errors";
import { enc, HttpTransport, RawBody } from "./http-transport";
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
  TurnRegenerated,
  TurnSubmitted,
  UsageReport,
  WorkingMemory,
} from "./types";

const agentQuery = (agent: string | undefined) => (agent === undefined ? "" : `?agent=${enc(agent)}`);

export class HttpApi extends HttpTransport {
  // ---- agents ----

  /** `PUT /v1/agents/:name`: create or replace; answers the stored config with defaults filled in. */
  putAgent(name: string, config: AgentPutBody): Promise<AgentConfig> {
    return this.json("PUT", `/v1/agents/${enc(name)}`, config);
  }

  getAgent(name: string): Promise<AgentConfig> {
    return this.json("GET", `/v1/agents/${enc(name)}`);
  }

  async listAgents(): Promise<AgentConfig[]> {
    return (await this.json<{ agents: AgentConfig[] }>("GET", "/v1/agents")).agents;
  }

  deleteAgent(name: string): Promise<{ deleted: boolean; name: string }> {
    return this.json("DELETE", `/v1/agents/${enc(name)}`);
  }

  // ---- sessions ----

  createSession(body: CreateSessionBody): Promise<SessionCreated> {
    return this.json("POST", "/v1/sessions", body);
  }

  /** A page of the session index, newest first (pass `next_cursor` back as `cursor`). */
  listSessions(filters: SessionFilters = {}): Promise<SessionPage> {
    const query = new URLSearchParams();
    for (const [k, v] of Object.entries(filters)) {
      if (k === "metadata") for (const [mk, mv] of Object.entries(v as Record<string, string>)) query.set(`metadata.${mk}`, mv);
      else if (v !== undefined) query.set(k, String(v));
    }
    return this.json("GET", `/v1/sessions?${query}`);
  }

  /** Erases the session, everything it owns and its forks and replays (idempotent); `left`: what could not be erased. */
  async eraseSession(sessionId: string): Promise<ErasureLeft> {
    return erasure(await this.request("DELETE", `/v1/sessions/${enc(sessionId)}`));
  }

  // ---- resources (memory across sessions) ----

  /** `GET /v1/resources/:rid/memory`; `agent` applies that agent's `memory.working` (scope, template). */
  getMemory(resourceId: string, agent?: string): Promise<WorkingMemory> {
    return this.json("GET", `/v1/resources/${enc(resourceId)}/memory${agentQuery(agent)}`);
  }

  /** `PUT /v1/resources/:rid/memory`: replaces the document (422 when it breaks the agent's schema). */
  putMemory(resourceId: string, document: Record<string, unknown>, agent?: string): Promise<WorkingMemory> {
    return this.json("PUT", `/v1/resources/${enc(resourceId)}/memory${agentQuery(agent)}`, { document });
  }

  /** `PATCH /v1/resources/:rid/memory`: applies a JSON merge patch. */
  patchMemory(resourceId: string, patch: Record<string, unknown>, agent?: string): Promise<WorkingMemory> {
    return this.json("PATCH", `/v1/resources/${enc(resourceId)}/memory${agentQuery(agent)}`, patch);
  }

  /** `GET /v1/resources/:rid/memory/search`: the resource's earlier turns matching the words of `q`. */
  searchMemory(resourceId: string, q: string, limit?: number): Promise<RecallSearch> {
    const params = new URLSearchParams({ q, ...(limit === undefined ? {} : { limit: String(limit) }) });
    return this.json("GET", `/v1/resources/${enc(resourceId)}/memory/search?${params}`);
  }

  /** `DELETE /v1/resources/:rid`: erases the resource's memory, and with `sessions` its sessions too; `left`: what could not be erased. */
  async eraseResource(resourceId: string, opts: { sessions?: boolean } = {}): Promise<ErasureLeft> {
    return erasure(await this.request("DELETE", `/v1/resources/${enc(resourceId)}${opts.sessions ? "?sessions=true" : ""}`));
  }

  usage(query: { from?: string; to?: string; group_by?: "agent" | "owner" | "day"; agent?: string; owner?: string } = {}): Promise<UsageReport> {
    const params = new URLSearchParams(Object.entries(query).filter((e): e is [string, string] => e[1] !== undefined));
    return this.json("GET", `/v1/usage?${params}`);
  }

  /** `POST /v1/sessions/:sid/fork`: a new session holding this one's conversation as of `at_sequence`. */
  forkSession(sessionId: string, body: ForkSessionBody): Promise<SessionForked> {
    return this.json("POST", `/v1/sessions/${enc(sessionId)}/fork`, body);
  }

  /** `POST /v1/sessions/:sid/turns/:turn_id/replay`: the recorded turn runs again in a new session (`exec_id`). */
  replayTurn(sessionId: string, turnId: string, body: ReplayTurnBody = {}): Promise<ReplayStarted> {
    return this.json("POST", `/v1/sessions/${enc(sessionId)}/turns/${enc(turnId)}/replay`, body);
  }

  /** `GET /v1/replays/:exec_id`: the comparison, once the replay has ended (`status: "completed"`). */
  getReplay(execId: string): Promise<Replay> {
    return this.json("GET", `/v1/replays/${enc(execId)}`);
  }

  getSession(sessionId: string): Promise<SessionSnapshot> {
    return this.json("GET", `/v1/sessions/${enc(sessionId)}`);
  }

  getThread(sessionId: string): Promise<ThreadView> {
    return this.json("GET", `/v1/sessions/${enc(sessionId)}/thread`);
  }

  /**
   * `POST .../turns`: 202 `{turn_id, status}`; it runs after the answer. The input is text, parts (text and
   * files: `{type: "file", file_id}` of an upload, or `data` in base64 with `media_type`), or the whole body.
   */
  submitTurn(sessionId: string, input: string | InputPart[] | SubmitTurnRequest): Promise<TurnSubmitted> {
    return this.json("POST", `/v1/sessions/${enc(sessionId)}/turns`, typeof input === "string" || Array.isArray(input) ? { input } : input);
  }

  /**
   * `POST .../turns/:turn_id/regenerate`: the session's last turn (running or ended) is rolled back and a new
   * turn with its input and files starts; 409 when `turnId` is not the last turn.
   */
  regenerate(sessionId: string, turnId: string, options: { idempotency_key?: string } = {}): Promise<TurnRegenerated> {
    return this.json("POST", `/v1/sessions/${enc(sessionId)}/turns/${enc(turnId)}/regenerate`, options);
  }

  // ---- files ----

  /**
   * `POST .../files`: stores the bytes as a session file. The media type is `options.mediaType`, else the
   * Blob's own type; the runtime refuses one off its allowlist (415), too large (413) or unlike its bytes (422).
   */
  uploadFile(sessionId: string, data: Blob | Uint8Array, options: { mediaType?: string; filename?: string } = {}): Promise<FileInfo> {
    const mediaType = options.mediaType ?? (data instanceof Uint8Array ? "" : data.type);
    if (!mediaType) throw new TypeError("uploadFile: pass options.mediaType (the data has no type of its own)");
    const query = options.filename === undefined ? "" : `?filename=${enc(options.filename)}`;
    return this.json("POST", `/v1/sessions/${enc(sessionId)}/files${query}`, new RawBody(data, mediaType));
  }

  /** `GET .../files`: a page of the session's files, oldest first (pass `next_cursor` back as `cursor`). */
  listFiles(sessionId: string, page: { limit?: number; cursor?: string } = {}): Promise<FilePage> {
    const query = new URLSearchParams();
    if (page.limit !== undefined) query.set("limit", String(page.limit));
    if (page.cursor !== undefined) query.set("cursor", page.cursor);
    return this.json("GET", `/v1/sessions/${enc(sessionId)}/files?${query}`);
  }

  /** `GET .../files/:file_id`: the bytes, or with `range` (`{start, end?}`, inclusive) only those (206). */
  async downloadFile(sessionId: string, fileId: string, options: { range?: { start: number; end?: number } } = {}): Promise<DownloadedFile> {
    const { range } = options;
    const headers = range ? { range: `bytes=${range.start}-${range.end ?? ""}` } : undefined;
    const res = await this.request("GET", `/v1/sessions/${enc(sessionId)}/files/${enc(fileId)}`, undefined, undefined, headers);
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
    await this.request("DELETE", `/v1/sessions/${enc(sessionId)}/files/${enc(fileId)}`);
  }

  /** Cancels the running turn (`turn.cancelled`); a no-op when idle. */
  interrupt(sessionId: string, reason?: string): Promise<InterruptResult> {
    return this.json("POST", `/v1/sessions/${enc(sessionId)}/interrupt`, reason === undefined ? {} : { reason });
  }

  /** Adds a user message to the running turn, or starts a new turn when idle. */
  injectMessage(sessionId: string, content: string): Promise<InjectResult> {
    return this.json("POST", `/v1/sessions/${enc(sessionId)}/messages`, { content });
  }

  /** Same as `injectMessage`. */
  inject(sessionId: string, content: string): Promise<InjectResult> {
    return this.injectMessage(sessionId, content);
  }

  /** Approves or rejects a pending tool call (`action.required`). */
  respondAction(sessionId: string, actionId: string, decision: Decision | ActionDecisionRequest, reason?: string): Promise<ActionResolved> {
    const body: ActionDecisionRequest = typeof decision === "string" ? { decision, ...(reason === undefined ? {} : { reason }) } : decision;
    return this.json("POST", `/v1/sessions/${enc(sessionId)}/actions/${enc(actionId)}`, body);
  }

  /** Answers a question the agent asked with ask_user (`action.required` of kind user_input). */
  answer(sessionId: string, actionId: string, response: unknown): Promise<ActionResolved> {
    return this.respondAction(sessionId, actionId, { response });
  }

  removeQueued(sessionId: string, turnId: string): Promise<QueueResult> {
    return this.json("DELETE", `/v1/sessions/${enc(sessionId)}/queue/${enc(turnId)}`);
  }

  promoteQueued(sessionId: string, turnId: string): Promise<QueueResult> {
    return this.json("POST", `/v1/sessions/${enc(sessionId)}/queue/${enc(turnId)}/promote`);
  }

  /** One page of the log: events with `sequence > after` (default 0), at most `limit` (default 100, max 1000). */
  eventsPage(sessionId: string, options: { after?: number; limit?: number; signal?: AbortSignal } = {}): Promise<EventsPage> {
    const q = new URLSearchParams({ after: String(options.after ?? 0) });
    if (options.limit !== undefined) q.set("limit", String(options.limit));
    return this.json("GET", `/v1/sessions/${enc(sessionId)}/events?${q}`, undefined, options.signal);
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
    const q = new URLSearchParams();
    if (options.limit !== undefined) q.set("limit", String(options.limit));
    if (options.before !== undefined) q.set("before", options.before);
    const query = q.toString();
    return this.json("GET", `/v1/sessions/${enc(sessionId)}/messages${query ? `?${query}` : ""}`, undefined, options.signal);
  }

  tree(sessionId: string, turnId: string): Promise<ExecutionTree> {
    return this.json("GET", `/v1/sessions/${enc(sessionId)}/turns/${enc(turnId)}/tree`);
  }

  tools(sessionId: string): Promise<ToolInventory> {
    return this.json("GET", `/v1/sessions/${enc(sessionId)}/tools`);
  }

  async artifact(sessionId: string, artifactId: string): Promise<Artifact> {
    const res = await this.request("GET", `/v1/sessions/${enc(sessionId)}/artifacts/${enc(artifactId)}`);
    const bytes = new Uint8Array(await res.arrayBuffer());
    return { contentType: res.headers.get("content-type") ?? "application/octet-stream", bytes, text: () => new TextDecoder().decode(bytes) };
  }

  // ---- events over the WebSocket ----

  /** `ws(s)://.../v1/sessions/:sid/ws?after=N&channel=C&access_token=KEY` (browsers cannot send headers). */
  socketUrl(sessionId: string, after: number, channel?: string): string {
    const q = new URLSearchParams({ after: String(after) });
    if (channel) q.set("channel", channel);
    q.set("access_token", this.key);
    return `${this.baseUrl.replace(/^http/i, "ws")}/v1/sessions/${enc(sessionId)}/ws?${q}`;
  }
}

/** An erasure's answer: 204 when everything went, else the sessions it left. */
async function erasure(res: ResponseLike): Promise<ErasureLeft> {
  return res.status === 204 ? { left: [] } : (JSON.parse(await res.text()) as ErasureLeft);
}
