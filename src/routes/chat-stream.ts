// Plumbing of the chat routes: a turn's UI message stream, which the session object
// serves (src/session/streams/chat-stream.ts) and the Worker forwards as it is.

import type { Env } from "../env";
import { ApiError } from "../protocol/errors";
import { CHAT_STREAM_PATH } from "../session/streams/chat-stream";
import { EXPIRES_HEADER } from "../session/streams/session-streams";
import { sessionStub } from "./http";

export interface TurnResponse {
  env: Env;
  sid: string;
  turnId: string;
  /** The approvals this request answered (see turnStream). */
  decided?: ReadonlySet<string>;
  /** When the browser token of the request expires (ms since the epoch); null for API keys. */
  expiresAt: number | null;
}

/**
 * The UI message stream of a turn, from its first event, as an SSE response. The session object writes it: a
 * response the Worker passes on is no error when the client goes away (src/session/streams/chat-stream.ts says why).
 */
export async function turnResponse({ env, sid, turnId, decided, expiresAt }: TurnResponse): Promise<Response> {
  const url = new URL(`https://session${CHAT_STREAM_PATH}`);
  url.searchParams.set("turn", turnId);
  for (const id of decided ?? []) url.searchParams.append("decided", id);
  return sessionFetch(env, sid, url, expiresAt);
}

/**
 * A stream or read the session object serves through its fetch handler (a POST of `body` as JSON when given);
 * its error envelope thrown as an ApiError.
 */
export async function sessionFetch(env: Env, sid: string, url: URL, expiresAt: number | null, body?: unknown): Promise<Response> {
  const headers: Record<string, string> = expiresAt === null ? {} : { [EXPIRES_HEADER]: String(expiresAt) };
  const init = body === undefined ? { headers } : { method: "POST", headers: { ...headers, "content-type": "application/json" }, body: JSON.stringify(body) };
  const res = await sessionStub(env, sid).fetch(new Request(url, init));
  if (res.ok) return res;
  const failed = (await res.json().catch(() => null)) as { error?: { code: string; message: string; details?: unknown } } | null;
  if (failed?.error) throw new ApiError(failed.error.code as "not_found", failed.error.message, failed.error.details);
  throw new Error(`session stream failed (${res.status})`);
}
