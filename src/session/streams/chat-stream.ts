// The AI SDK UI message stream of a turn (POST /v1/chat and GET /v1/chat/:sid/stream), served by the session
// object as it serves the SSE stream of its log, and forwarded by the Worker as it is. The Worker used to write
// it, chunk by chunk: a client that went away while chunks were being written made workerd print "Uncaught
// Error: Network connection lost" (about every other chat stream dropped as it opened), from the Worker's
// response pump, where nothing in the Worker could catch it. Here, a client that goes away aborts the
// request's signal or fails a write; either ends this stream quietly and cancels its read of the log (the
// turn goes on). The chunks that are ready together go out in one write, as the SSE stream sends a batch of
// events at once: a stream written in many small writes, here too, still printed the error now and then.
//
// The turn's events come from the session's own SSE stream (socket-hub.ts), from before the turn's first event,
// then live, reopened where it ended (a slow consumer's); the chunks go out with a keep-alive comment whenever
// the stream has been silent for the keep-alive interval, and the stream ends when a browser token that
// opened it expires. Everything here runs in the stream's own request: its timers, its reads, its writes.
import { ApiError } from "../../protocol/errors";
import type { RuntimeEvent } from "../../protocol/events";
import type { UiChunk } from "../../views/ui-stream";
import { type TurnStreamOptions, turnStream } from "../../views/ui-turn-stream";
import { SSE_KEEPALIVE, TOKEN_EXPIRED } from "../keepalive";

/** The path of the chat stream on the session object (the Worker's forwarded request). */
export const CHAT_STREAM_PATH = "/chat-stream";

/** The protocol's response headers (the AI SDK's UI_MESSAGE_STREAM_HEADERS). */
const UI_STREAM_HEADERS = {
  "content-type": "text/event-stream",
  "cache-control": "no-cache",
  "x-vercel-ai-ui-message-stream": "v1",
  "x-accel-buffering": "no",
};
/** Chunks that are ready together are written together, up to about this many characters a write. */
const MAX_WRITE = 64 * 1024;
/** Streams that end without progress this many times in a row are given up (the session is gone). */
const MAX_IDLE_RECONNECTS = 3;

export interface ChatStreamOptions extends Omit<TurnStreamOptions, "events"> {
  /** The sequence before the turn's first event. */
  after: number;
  /** An SSE stream of the session's log after `after`, ending when `signal` aborts; throws when the session is gone. */
  openEvents(after: number, signal: AbortSignal): Response;
  keepaliveMs: number;
  /** When the browser token that opened the stream expires (ms since the epoch); null for API keys. */
  expiresAt: number | null;
  /** The request's signal: it aborts when the Worker (its client) goes away. */
  signal: AbortSignal;
}

/** The UI message stream of a turn, from its first event, as an SSE response. */
export function chatStream(o: ChatStreamOptions): Promise<Response> {
  const abort = new AbortController();
  const chunks = turnStream({ ...o, events: sessionEvents(o.openEvents, o.after, abort.signal) });
  return sseResponse(chunks, abort, o);
}

/** Every event of the session after `after`, then live ones, until `signal` aborts or the consumer stops. */
async function* sessionEvents(open: ChatStreamOptions["openEvents"], after: number, signal: AbortSignal): AsyncGenerator<RuntimeEvent> {
  let cursor = after;
  let idle = 0;
  while (!signal.aborted && idle < MAX_IDLE_RECONNECTS) {
    const reader = open(cursor, signal).body!.pipeThrough(new TextDecoderStream()).getReader();
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

async function sseResponse(chunks: AsyncGenerator<UiChunk>, abort: AbortController, o: ChatStreamOptions): Promise<Response> {
  const encoder = new TextEncoder();
  const line = (data: string) => `data: ${data}\n\n`;
  const expiresAt = o.expiresAt ?? Number.POSITIVE_INFINITY;
  const out = new IdentityTransformStream();
  const writer = out.writable.getWriter();
  let next: Promise<IteratorResult<UiChunk>> | null = null;
  let stopped = false;
  const stop = () => {
    if (stopped) return;
    stopped = true;
    o.signal.removeEventListener("abort", gone);
    abort.abort();
    // A chunk still awaited settles after the stream ended: nobody reads it.
    next?.catch(() => {});
    chunks.return(undefined).catch(() => {});
  };
  // The client went away (or stopped): the turn goes on; only this stream ends, and a write under way is abandoned.
  const gone = () => {
    stop();
    writer.abort().catch(() => {});
  };

  /**
   * The next text to send and whether the stream ends after it, or null when `ms` is 0 and nothing is ready;
   * a keep-alive when nothing came for `ms`. A failure is told in the stream.
   */
  const following = async (ms: number): Promise<{ text: string; end: boolean } | null> => {
    let last: UiChunk | null = null;
    try {
      next ??= chunks.next();
      const left = expiresAt - Date.now();
      const got = left > 0 ? await within(next, Math.min(ms, left)) : SILENT;
      if (got === SILENT) {
        if (Date.now() < expiresAt) return ms === 0 ? null : { text: SSE_KEEPALIVE, end: false };
        last = { type: "error", errorText: `${TOKEN_EXPIRED.code}: ${TOKEN_EXPIRED.message}` };
      } else {
        next = null;
        if (!got.done) return { text: line(JSON.stringify(got.value)), end: false };
      }
    } catch (err) {
      if (stopped) return { text: "", end: true };
      // The response has started: a failure can only be told in the stream.
      console.error("chat stream failed", err);
      last = { type: "error", errorText: err instanceof ApiError ? `${err.code}: ${err.message}` : "internal_error: the stream failed" };
    }
    return { text: (last ? line(JSON.stringify(last)) : "") + line("[DONE]"), end: true };
  };

  /** The chunks that are ready together (a batch of events), as one write. */
  const batch = async (): Promise<{ text: string; end: boolean }> => {
    let { text, end } = (await following(o.keepaliveMs))!;
    const more = async () => (end || text.length >= MAX_WRITE ? null : await following(0));
    for (let got = await more(); got; got = await more()) {
      text += got.text;
      end = got.end;
    }
    return { text, end };
  };

  /** Writes `first`, then each batch, until the stream ends or the client goes away. */
  const write = async (first: { text: string; end: boolean }) => {
    try {
      for (let part = first; !stopped; part = await batch()) {
        if (part.text !== "") await writer.write(encoder.encode(part.text));
        if (part.end) return await writer.close();
      }
    } catch {
      // the client went away: normal, nothing to report
    } finally {
      stop();
    }
  };

  if (o.signal.aborted) gone();
  else o.signal.addEventListener("abort", gone, { once: true });
  // The start and what the log already holds go out with the response, as the SSE stream's replay does.
  void write(await batch());
  return new Response(out.readable, { headers: UI_STREAM_HEADERS });
}
