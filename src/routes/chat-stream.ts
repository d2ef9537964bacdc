// Plumbing of the chat routes: the session's events read from its SSE stream (replay from a cursor, then
// live, reconnecting where a stream broke), and a turn's UI message stream sent as the AI SDK's SSE, with a
// keep-alive comment whenever it has been silent for the keep-alive interval, ending when a browser token
// that opened it expires.
import type { threadView } from "../durable/session-views";
import type { Env } from "../env";
import { ApiError, type Result, unwrap } from "../protocol/errors";
import type { RuntimeEvent } from "../protocol/events";
import { keepaliveMs, SSE_KEEPALIVE, TOKEN_EXPIRED } from "../runtime/keepalive";
import type { ChatMessageMetadata, UiChunk } from "../runtime/views/ui-stream";
import { turnStream } from "../runtime/views/ui-turn-stream";
import { sessionStub } from "./http";

type SessionStub = ReturnType<typeof sessionStub>;
type ThreadView = ReturnType<typeof threadView>;

/** The thread read model (its RPC type is lost to the serialization types, which turn `unknown` fields into never). */
export async function threadResult(stub: SessionStub): Promise<Result<ThreadView>> {
  return (await stub.call("thread", { params: {}, by: "" })) as unknown as Result<ThreadView>;
}

/** The protocol's response headers (the AI SDK's UI_MESSAGE_STREAM_HEADERS). */
const UI_STREAM_HEADERS = {
  "content-type": "text/event-stream",
  "cache-control": "no-cache",
  "x-vercel-ai-ui-message-stream": "v1",
  "x-accel-buffering": "no",
};
/** Streams that end without progress this many times in a row are given up (the session is gone). */
const MAX_IDLE_RECONNECTS = 3;

/** Every event of the session after `after`, then live ones, until `signal` aborts or the consumer stops. */
async function* sessionEvents(stub: SessionStub, sid: string, after: number, signal: AbortSignal): AsyncGenerator<RuntimeEvent> {
  let cursor = after;
  let idle = 0;
  while (!signal.aborted && idle < MAX_IDLE_RECONNECTS) {
    const url = `https://session/v1/sessions/${sid}/events?after=${cursor}`;
    const res = await stub.fetch(new Request(url, { headers: { accept: "text/event-stream" } }));
    if (!res.ok || !res.body) {
      const body = (await res.json().catch(() => null)) as { error?: { code: string; message: string } } | null;
      throw body?.error ? new ApiError(body.error.code as "not_found", body.error.message) : new Error(`event stream failed (${res.status})`);
    }
    const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
    const stop = () => void reader.cancel().catch(() => {});
    signal.addEventListener("abort", stop);
    const start = cursor;
    try {
      let buffer = "";
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        buffer += value;
        for (let end = buffer.indexOf("\n\n"); end >= 0; end = buffer.indexOf("\n\n")) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          // A slow consumer's stream ends with an `error` event; the next stream resumes from the cursor.
          const data = block.startsWith("id: ") ? block.split("\n").find((l) => l.startsWith("data: ")) : undefined;
          if (!data) continue;
          const event = JSON.parse(data.slice(6)) as RuntimeEvent;
          cursor = event.sequence;
          yield event;
        }
      }
    } finally {
      signal.removeEventListener("abort", stop);
      stop();
    }
    idle = cursor === start ? idle + 1 : 0;
  }
}

export interface TurnResponse {
  env: Env;
  sid: string;
  turnId: string;
  metadata: ChatMessageMetadata;
  /** The approvals this request answered (see turnStream). */
  decided?: ReadonlySet<string>;
  /** When the browser token of the request expires (ms since the epoch); null for API keys. */
  expiresAt: number | null;
}

/** The UI message stream of a turn, from its first event, as an SSE response. */
export async function turnResponse({ env, sid, turnId, metadata, decided, expiresAt }: TurnResponse): Promise<Response> {
  const stub = sessionStub(env, sid);
  const after = unwrap(await stub.chatCursor(turnId));
  const abort = new AbortController();
  const chunks = turnStream({
    turnId,
    metadata,
    decided,
    events: sessionEvents(stub, sid, after, abort.signal),
    stillWaiting: async (actionIds, sequence) => {
      const thread = unwrap(await threadResult(stub));
      const pending = new Set(thread.pending_actions.map((a) => a.action_id));
      return thread.active_turn_id === turnId && thread.last_sequence <= sequence && actionIds.every((id) => pending.has(id));
    },
  });
  return sseResponse(chunks, abort, keepaliveMs(env), expiresAt ?? Number.POSITIVE_INFINITY);
}

const SILENT = Symbol("silent");

/** `next` if it settles within `ms`, else SILENT (`next` stays pending for a later wait). */
async function within<T>(next: Promise<T>, ms: number): Promise<T | typeof SILENT> {
  let timer!: ReturnType<typeof setTimeout>;
  const silent = new Promise<typeof SILENT>((resolve) => {
    timer = setTimeout(() => resolve(SILENT), ms);
  });
  try {
    return await Promise.race([next, silent]);
  } finally {
    clearTimeout(timer);
  }
}

function sseResponse(chunks: AsyncGenerator<UiChunk>, abort: AbortController, keepalive: number, expiresAt: number): Response {
  const encoder = new TextEncoder();
  const line = (data: string) => encoder.encode(`data: ${data}\n\n`);
  let next: Promise<IteratorResult<UiChunk>> | null = null;
  const stop = () => {
    abort.abort();
    // A chunk still awaited settles after the stream ended: nobody reads it.
    next?.catch(() => {});
    chunks.return(undefined).catch(() => {});
  };
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      let last: UiChunk | null = null;
      try {
        next ??= chunks.next();
        const left = expiresAt - Date.now();
        const got = left > 0 ? await within(next, Math.min(keepalive, left)) : SILENT;
        if (got === SILENT) {
          if (Date.now() < expiresAt) return controller.enqueue(encoder.encode(SSE_KEEPALIVE));
          last = { type: "error", errorText: `${TOKEN_EXPIRED.code}: ${TOKEN_EXPIRED.message}` };
        } else {
          next = null;
          if (!got.done) return controller.enqueue(line(JSON.stringify(got.value)));
        }
      } catch (err) {
        // The response has started: a failure can only be told in the stream.
        console.error("chat stream failed", err);
        last = { type: "error", errorText: err instanceof ApiError ? `${err.code}: ${err.message}` : "internal_error: the stream failed" };
      }
      if (last) controller.enqueue(line(JSON.stringify(last)));
      controller.enqueue(line("[DONE]"));
      controller.close();
      stop();
    },
    // The client went away (or stopped): the turn goes on; only this stream ends.
    cancel: stop,
  });
  return new Response(body, { headers: UI_STREAM_HEADERS });
}
