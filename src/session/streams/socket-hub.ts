// Delivery of the event log to WebSocket (hibernatable) and SSE subscribers: replay from a cursor, then
// live, with no gap and no duplicate. A subscriber is "replaying" until its replay reaches the head of the
// log; live events skip it meanwhile, because they are already in storage and the replay will read them.
// Sockets get a ping frame every keep-alive interval from the session's alarm (only while sockets are open,
// so a hibernated object wakes for it and sleeps again), and one opened with a browser token is closed when
// the token expires.
import { CLOSE_CODES } from "../../protocol/close-codes";
import { PING_FRAME, TOKEN_EXPIRED } from "../keepalive";
import type { StoredEvent } from "../store/session-store";
import { SseSink } from "./sse-sink";

const REPLAY_PAGE = 256;
/** The alarm entry of the sockets' keep-alives and token expiries. */
export const SOCKETS_DUE = "sockets";
/** The tag of a socket accepted only to be closed (over the cap): it is no subscriber. */
const REFUSED = "refused";

export interface SocketAttachment {
  channel: string | null;
  /** Who opened the socket (a hash of its API key), recorded on the decisions it sends. */
  key_hash: string;
  /** What its frames may do (read, submit, interrupt, approve); absent on sockets opened before grants existed: all. */
  grants?: string[];
  /** The channel's last acknowledged sequence, as this socket reported it. */
  acked?: number;
  /** When the browser token that opened the socket expires (ms since the epoch); absent for API keys. */
  expires_at?: number;
  /** The socket asked for `frames=batch`: the events sent together travel as one frame, a JSON array. */
  batch?: boolean;
}

type Sink = WebSocket | SseSink;

export interface HubLimits {
  /**
   * A channel socket whose acks lag this many events behind the log is closed with the slow_consumer close code:
   * Workers WebSockets do not expose their send buffer, and a channel's acks are the one measure of what
   * its client has taken.
   */
  maxUnacked: number;
  /** Sockets one session holds at once. */
  maxSockets: number;
  /** Time between keep-alives (STREAM_KEEPALIVE_MS). */
  keepaliveMs: number;
}

export class SocketHub {
  private readonly replaying = new Set<Sink>();
  /** Each socket's attachment, so broadcasting reads memory, not storage; refilled after hibernation. */
  private readonly attachments = new WeakMap<WebSocket, SocketAttachment>();
  private readonly sse = new Set<SseSink>();

  /**
   * Whether a refused socket may still be open: unknown until first asked in this instance (one may predate a
   * hibernation); false until this instance refuses one. Every commit's broadcast asks, so a session that never
   * refused a socket reads its sockets once a broadcast, not twice.
   */
  private mayHaveRefused: boolean | undefined;

  /** When the sockets' alarm entry is due, as far as this instance knows (null: unknown, or none). */
  private tickAt: number | null = null;

  constructor(
    private readonly ctx: DurableObjectState,
    private readonly read: (after: number, limit: number) => StoredEvent[],
    private readonly limits: HubLimits,
    /** Sets the sockets' alarm entry (SOCKETS_DUE) to `at`. */
    private readonly wakeAt: (at: number) => void,
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
    const { maxSockets, keepaliveMs } = this.limits;
    if (this.served().length >= maxSockets) {
      // Accepted only to say why: a client sees the close code, which an HTTP error before the upgrade hides.
      // Hibernatable like the others: a plain accepted socket's peer closing is reported as an uncaught error.
      this.ctx.acceptWebSocket(server, [REFUSED]);
      this.mayHaveRefused = true;
      server.close(CLOSE_CODES.too_many_sockets.code, `this session has ${maxSockets} sockets open; try again later`);
      return new Response(null, { status: 101, webSocket: client });
    }
    this.ctx.acceptWebSocket(server);
    this.attach(server, { ...attachment, acked: attachment.channel ? after : undefined });
    this.wake(Math.min(Date.now() + keepaliveMs, attachment.expires_at ?? Number.POSITIVE_INFINITY));
    void this.replay(server, after);
    return new Response(null, { status: 101, webSocket: client });
  }

