// A typed client for the runtime's HTTP API (README "API") and its event channel: an async iterator over a
// session's events that survives dropped connections without losing or repeating an event.
import type { RuntimeEvent } from "../protocol/events";
import { followTurn } from "../protocol/turn-outcome";
import { type ResponseLike, RuntimeError } from "./errors";
import { abortError, Connection, openSocket, type WebSocketConstructorLike, type WebSocketFactory } from "./socket";
import type {
  ActionDecisionRequest,
  ActionResolved,
  AgentConfig,
  AgentPutBody,
  Artifact,
  CreateSessionBody,
  Decision,
  EventsPage,
  ExecutionTree,
  InjectResult,
  InterruptResult,
  QueueResult,
  SessionCreated,
  SessionSnapshot,
  SubmitTurnRequest,
  TerminalEvent,
  ThreadView,
  ToolInventory,
  TurnSubmitted,
} from "./types";

/** The part of `fetch` the client uses (the global fetch, or workerd's `SELF.fetch` in tests). */
export type FetchLike = (
  url: string,
  init?: { method?: string; headers?: Record<string, string>; body?: string; signal?: AbortSignal },
) => Promise<ResponseLike>;

export interface BackoffOptions {
  /** First retry delay before jitter (default 250 ms). */
  initialMs?: number;
  /** Ceiling of the delay (default 15 s). */
  maxMs?: number;
  /** Growth per failed attempt (default 2). */
  factor?: number;
}

export interface RuntimeClientOptions {
  /** The deployment, e.g. `https://agent-runtime.example.workers.dev` or `http://127.0.0.1:8787`. */
  url: string;
  /** An API key (sent as `Authorization: Bearer`, and as `access_token` on the WebSocket URL). */
  key: string;
  /** Defaults to the global fetch. */
  fetch?: FetchLike;
  /** A WebSocket constructor (default: the global `WebSocket`) or a factory `(url) => socket`. */
  WebSocket?: WebSocketConstructorLike | WebSocketFactory;
  /** Reconnect delays of `events()`. */
  backoff?: BackoffOptions;
}

/** What `events()` reports about its connection, for logs and progress displays. */
export type StreamStatus =
  | { type: "connecting"; after: number; attempt: number }
  | { type: "open"; after: number }
  | { type: "closed"; code: number; reason: string; last: number }
  | { type: "retry"; delayMs: number; attempt: number; error?: RuntimeError | Error }
  | { type: "gap"; expected: number; received: number }
  | { type: "repaired"; from: number; to: number }
  | { type: "duplicate"; sequence: number }
  | { type: "stale"; last: number };

export interface EventsOptions {
  /** Yield events with `sequence > after`. Default 0, or with `channel` the channel's stored cursor. */
  after?: number;
  /** A named channel (`^[A-Za-z0-9_.:-]{1,128}$`): the client acks what it has handed over, so the server keeps the cursor. */
  channel?: string;
  /** Ends the iteration (without an error) and closes the socket. */
  signal?: AbortSignal;
  /** Overrides the client's reconnect delays. */
  backoff?: BackoffOptions;
  /** Give up after this many consecutive failed connection attempts (default: never). */
  maxAttempts?: number;
  /**
   * With no frame for this long, the client asks `GET .../events` whether it is missing something; if the log
   * has moved on past what the socket delivered, the socket is taken as dead and replaced. Default 30 s; 0 disables.
   */
  staleAfterMs?: number;
  onStatus?: (status: StreamStatus) => void;
}

/** `"approve"`, `"reject"`, a decision with a reason, or nothing (leave the action pending). */
export type ApprovalAnswer = Decision | ActionDecisionRequest | null | undefined | void;

export interface SubmitAndWaitOptions {
  idempotency_key?: string;
  /** Every event of this turn, in order (sub-agent events included), before its handling here. */
  onEvent?: (event: RuntimeEvent) => void | Promise<void>;
  /** Asked for each `action.required` of the turn; its answer is sent with `respondAction`. */
  onApproval?: (event: RuntimeEvent) => ApprovalAnswer | Promise<ApprovalAnswer>;
  /** Rejects the wait with the signal's reason (the turn goes on; interrupt it separately). */
  signal?: AbortSignal;
  /** Passed to the underlying `events()`. */
  onStatus?: (status: StreamStatus) => void;
}

/** With a channel, ack at least every this many events (the server closes channel sockets lagging WS_MAX_UNACKED_EVENTS, default 10000). */
const ACK_EVERY = 50;
const OPEN_TIMEOUT_MS = 15_000;

