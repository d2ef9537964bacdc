// The WebSocket surface the client needs, and a connection that turns a socket's callbacks into a queue
// the event iterator pulls from. Works with the browser/Node `WebSocket` and with workerd's sockets.
import type { RuntimeEvent } from "../protocol/events";

/** The part of the standard WebSocket the client uses. */
export interface WebSocketLike {
  readonly readyState: number;
  send(data: string): void;
  close(code?: number, reason?: string): void;
  // biome-ignore lint/suspicious/noExplicitAny: browser, Node and workerd sockets pass differently typed events
  addEventListener(type: "open" | "message" | "close" | "error", listener: (ev: any) => void): void;
}

/** A constructor like the global `WebSocket`. */
export type WebSocketConstructorLike = new (url: string) => WebSocketLike;
/** A factory: gets the `ws(s)://.../ws?...` URL and returns a socket (open or opening), or throws. */
export type WebSocketFactory = (url: string) => WebSocketLike | Promise<WebSocketLike>;

export const OPEN = 1;

/** A constructor is told apart from a factory by its prototype having `send` (true of every WebSocket class). */
function isConstructor(impl: WebSocketConstructorLike | WebSocketFactory): impl is WebSocketConstructorLike {
  const proto = (impl as { prototype?: { send?: unknown } }).prototype;
  return !!proto && typeof proto.send === "function";
}

/** Opens a socket and waits until it is open (or failed, or `timeoutMs` passed). */
export async function openSocket(impl: WebSocketConstructorLike | WebSocketFactory, url: string, timeoutMs: number): Promise<WebSocketLike> {
  const ws = isConstructor(impl) ? new impl(url) : await impl(url);
  if (ws.readyState === OPEN) return ws;
  await new Promise<void>((resolve, reject) => {
    let settled = false;
    const settle = (err?: Error) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (err) {
        try {
          ws.close();
        } catch {
          // never opened
        }
        reject(err);
      } else resolve();
    };
    const timer = setTimeout(() => settle(new Error(`WebSocket did not open within ${timeoutMs} ms`)), timeoutMs);
    ws.addEventListener("open", () => settle());
    ws.addEventListener("error", () => settle(new Error("WebSocket connection failed")));
    ws.addEventListener("close", (ev: { code?: number }) => settle(new Error(`WebSocket closed before opening (code ${ev?.code ?? "?"})`)));
  });
  return ws;
}

export type Incoming = { kind: "event"; event: RuntimeEvent } | { kind: "closed"; code: number; reason: string };

/**
 * One socket's frames as a queue. Event envelopes (frames with a numeric `sequence`) are queued; reply
 * frames and anything else are not events and are dropped. After close, nothing more is queued.
 */
export class Connection {
  private readonly queue: Incoming[] = [];
  private wake: (() => void) | null = null;
  private closed = false;
  /** The highest sequence received on this socket (queued or already taken). */
  lastReceived = 0;
  /** Time of the last frame (or of the open). */
  lastFrameAt = Date.now();

  constructor(readonly socket: WebSocketLike) {
    socket.addEventListener("message", (m: { data: unknown }) => {
      if (this.closed) return;
      this.lastFrameAt = Date.now();
      for (const event of parseFrame(m.data)) {
        if (event.sequence > this.lastReceived) this.lastReceived = event.sequence;
        this.push({ kind: "event", event });
      }
    });
    socket.addEventListener("close", (ev: { code?: number; reason?: string }) => this.end(ev?.code ?? 1006, ev?.reason ?? ""));
    socket.addEventListener("error", () => this.end(1006, "socket error"));
  }

  get isOpen(): boolean {
    return !this.closed && this.socket.readyState === OPEN;
  }

  /** Whether frames are waiting. */
  get pending(): number {
    return this.queue.length;
  }

  /** The next frame, waiting for one; `signal` aborts the wait (rejecting). */
  async next(signal?: AbortSignal): Promise<Incoming> {
    for (;;) {
      const item = this.queue.shift();
      if (item) return item;
      if (signal?.aborted) throw abortError(signal);
      await new Promise<void>((resolve) => {
        const done = () => {
          signal?.removeEventListener("abort", done);
          this.wake = null;
          resolve();
        };
        this.wake = done;
        signal?.addEventListener("abort", done, { once: true });
      });
    }
  }

  send(frame: unknown): boolean {
    if (!this.isOpen) return false;
    try {
      this.socket.send(JSON.stringify(frame));
      return true;
    } catch {
      return false;
    }
  }

  /** Closes the socket; queues `closed` so a waiting reader wakes up. */
  close(code = 1000, reason = "client closed"): void {
    if (!this.closed) {
      try {
        this.socket.close(code, reason);
      } catch {
        // already closing
      }
    }
    this.end(code, reason);
  }

  private end(code: number, reason: string): void {
    if (this.closed) return;
    this.closed = true;
    this.push({ kind: "closed", code, reason });
  }

  private push(item: Incoming): void {
    this.queue.push(item);
    this.wake?.();
  }
}

/** The events of a frame: one envelope, or an array of them (`frames=batch`); none for a reply, a ping or junk. */
function parseFrame(data: unknown): RuntimeEvent[] {
  let text: string;
  if (typeof data === "string") text = data;
  else if (data instanceof ArrayBuffer || ArrayBuffer.isView(data)) text = new TextDecoder().decode(data);
  else return [];
  let frame: unknown;
  try {
    frame = JSON.parse(text);
  } catch {
    return [];
  }
  return (Array.isArray(frame) ? frame : [frame]).filter(isEvent);
}

function isEvent(frame: unknown): frame is RuntimeEvent {
  if (!frame || typeof frame !== "object") return false;
  const f = frame as { type?: unknown; sequence?: unknown };
  return f.type !== "reply" && typeof f.sequence === "number" && typeof f.type === "string";
}

export function abortError(signal: AbortSignal): unknown {
  return signal.reason ?? new DOMException("The operation was aborted", "AbortError");
}
