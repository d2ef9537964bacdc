// Keep-alives of the long-lived streams (SSE, the chat stream, WebSockets): proxies and HTTP clients end a
// connection that stays silent (Node's fetch after 300 s), and a turn may wait for a person for much longer.

/** Default time between keep-alives, in ms (STREAM_KEEPALIVE_MS overrides it). */
export const DEFAULT_KEEPALIVE_MS = 25_000;
/** An SSE comment: EventSource and the AI SDK's stream parser skip it. */
export const SSE_KEEPALIVE = ": keep-alive\n\n";
/** The WebSocket keep-alive frame: not an event (no sequence), and it needs no answer. */
export const PING_FRAME = JSON.stringify({ type: "ping" });

export function keepaliveMs(env: { STREAM_KEEPALIVE_MS?: string }): number {
  const ms = Number(env.STREAM_KEEPALIVE_MS);
  return Number.isInteger(ms) && ms > 0 ? ms : DEFAULT_KEEPALIVE_MS;
}

/** What a stream opened with a browser token says when the token expires. */
export const TOKEN_EXPIRED = { code: "token_expired", message: "The token has expired; ask for a new one and reconnect" } as const;