const enc = encodeURIComponent;

export class RuntimeClient {
  readonly baseUrl: string;
  private readonly key: string;
  private readonly fetchImpl: FetchLike;
  private readonly wsImpl: WebSocketConstructorLike | WebSocketFactory | undefined;
  private readonly backoff: Required<BackoffOptions>;

  constructor(options: RuntimeClientOptions) {
    if (!options.url) throw new TypeError("RuntimeClient: url is required");
    if (!options.key) throw new TypeError("RuntimeClient: key is required");
    this.baseUrl = options.url.replace(/\/+$/, "");
    this.key = options.key;
    const globalFetch = (globalThis as { fetch?: FetchLike }).fetch;
    const f = options.fetch ?? (globalFetch ? globalFetch.bind(globalThis) : undefined);
    if (!f) throw new TypeError("RuntimeClient: no fetch available; pass options.fetch");
    this.fetchImpl = f;
    this.wsImpl = options.WebSocket ?? (globalThis as { WebSocket?: WebSocketConstructorLike }).WebSocket;
    this.backoff = { initialMs: 250, maxMs: 15_000, factor: 2, ...options.backoff };
  }

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

  getSession(sessionId: string): Promise<SessionSnapshot> {
    return this.json("GET", `/v1/sessions/${enc(sessionId)}`);
  }

  getThread(sessionId: string): Promise<ThreadView> {
    return this.json("GET", `/v1/sessions/${enc(sessionId)}/thread`);
  }

