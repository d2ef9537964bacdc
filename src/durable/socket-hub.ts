// Delivery of the event log to WebSocket (hibernatable) and SSE subscribers: replay from a cursor, then
// live, with no gap and no duplicate. A subscriber is "replaying" until its replay reaches the head of the
// log; live events skip it meanwhile, because they are already in storage and the replay will read them.
import { CLOSE_CODES } from "../protocol/close-codes";
import type { StoredEvent } from "./session-store";

const REPLAY_PAGE = 256;
const encoder = new TextEncoder();
/** Bytes an SSE stream may have queued unread before it is ended (the client resumes with Last-Event-ID). */
const MAX_SSE_BACKLOG_BYTES = 8 * 1024 * 1024;

export interface SocketAttachment {
  channel: string | null;
  /** Who opened the socket (a hash of its API key), recorded on the decisions it sends. */
  key_hash: string;
  /** What its frames may do (read, submit, interrupt, approve); absent on sockets opened before grants existed: all. */
  grants?: string[];
  /** The channel's last acknowledged sequence, as this socket reported it. */
  acked?: number;
}

interface SseSink {
  controller: ReadableStreamDefaultController<Uint8Array>;
  closed: boolean;
}

type Sink = WebSocket | SseSink;

export class SocketHub {
  private readonly replaying = new Set<Sink>();
  /** Each socket's attachment, so broadcasting reads memory, not storage; refilled after hibernation. */
  private readonly attachments = new WeakMap<WebSocket, SocketAttachment>();
  private readonly sse = new Set<SseSink>();

  constructor(
    private readonly ctx: DurableObjectState,
    private readonly read: (after: number, limit: number) => StoredEvent[],
    /**
     * A channel socket whose acks lag this many events behind the log is closed with the slow_consumer close code:
     * Workers WebSockets do not expose their send buffer, and a channel's acks are the one measure of what
     * its client has taken.
     */
    private readonly maxUnacked: number,
    /** Sockets one session holds at once. */
    private readonly maxSockets: number,
  ) {}

  /** Records a channel socket's ack. */
  acked(ws: WebSocket, sequence: number): void {
    const attachment = this.attachment(ws);
    if ((attachment.acked ?? 0) < sequence) this.attach(ws, { ...attachment, acked: sequence });
  }

  attachment(ws: WebSocket): SocketAttachment {
    let attachment = this.attachments.get(ws);
    if (!attachment) {
      attachment = ws.deserializeAttachment() as SocketAttachment;
      this.attachments.set(ws, attachment);
    }
    return attachment;
  }

  private attach(ws: WebSocket, attachment: SocketAttachment): void {
    ws.serializeAttachment(attachment);
    this.attachments.set(ws, attachment);
  }

  acceptWebSocket(after: number, attachment: SocketAttachment): Response {
    const pair = new WebSocketPair();
    const [client, server] = [pair[0], pair[1]];
    if (this.ctx.getWebSockets().length >= this.maxSockets) {
      // Accepted only to say why: a client sees the close code, which an HTTP error before the upgrade hides.
      server.accept();
      server.close(CLOSE_CODES.too_many_sockets.code, `this session has ${this.maxSockets} sockets open; try again later`);
      return new Response(null, { status: 101, webSocket: client });
    }
    this.ctx.acceptWebSocket(server);
    this.attach(server, { ...attachment, acked: attachment.channel ? after : undefined });
    void this.replay(server, after);
    return new Response(null, { status: 101, webSocket: client });
  }

  openSse(after: number): Response {
    let sink!: SseSink;
    const body = new ReadableStream<Uint8Array>(
      {
        start: (controller) => {
          sink = { controller, closed: false };
          this.sse.add(sink);
        },
        cancel: () => this.dropSse(sink),
      },
      { highWaterMark: 0, size: (chunk) => chunk?.byteLength ?? 0 },
    );
    void this.replay(sink, after);
    return new Response(body, {
      headers: { "content-type": "text/event-stream", "cache-control": "no-cache", "x-accel-buffering": "no" },
    });
  }

  broadcast(events: StoredEvent[]): void {
    if (events.length === 0) return;
    const head = events[events.length - 1]!.sequence;
    for (const ws of this.ctx.getWebSockets()) {
      if (this.replaying.has(ws)) continue;
      const { channel, acked } = this.attachment(ws);
      if (channel && head - (acked ?? 0) > this.maxUnacked) {
        this.forget(ws);
        ws.close(CLOSE_CODES.slow_consumer.code, `slow consumer: more than ${this.maxUnacked} events unacked; reconnect with channel=${channel}`);
        continue;
      }
      this.send(ws, events);
    }
    for (const s of this.sse) {
      if (!this.replaying.has(s)) this.send(s, events);
    }
  }

  forget(ws: WebSocket): void {
    this.replaying.delete(ws);
  }

  private async replay(sink: Sink, after: number): Promise<void> {
    this.replaying.add(sink);
    let cursor = after;
    try {
      for (;;) {
        const page = this.read(cursor, REPLAY_PAGE);
        this.send(sink, page);
        if (page.length < REPLAY_PAGE) return; // at the head now, synchronously: live from here on
        cursor = page[page.length - 1]!.sequence;
        await new Promise((r) => setTimeout(r, 0)); // let the loop and other requests run between pages
      }
    } finally {
      this.replaying.delete(sink);
    }
  }

  /** WebSockets get a frame per event; an SSE stream gets the whole batch as one chunk. */
  private send(sink: Sink, events: StoredEvent[]): void {
    if (!("controller" in sink)) {
      for (const e of events) {
        try {
          sink.send(e.body);
        } catch {
          // a closed peer; webSocketClose cleans it up
        }
      }
      return;
    }
    if (sink.closed || events.length === 0) return;
    try {
      if ((sink.controller.desiredSize ?? 0) < -MAX_SSE_BACKLOG_BYTES) {
        // The reader stopped taking events: end the stream rather than buffer without bound.
        const error = { code: "slow_consumer", message: "The stream fell too far behind; reconnect with Last-Event-ID" };
        sink.controller.enqueue(encoder.encode(`event: error\ndata: ${JSON.stringify({ error })}\n\n`));
        sink.controller.close();
        this.dropSse(sink);
        return;
      }
      let text = "";
      for (const e of events) text += `id: ${e.sequence}\nevent: ${e.type}\ndata: ${e.body}\n\n`;
      sink.controller.enqueue(encoder.encode(text));
    } catch {
      this.dropSse(sink); // the reader went away
    }
  }

  /** Ends every subscriber: sockets with `code`, SSE streams with an `error` event. */
  closeAll(code: number, reason: string): void {
    for (const ws of this.ctx.getWebSockets()) {
      try {
        ws.close(code, reason);
      } catch {
        // already closed
      }
    }
    for (const sink of [...this.sse]) {
      try {
        sink.controller.enqueue(encoder.encode(`event: error\ndata: ${JSON.stringify({ error: { code: "not_found", message: reason } })}\n\n`));
        sink.controller.close();
      } catch {
        // the reader went away
      }
      this.dropSse(sink);
    }
  }

  private dropSse(sink: SseSink): void {
    sink.closed = true;
    this.sse.delete(sink);
    this.replaying.delete(sink);
  }
}
