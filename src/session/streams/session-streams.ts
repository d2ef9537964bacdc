// A session's event streams as the object's fetch handler serves them: a WebSocket upgrade or an SSE
// stream, from `after`, `Last-Event-ID` or a channel's acknowledged cursor.
import { parseCursor } from "../../protocol/cursor";
import { ApiError } from "../../protocol/errors";
import { checkCursor } from "../store/log-reads";
import type { SessionStore } from "../store/session-store";
import type { ChannelStore } from "./channel-store";
import type { SocketHub } from "./socket-hub";

/** Carries the caller's key hash from the Worker to the object on WebSocket upgrades (set by the Worker only). */
export const KEY_HASH_HEADER = "x-runtime-key-hash";
/** Carries what the caller may do with command frames on the socket (set by the Worker only). */
export const GRANTS_HEADER = "x-runtime-grants";
/** Carries when the caller's browser token expires, in ms (set by the Worker only; absent for API keys). */
export const EXPIRES_HEADER = "x-runtime-token-expires";

export function openStream(request: Request, store: Pick<SessionStore, "lastSequence">, channels: ChannelStore, hub: SocketHub): Response {
  const url = new URL(request.url);
  const channel = url.searchParams.get("channel");
  // An EventSource reconnects to the same URL (with its original `after`) and adds Last-Event-ID: that wins.
  const lastEventId = request.headers.get("last-event-id");
  const [name, raw] = lastEventId !== null ? ["Last-Event-ID", lastEventId] : ["after", url.searchParams.get("after")];
  let after = raw === null ? null : parseCursor(raw);
  if (raw !== null && after === null) throw ApiError.validation([{ path: name, reason: "must be a plain non-negative decimal integer" }]);
  if (after === null && channel) after = channels.cursor(channel) ?? 0;
  after ??= 0;
  checkCursor(store, after, name);
  const expiresAt = tokenExpiry(request);
  if (url.pathname.endsWith("/ws")) {
    if (channel) channels.ack(channel, after, Date.now());
    const grants = (request.headers.get(GRANTS_HEADER) ?? "read").split(",");
    const key_hash = request.headers.get(KEY_HASH_HEADER) ?? "unknown";
    const batch = url.searchParams.get("frames") === "batch";
    return hub.acceptWebSocket(after, { channel, key_hash, grants, ...(expiresAt === null ? {} : { expires_at: expiresAt }), ...(batch ? { batch } : {}) });
  }
  return hub.openSse(after, expiresAt, request.signal);
}

/** When the browser token that opened the stream expires (ms since the epoch); null for API keys. */
export function tokenExpiry(request: Request): number | null {
  const expires = request.headers.get(EXPIRES_HEADER);
  return expires === null ? null : Number(expires);
}