  /** `POST .../turns`: 202 `{turn_id, status}`; it runs after the answer. */
  submitTurn(sessionId: string, input: string | SubmitTurnRequest): Promise<TurnSubmitted> {
    return this.json("POST", `/v1/sessions/${enc(sessionId)}/turns`, typeof input === "string" ? { input } : input);
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

  /**
   * The session's events with `sequence > after`, in order, each exactly once, live for as long as you iterate.
   *
   * A dropped connection is reopened (exponential backoff with jitter) from the last sequence yielded. A frame
   * whose sequence is not last+1 is a gap (the missing events are read from `GET .../events` before anything
   * else is yielded) or a duplicate (dropped). Errors that retrying cannot fix (401, 404, 422 and other 4xx)
   * are thrown; network errors, 5xx, 408 and 429 are retried. With `channel`, every event handed to you is
   * acked once you ask for the next one or stop iterating. `signal` ends the iteration quietly.
   */
  async *events(sessionId: string, options: EventsOptions = {}): AsyncGenerator<RuntimeEvent, void, undefined> {
    const { channel, signal, onStatus } = options;
    const backoff = { ...this.backoff, ...options.backoff };
    const staleAfterMs = options.staleAfterMs ?? 30_000;
    const maxAttempts = options.maxAttempts ?? Number.POSITIVE_INFINITY;
    const ws = this.wsImpl;
    if (!ws) {
      throw new TypeError("RuntimeClient: no WebSocket available; pass options.WebSocket (Node 20: run with --experimental-websocket)");
    }
    if (signal?.aborted) return;

    let last: number;
    if (options.after !== undefined) last = options.after;
    else if (channel) {
      // Resume from the channel's cursor, stated explicitly so the first frame can be checked against it too.
      const snap = await this.getSession(sessionId);
      last = snap.channels.find((c) => c.channel_id === channel)?.acked_sequence ?? 0;
    } else last = 0;
    let acked = last;
    let failures = 0;
    let conn: Connection | null = null;

    const ack = (force: boolean) => {
      if (!channel || !conn || last <= acked) return;
      if (!force && conn.pending > 0 && last - acked < ACK_EVERY) return;
      if (conn.send({ type: "ack", sequence: last })) acked = last;
    };

    try {
      while (!signal?.aborted) {
        // ---- connect ----
        onStatus?.({ type: "connecting", after: last, attempt: failures });
        try {
          conn = new Connection(await openSocket(ws, this.socketUrl(sessionId, last, channel), OPEN_TIMEOUT_MS));
        } catch (err) {
          conn = null;
          // The WebSocket API hides the HTTP status of a refused upgrade; ask over HTTP what is wrong.
          const error = err instanceof RuntimeError ? err : ((await this.probe(sessionId, last, signal)) ?? asError(err));
          if (error instanceof RuntimeError && !error.retryable) throw error;
          if (++failures >= maxAttempts) throw error;
          const delayMs = backoffDelay(backoff, failures - 1);
          onStatus?.({ type: "retry", delayMs, attempt: failures, error });
          await sleep(delayMs, signal);
          continue;
        }
        onStatus?.({ type: "open", after: last });
        const stale = staleAfterMs > 0 ? this.watchStale(sessionId, conn, () => last, staleAfterMs, onStatus) : null;
        let delivered = false;
        let fatal: RuntimeError | null = null;
        try {
          // ---- read ----
          for (;;) {
            let item: Awaited<ReturnType<typeof conn.next>>;
            try {
              item = await conn.next(signal);
            } catch {
              return; // aborted
            }
            if (item.kind === "closed") {
              onStatus?.({ type: "closed", code: item.code, reason: item.reason, last });
              break;
            }
            const e = item.event;
            if (e.sequence <= last) {
              onStatus?.({ type: "duplicate", sequence: e.sequence });
              continue;
            }
            if (e.sequence > last + 1) {
              // A gap: read what is missing from the log before yielding anything newer.
              onStatus?.({ type: "gap", expected: last + 1, received: e.sequence });
              const from = last + 1;
              let missing: RuntimeEvent[];
              try {
                missing = await this.readRange(sessionId, last, e.sequence - 1, signal);
              } catch (err) {
                if (signal?.aborted) return;
                if (err instanceof RuntimeError && !err.retryable) {
                  fatal = err;
                  break;
                }
                break; // reconnect from `last`: the replay fills the gap
              }
              for (const m of missing) {
                last = m.sequence;
                delivered = true;
                yield m;
                ack(false);
              }
              onStatus?.({ type: "repaired", from, to: last });
              if (e.sequence !== last + 1) continue; // (the page already held it, or the log is short: the replay decides)
            }
            last = e.sequence;
            delivered = true;
            yield e;
            ack(false);
          }
        } finally {
          stale?.stop();
          ack(true);
          conn.close();
        }
        if (fatal) throw fatal;
        if (signal?.aborted) return;
        if (delivered) failures = 0;
        failures++;
        if (failures >= maxAttempts) throw new RuntimeError(0, "network_error", `The event stream closed ${failures} times in a row`);
        const delayMs = backoffDelay(backoff, failures - 1);
        onStatus?.({ type: "retry", delayMs, attempt: failures });
        await sleep(delayMs, signal);
      }
    } finally {
      conn?.close();
    }
  }

  /**
   * Submits a turn and waits for its end: returns its terminal event (`turn.completed`, `turn.failed` or
   * `turn.cancelled`). Each `action.required` of the turn goes to `onApproval`, and its answer to `respondAction`.
   */
  async submitAndWait(sessionId: string, input: string, options: SubmitAndWaitOptions = {}): Promise<TerminalEvent> {
    // Watch from the current end of the log, so nothing of the new turn can be missed.
    const { last_sequence } = await this.getThread(sessionId);
    const accepted = await this.submitTurn(sessionId, {
      input,
      ...(options.idempotency_key === undefined ? {} : { idempotency_key: options.idempotency_key }),
    });
    return this.waitForTurn(sessionId, accepted.turn_id, { ...options, after: accepted.duplicate ? 0 : last_sequence });
  }

  /** Follows a turn already submitted until its terminal event, from `after` (default 0: the whole log). */
  async waitForTurn(
    sessionId: string,
    turnId: string,
    options: Omit<SubmitAndWaitOptions, "idempotency_key"> & { after?: number } = {},
  ): Promise<TerminalEvent> {
    const { signal, onEvent, onApproval } = options;
    const inner = new AbortController();
    const relay = () => inner.abort(signal?.reason);
    signal?.addEventListener("abort", relay, { once: true });
    try {
      const events = this.events(sessionId, { after: options.after ?? 0, signal: inner.signal, onStatus: options.onStatus });
      const end = await followTurn(events, turnId, async (e) => {
        await onEvent?.(e);
        if (e.type === "action.required" && onApproval && e.action_id) {
          const answer = await onApproval(e);
          if (signal?.aborted) return inner.abort(signal.reason);
          if (answer) {
            try {
              await this.respondAction(sessionId, e.action_id, answer);
            } catch (err) {
              // 409: decided already (by someone else, the deadline or an interrupt); the log will say how.
              if (!(err instanceof RuntimeError && err.status === 409)) throw err;
            }
          }
        }
      });
      if (end && !signal?.aborted) return end;
      throw signal?.aborted ? abortError(signal) : new RuntimeError(0, "stream_ended", `The event stream ended before turn ${turnId} did`);
    } finally {
      signal?.removeEventListener("abort", relay);
      inner.abort();
    }
  }

  // ---- internals ----

  /** `ws(s)://.../v1/sessions/:sid/ws?after=N&channel=C&access_token=KEY` (browsers cannot send headers). */
  socketUrl(sessionId: string, after: number, channel?: string): string {
    const q = new URLSearchParams({ after: String(after) });
    if (channel) q.set("channel", channel);
    q.set("access_token", this.key);
    return `${this.baseUrl.replace(/^http/i, "ws")}/v1/sessions/${enc(sessionId)}/ws?${q}`;
  }

  /** Events `after < sequence <= upTo`, from the JSON pages, checked to be contiguous. */
  private async readRange(sessionId: string, after: number, upTo: number, signal?: AbortSignal): Promise<RuntimeEvent[]> {
    const out: RuntimeEvent[] = [];
    let cursor = after;
    while (cursor < upTo) {
      const page = await this.eventsPage(sessionId, { after: cursor, limit: Math.min(1000, upTo - cursor), signal });
      const take = page.events.filter((e) => e.sequence <= upTo);
      if (take.length === 0) break;
      for (const e of take) {
        if (e.sequence !== cursor + 1) throw new RuntimeError(0, "log_gap", `The log page skipped from ${cursor} to ${e.sequence}`);
        out.push(e);
        cursor = e.sequence;
      }
    }
    return out;
  }

  /** After a failed upgrade: the HTTP error the same session and cursor give (null when the route is fine or unreachable). */
  private async probe(sessionId: string, after: number, signal?: AbortSignal): Promise<RuntimeError | null> {
    try {
      await this.eventsPage(sessionId, { after, limit: 1, signal });
      return null;
    } catch (err) {
      return err instanceof RuntimeError ? err : null;
    }
  }

  /** Replaces a socket that went quiet while the log moved on (a half-open connection). */
  private watchStale(sessionId: string, conn: Connection, last: () => number, afterMs: number, onStatus?: (s: StreamStatus) => void) {
    let stopped = false;
    let timer: ReturnType<typeof setTimeout>;
    const check = async () => {
      if (stopped) return;
      if (Date.now() - conn.lastFrameAt >= afterMs) {
        const seen = Math.max(conn.lastReceived, last());
        try {
          const page = await this.eventsPage(sessionId, { after: seen, limit: 1 });
          if (!stopped && page.events.length > 0 && Math.max(conn.lastReceived, last()) === seen) {
            onStatus?.({ type: "stale", last: seen });
            conn.close(4000, "stale connection");
            return;
          }
        } catch {
          // the probe failing says nothing about the socket
        }
      }
      if (!stopped) timer = setTimeout(check, afterMs);
    };
    timer = setTimeout(check, afterMs);
    return {
      stop() {
        stopped = true;
        clearTimeout(timer);
      },
    };
  }

  private async request(method: string, path: string, body?: unknown, signal?: AbortSignal): Promise<ResponseLike> {
    const headers: Record<string, string> = { authorization: `Bearer ${this.key}`, accept: "application/json" };
    if (body !== undefined) headers["content-type"] = "application/json";
    let res: ResponseLike;
    try {
      res = await this.fetchImpl(`${this.baseUrl}${path}`, {
        method,
        headers,
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        ...(signal ? { signal } : {}),
      });
    } catch (err) {
      if (signal?.aborted) throw err;
      throw RuntimeError.network(err, `${method} ${path.split("?")[0]}`);
    }
    if (!res.ok) throw await RuntimeError.fromResponse(res);
    return res;
  }

  private async json<T>(method: string, path: string, body?: unknown, signal?: AbortSignal): Promise<T> {
    const res = await this.request(method, path, body, signal);
    const text = await res.text();
    try {
      return JSON.parse(text) as T;
    } catch {
      throw new RuntimeError(res.status, "malformed_response", `${method} ${path.split("?")[0]} answered a body that is not JSON`);
    }
  }
}

/** Exponential backoff with "equal jitter": half the capped delay, plus a random part of the other half. */
export function backoffDelay(b: Required<BackoffOptions>, attempt: number, random: () => number = Math.random): number {
  const cap = Math.min(b.maxMs, b.initialMs * b.factor ** attempt);
  return Math.round(cap / 2 + random() * (cap / 2));
}

function asError(err: unknown): Error {
  return err instanceof Error ? err : new Error(String(err));
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener("abort", done, { once: true });
  });
}
