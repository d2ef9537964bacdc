// Options and callbacks of the client (the HTTP calls, the event stream and submitAndWait).
import type { OnBusy } from "../protocol/busy";
import type { RuntimeEvent } from "../protocol/events";
import type { ResponseLike, RuntimeError } from "./errors";
import type { WebSocketConstructorLike, WebSocketFactory } from "./socket";
import type { ActionDecisionRequest, Decision } from "./types";

/** The part of `fetch` the client uses (the global fetch, or workerd's `SELF.fetch` in tests). */
export type FetchLike = (
  url: string,
  init?: { method?: string; headers?: Record<string, string>; body?: string | Uint8Array | Blob; signal?: AbortSignal },
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
  /** What the turn does if one is already running (docs/guides/busy-sessions.md); inject follows the running turn. */
  on_busy?: OnBusy;
  /** The turn waits this long (ms) for more messages with the same on_busy to join it. */
  debounce_ms?: number;
  /** Every event of this turn, in order (sub-agent events included), before its handling here. */
  onEvent?: (event: RuntimeEvent) => void | Promise<void>;
  /** Asked for each `action.required` of the turn; its answer is sent with `respondAction`. */
  onApproval?: (event: RuntimeEvent) => ApprovalAnswer | Promise<ApprovalAnswer>;
  /** Rejects the wait with the signal's reason (the turn goes on; interrupt it separately). */
  signal?: AbortSignal;
  /** Passed to the underlying `events()`. */
  onStatus?: (status: StreamStatus) => void;
}
