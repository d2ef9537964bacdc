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
import type { RuntimeEvent } from "../../protocol/events";

import type { UiChunk } from "../../views/ui-stream";
import { type TurnStreamOptions, turnStream } from "../../views/ui-turn-stream";
import { type SseFormat, type SseOptions, sseResponse } from "./sse-writer";

/** The path of the chat stream on the session object (the Worker's forwarded request). */
export const CHAT_STREAM_PATH = "/chat-stream";
const line = (data: string) => `data: ${data}\n\n`;

/** The protocol on the wire: its headers (the AI SDK's UI_MESSAGE_STREAM_HEADERS), `data:` lines, and `[DONE]`. */
const UI_STREAM: SseFormat<UiChunk> = {
  name: "chat stream",
  headers: { "content-type": "text/event-stream", "cache-control": "no-cache", "x-vercel-ai-ui-message-stream": "v1", "x-accel-buffering": "no" },
  chunk: (c) => line(JSON.stringify(c)),
  failure: (e) => line(JSON.stringify({ type: "error", errorText: `${e.code}: ${e.message}` })),
  end: line("[DONE]"),
};
/** Streams that end without progress this many times in a row are given up (the session is gone). */
const MAX_IDLE_RECONNECTS = 3;

/** An SSE stream of the session's log after `after`, ending when `signal` aborts; throws when the session is gone. */
export type OpenEvents = (after: number, signal: AbortSignal) => Response;

export interface ChatStreamOptions extends Omit<TurnStreamOptions, "events">, SseOptions {
  /** The sequence before the turn's first event. */
  after: number;
  openEvents: OpenEvents;
}

/** The UI message stream of a turn, from its first event, as an SSE response. */
export function chatStream(o: ChatStreamOptions): Promise<Response> {
  const abort = new AbortController();
  const chunks = turnStream({ ...o, events: sessionEvents(o.openEvents, o.after, abort.signal) });
  return sseResponse(chunks, abort, o, UI_STREAM);
}

/** Every event of the session after `after`, then live ones, until `signal` aborts or the consumer stops. */
export async function* sessionEvents(open: OpenEvents, after: number, signal: AbortSignal): AsyncGenerator<RuntimeEvent> {
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