  openSse(after: number, expiresAt: number | null, signal: AbortSignal): Response {
    const sink = new SseSink({ keepaliveMs: this.limits.keepaliveMs, expiresAt, signal, onEnd: (s) => this.dropSse(s) });
    this.sse.add(sink);
    void this.replay(sink, after);
    return sink.response;
  }

  /**
   * Whether a socket's frames are served: not a refused socket's, nor one whose token expired (it is closed
   * now, even when the alarm that closes it has not fired yet, say after hibernation).
   */
  admits(ws: WebSocket): boolean {
    return !this.ctx.getTags(ws).includes(REFUSED) && !this.closeIfExpired(ws, Date.now());
  }

  /** The alarm's part (SOCKETS_DUE): pings every socket, closes those whose token expired, and sets the next. */
  tick(now: number): void {
    this.tickAt = null;
    let next = Number.POSITIVE_INFINITY;
    for (const ws of this.served()) {
      if (this.closeIfExpired(ws, now)) continue;
      trySend(ws, PING_FRAME);
      next = Math.min(next, now + this.limits.keepaliveMs, this.attachment(ws).expires_at ?? next);
    }
    if (next < Number.POSITIVE_INFINITY) this.wake(next);
  }

  broadcast(events: StoredEvent[]): void {
    if (events.length === 0) return;
    const head = events[events.length - 1]!.sequence;
    const now = Date.now();
    const { maxUnacked } = this.limits;
    for (const ws of this.served()) {
      if (this.replaying.has(ws) || this.closeIfExpired(ws, now)) continue;
      const { channel, acked } = this.attachment(ws);
      if (channel && head - (acked ?? 0) > maxUnacked) {
        this.forget(ws);
        ws.close(CLOSE_CODES.slow_consumer.code, `slow consumer: more than ${maxUnacked} events unacked; reconnect with channel=${channel}`);
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

  /**
   * An SSE stream gets the whole batch as one chunk; a WebSocket a frame per event, or with `frames=batch` the
   * batch as one frame (the stored envelopes joined, parsed by no one on the way).
   */
  private send(sink: Sink, events: StoredEvent[]): void {
    if (sink instanceof SseSink) sink.send(events);
    else if (events.length === 0) return;
    else if (this.attachment(sink).batch) trySend(sink, `[${events.map((e) => e.body).join(",")}]`);
    else for (const e of events) trySend(sink, e.body);
  }

  /** Ends every subscriber: sockets with `code`, SSE streams with an `error` event. */
  closeAll(code: number, reason: string): void {
    for (const ws of this.ctx.getWebSockets()) tryClose(ws, code, reason);
    for (const sink of [...this.sse]) sink.end({ code: "not_found", message: reason });
  }

  /** The sockets that subscribe (not those accepted only to be refused). */
  private served(): WebSocket[] {
    const refused = this.mayHaveRefused === false ? [] : this.ctx.getWebSockets(REFUSED);
    this.mayHaveRefused = refused.length > 0;
    const all = this.ctx.getWebSockets();
    return refused.length === 0 ? all : all.filter((ws) => !refused.includes(ws));
  }

  private closeIfExpired(ws: WebSocket, now: number): boolean {
    const expiresAt = this.attachment(ws).expires_at;
    if (expiresAt === undefined || now < expiresAt) return false;
    this.forget(ws);
    tryClose(ws, CLOSE_CODES.token_expired.code, `${TOKEN_EXPIRED.code}: ${TOKEN_EXPIRED.message}`);
    return true;
  }

  /** Moves the sockets' alarm entry earlier when `at` comes first. */
  private wake(at: number): void {
    if (this.tickAt !== null && this.tickAt <= at) return;
    this.tickAt = at;
    this.wakeAt(at);
  }

  private dropSse(sink: SseSink): void {
    this.sse.delete(sink);
    this.replaying.delete(sink);
  }
}

function trySend(ws: WebSocket, frame: string): void {
  try {
    ws.send(frame);
  } catch {
    // a closed peer; webSocketClose cleans it up
  }
}

function tryClose(ws: WebSocket, code: number, reason: string): void {
  try {
    ws.close(code, reason);
  } catch {
    // already closed
  }
}
