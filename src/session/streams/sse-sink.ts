// One SSE subscriber of a session's log. Events reach it from other requests' contexts (the turn's, an
// RPC's), and workerd reports a write from another request's context to a client that went away as an
// uncaught "Network connection lost", whatever catches it. So nothing but the stream's own request writes to
// the client: the others queue text and ring a doorbell (a stream this object reads itself, which never
// fails), and a loop in the stream's request writes what is queued. A write to a client that went away then
// rejects here and ends the sink quietly. A client that cancels the stream ends the sink at once, through the
// request's signal: workerd does not error the writer of a cancelled response until something is written to
// it, so without the signal each cancelled stream stayed in the fan-out, with its timers, until the next
// keep-alive. The sink sends a keep-alive comment every interval, and a stream opened with a browser token
// ends at the token's expiry.

import { SSE_KEEPALIVE, TOKEN_EXPIRED } from "../keepalive";
import type { StoredEvent } from "../store/session-store";

const encoder = new TextEncoder();
const RING = new Uint8Array(1);
/** Text a stream may have queued unread before it is ended (the client resumes with Last-Event-ID). */
const MAX_UNREAD = 8 * 1024 * 1024;

export interface SseOptions {
  keepaliveMs: number;
  /** When the token that opened the stream expires (ms since the epoch); null for API keys. */
  expiresAt: number | null;
  /** The opening request's signal: it aborts when the client cancels the stream (enable_request_signal). */
  signal: AbortSignal;
  /** Called once, when the sink ends for any reason. */
  onEnd: (sink: SseSink) => void;
}

export class SseSink {
  readonly response: Response;
  closed = false;
  private readonly client: WritableStreamDefaultWriter<Uint8Array>;
  private readonly bell: WritableStreamDefaultWriter<Uint8Array>;
  /** Text queued for the next write, and whether the stream ends after it. */
  private queued = "";
  private ending = false;
  /** Characters queued or written that the client has not read yet. */
  private unread = 0;
  private readonly keepalive: ReturnType<typeof setInterval>;
  private readonly expiry: ReturnType<typeof setTimeout> | null;

  /** Runs in the request that opened the stream: its timers and its write loop belong to that request. */
  constructor(private readonly o: SseOptions) {
    const out = new IdentityTransformStream();
    this.client = out.writable.getWriter();
    this.response = new Response(out.readable, {
      headers: { "content-type": "text/event-stream", "cache-control": "no-cache", "x-accel-buffering": "no" },
    });
    const bell = new IdentityTransformStream();
    this.bell = bell.writable.getWriter();
    void this.writeLoop(bell.readable.getReader());
    this.keepalive = setInterval(() => this.queue(SSE_KEEPALIVE), o.keepaliveMs);
    this.expiry = o.expiresAt === null ? null : setTimeout(() => this.end(TOKEN_EXPIRED), Math.max(0, o.expiresAt - Date.now()));
    if (o.signal.aborted) this.cancelled();
    else o.signal.addEventListener("abort", () => this.cancelled(), { once: true });
  }

  /** The whole batch as one chunk. */
  send(events: StoredEvent[]): void {
    if (this.closed || events.length === 0) return;
    if (this.o.expiresAt !== null && Date.now() >= this.o.expiresAt) {
      this.end(TOKEN_EXPIRED);
      return;
    }
    if (this.unread > MAX_UNREAD) {
      // The reader stopped taking events: end the stream rather than buffer without bound.
      this.end({ code: "slow_consumer", message: "The stream fell too far behind; reconnect with Last-Event-ID" });
      return;
    }
    let text = "";
    for (const e of events) text += `id: ${e.sequence}\nevent: ${e.type}\ndata: ${e.body}\n\n`;
    this.queue(text);
  }

  /** Ends the stream with an `error` event saying why. */
  end(error: { code: string; message: string }): void {
    this.queue(`event: error\ndata: ${JSON.stringify({ error })}\n\n`);
    this.ending = true;
  }

  private queue(text: string): void {
    if (this.closed || this.ending) return;
    const ring = this.queued === "";
    this.queued += text;
    this.unread += text.length;
    if (ring) this.bell.write(RING).catch(() => {});
  }

  /** Writes what is queued, one write at a time (what queues meanwhile goes out together in the next). */
  private async writeLoop(bell: ReadableStreamDefaultReader<Uint8Array>): Promise<void> {
    while (!(await bell.read()).done && !this.closed) {
      const text = this.queued;
      this.queued = "";
      try {
        if (text !== "") await this.client.write(encoder.encode(text));
        this.unread -= text.length;
        if (this.ending) await this.client.close();
      } catch {
        break; // the client went away: normal, nothing to report
      }
      if (this.ending) break;
    }
    this.stop();
  }

  /** The client went away: nothing more is written, and a write under way is abandoned. */
  private cancelled(): void {
    this.stop();
    this.client.abort().catch(() => {});
  }

  private stop(): void {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.keepalive);
    if (this.expiry) clearTimeout(this.expiry);
    this.bell.close().catch(() => {}); // ends the write loop
    this.o.onEnd(this);
  }
}
