// A typed client for the runtime's HTTP API (docs/reference/api.md, GET /openapi.json) and its event channel: an async iterator over a
// session's events that survives dropped connections without losing or repeating an event.
import type { RuntimeEvent } from "../protocol/events";
import { followTurn } from "../views/turn-outcome";
import type { BackoffOptions, EventsOptions, StreamStatus, SubmitAndWaitOptions } from "./client-options";
import { RuntimeError } from "./errors";
import { HttpApi } from "./http-api";
import { abortError, Connection, openSocket } from "./socket";
import type { TerminalEvent } from "./types";

export type { ApprovalAnswer, BackoffOptions, EventsOptions, FetchLike, RuntimeClientOptions, StreamStatus, SubmitAndWaitOptions } from "./client-options";

/** With a channel, ack at least every this many events (the server closes channel sockets lagging WS_MAX_UNACKED_EVENTS, default 10000). */
const ACK_EVERY = 50;
const OPEN_TIMEOUT_MS = 15_000;

export class RuntimeClient extends HttpApi {
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
    const ws = this.requireWebSocket();
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
    // Checked before anything is submitted: a turn nobody can follow (or approve) must not start.
    this.requireWebSocket();
    // Watch from the current end of the log, so nothing of the new turn can be missed.
    const { last_sequence } = await this.getThread(sessionId);
    const { idempotency_key, on_busy, debounce_ms } = options;
    const accepted = await this.submitTurn(sessionId, {
      input,
      ...(idempotency_key === undefined ? {} : { idempotency_key }),
      ...(on_busy === undefined ? {} : { on_busy }),
      ...(debounce_ms === undefined ? {} : { debounce_ms }),
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

  private requireWebSocket() {
    if (!this.wsImpl) {
      throw new TypeError("RuntimeClient: no WebSocket available; pass options.WebSocket (Node 20: run with --experimental-websocket)");
    }
    return this.wsImpl;
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
