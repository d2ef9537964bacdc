// One SSE subscriber of a session's log. It is written through an IdentityTransformStream: when the client goes
// away a write rejects, which ends the sink quietly (a ReadableStream the runtime pumps would report it as an
// uncaught "Network connection lost" instead, and keep buffering). It sends a keep-alive comment every
// interval, and a stream opened with a browser token ends at the token's expiry.

import { SSE_KEEPALIVE, TOKEN_EXPIRED } from "../runtime/keepalive";
import type { StoredEvent } from "./session-store";

const encoder = new TextEncoder();
/** Bytes a stream may have queued unread before it is ended (the client resumes with Last-Event-ID). */
const MAX_UNREAD_BYTES = 8 * 1024 * 1024;

export interface SseOptions {
  keepaliveMs: number;
  /** When the token that opened the stream expires (ms since the epoch); null for API keys. */
  expiresAt: number | null;
  /** Called once, when the sink ends for any reason. */
  onEnd: (sink: SseSink) => void;
}

export class SseSink {
  readonly response: Response;
  closed = false;
  private readonly writer: WritableStreamDefaultWriter<Uint8Array>;
  /** Bytes written that the client has not read yet. */
  private unread = 0;
  private readonly keepalive: ReturnType<typeof setInterval>;
  private readonly expiry: ReturnType<typeof setTimeout> | null;

  constructor(private readonly o: SseOptions) {
    const { readable, writable } = new IdentityTransformStream();
    this.writer = writable.getWriter();
    this.response = new Response(readable, {
      headers: { "content-type": "text/event-stream", "cache-control": "no-cache", "x-accel-buffering": "no" },
    });
    this.keepalive = setInterval(() => this.write(SSE_KEEPALIVE), o.keepaliveMs);
    this.expiry = o.expiresAt === null ? null : setTimeout(() => this.end(TOKEN_EXPIRED), Math.max(0, o.expiresAt - Date.now()));
  }

  /** The whole batch as one chunk. */
  send(events: StoredEvent[]): void {
    if (this.closed || events.length === 0) return;
    if (this.o.expiresAt !== null && Date.now() >= this.o.expiresAt) {
      this.end(TOKEN_EXPIRED);
      return;
    }
    if (this.unread > MAX_UNREAD_BYTES) {
      // The reader stopped taking events: end the stream rather than buffer without bound.
      this.end({ code: "slow_consumer", message: "The stream fell too far behind; reconnect with Last-Event-ID" });
      return;
    }
    let text = "";
    for (const e of events) text += `id: ${e.sequence}\nevent: ${e.type}\ndata: ${e.body}\n\n`;
    this.write(text);
  }

  /** Ends the stream with an `error` event saying why. */
  end(error: { code: string; message: string }): void {
    if (this.closed) return;
    this.write(`event: error\ndata: ${JSON.stringify({ error })}\n\n`);
    this.writer.close().catch(() => {});
    this.stop();
  }

  private write(text: string): void {
    if (this.closed) return;
    const bytes = encoder.encode(text);
    this.unread += bytes.byteLength;
    this.writer.write(bytes).then(
      () => {
        this.unread -= bytes.byteLength;
      },
      () => this.stop(), // the client went away: normal, nothing to report
    );
  }

  private stop(): void {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.keepalive);
    if (this.expiry) clearTimeout(this.expiry);
    this.o.onEnd(this);
  }
}
