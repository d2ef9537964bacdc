// A small WebSocket client for tests (runs inside workerd): opens /v1/sessions/:sid/ws through SELF,
// records every frame it receives (event envelopes and command replies, separately), and waits for
// conditions by short polling with a deadline instead of fixed sleeps.
import { SELF } from "cloudflare:test";
import { KEY } from "./api";

const BASE = "https://runtime.test";

/** An event envelope as delivered on a channel; fields the tests do not read stay `unknown`. */
export interface EventEnvelope {
  type: string;
  event_id: string;
  sequence: number;
  session_id: string;
  turn_id?: string | null;
  payload: any;
  [field: string]: unknown;
}

/** `{"type":"reply",...}`: the answer to a command frame (not a log event, no sequence). */
export interface ReplyFrame {
  type: "reply";
  request_id: unknown;
  ok: boolean;
  result?: any;
  error?: { code: string; message: string };
}

export const TERMINAL_TYPES = ["turn.completed", "turn.failed", "turn.cancelled"];

/** Polls `probe` until it returns something other than undefined/false/null; throws `what` on timeout. */
export async function until<T>(
  probe: () => T | undefined | null | false | Promise<T | undefined | null | false>,
  what: string,
  timeoutMs = 10_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== null && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

const open = new Set<WsClient>();

export class WsClient {
  /** Event envelopes, in arrival order. */
  readonly events: EventEnvelope[] = [];
  readonly replies: ReplyFrame[] = [];
  /** Keep-alive frames (`{"type":"ping"}`) received. */
  pings = 0;
  /** The number of events each frame that carried events held (a socket opened with `frames=batch` gets arrays). */
  readonly eventFrames: number[] = [];
  /** Frames that were none of these (should stay empty). */
  readonly other: unknown[] = [];
  closed: { code: number; reason: string } | null = null;

  constructor(readonly socket: WebSocket) {
    socket.addEventListener("message", (m) => {
      const text = typeof m.data === "string" ? m.data : new TextDecoder().decode(m.data as ArrayBuffer);
      const parsed = JSON.parse(text) as Record<string, unknown> | EventEnvelope[];
      if (Array.isArray(parsed)) {
        this.events.push(...parsed);
        this.eventFrames.push(parsed.length);
        return;
      }
      const frame = parsed;
      if (typeof frame.sequence === "number") this.eventFrames.push(1);
      if (frame.type === "reply") this.replies.push(frame as unknown as ReplyFrame);
      else if (frame.type === "ping") this.pings += 1;
      else if (typeof frame.sequence === "number") this.events.push(frame as EventEnvelope);
      else this.other.push(frame);
    });
    socket.addEventListener("close", (e) => {
      this.closed = { code: e.code, reason: e.reason };
      open.delete(this);
    });
    socket.accept();
    open.add(this);
  }

  get lastSequence(): number {
    return this.events.at(-1)?.sequence ?? 0;
  }

  send(frame: unknown): void {
    this.socket.send(typeof frame === "string" ? frame : JSON.stringify(frame));
  }

  /** Waits for the first event matching `match` (already received or still to come). */
  waitForEvent(match: (e: EventEnvelope) => boolean, what = "an event", timeoutMs?: number): Promise<EventEnvelope> {
    return until(() => this.events.find(match), `${what} on the socket (got: ${this.types()})`, timeoutMs);
  }

  /** Waits for the terminal event of `turnId`. */
  waitForTurnEnd(turnId: string, timeoutMs?: number): Promise<EventEnvelope> {
    return this.waitForEvent((e) => e.turn_id === turnId && TERMINAL_TYPES.includes(e.type), `the end of turn ${turnId}`, timeoutMs);
  }

  /** Waits until at least `n` events have arrived. */
  waitForCount(n: number, timeoutMs?: number): Promise<EventEnvelope[]> {
    return until(() => this.events.length >= n && this.events, `${n} events on the socket (have ${this.events.length})`, timeoutMs);
  }

  waitForReply(requestId: unknown, timeoutMs?: number): Promise<ReplyFrame> {
    return until(() => this.replies.find((r) => r.request_id === requestId), `the reply to request ${String(requestId)}`, timeoutMs);
  }

  /** Sends a command frame and waits for its reply. */
  async command(frame: Record<string, unknown> & { request_id: string | number }, timeoutMs?: number): Promise<ReplyFrame> {
    this.send(frame);
    return this.waitForReply(frame.request_id, timeoutMs);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    try {
      this.socket.close(1000, "test done");
    } catch {
      // already closing
    }
    open.delete(this);
  }

  private types(): string {
    return this.events
      .map((e) => `${e.sequence}:${e.type}`)
      .slice(-12)
      .join(",");
  }
}

/** The raw upgrade request: returns the Response (101 with a webSocket, or an error). */
export function wsFetch(sid: string, query = "", headers: Record<string, string> = { authorization: `Bearer ${KEY}` }): Promise<Response> {
  return SELF.fetch(`${BASE}/v1/sessions/${sid}/ws${query ? `?${query}` : ""}`, { headers: { Upgrade: "websocket", ...headers } });
}

/** Opens a socket; fails the test with the error body if the upgrade is refused. */
export async function openWs(sid: string, query = "", headers?: Record<string, string>): Promise<WsClient> {
  const res = await wsFetch(sid, query, headers);
  if (res.status !== 101 || !res.webSocket) throw new Error(`WebSocket upgrade refused: ${res.status} ${await res.text()}`);
  return new WsClient(res.webSocket);
}

/** Closes every socket a test left open (call from afterEach). */
export async function closeAllSockets(): Promise<void> {
  await Promise.all([...open].map((c) => c.close()));
}
