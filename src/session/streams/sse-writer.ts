// Writes a session object's SSE response from an async generator of chunks (the chat stream's UI chunks, the
// Responses stream's events): the chunks that are ready together in one write, a keep-alive comment when the
// stream has been silent for the keep-alive interval, an error at the end when a browser token that opened it
// expires or the chunks fail. A client that goes away aborts the request's signal or fails a write; either
// ends the stream quietly and stops the chunks (chat-stream.ts says why this runs in the session object).
import { ApiError } from "../../protocol/errors";
import { SSE_KEEPALIVE, TOKEN_EXPIRED } from "../keepalive";

/** How a protocol writes its chunks on the wire. */
export interface SseFormat<C> {
  name: string;
  headers: Record<string, string>;
  chunk(c: C): string;
  /** The text that tells a failure in the stream (the response has started: no status can say it). */
  failure(error: { code: string; message: string }): string;
  /** What follows the last chunk. */
  end: string;
}

export interface SseOptions {
  keepaliveMs: number;
  /** When the browser token that opened the stream expires (ms since the epoch); null for API keys. */
  expiresAt: number | null;
  /** The request's signal: it aborts when the Worker (its client) goes away. */
  signal: AbortSignal;
}

/** Chunks that are ready together are written together, up to about this many characters a write. */
const MAX_WRITE = 64 * 1024;

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

/** The SSE response of `chunks`; `abort` is aborted when the stream ends (it stops the chunks' reads). */
export async function sseResponse<C>(chunks: AsyncGenerator<C>, abort: AbortController, o: SseOptions, format: SseFormat<C>): Promise<Response> {
  const encoder = new TextEncoder();
  const expiresAt = o.expiresAt ?? Number.POSITIVE_INFINITY;
  const out = new IdentityTransformStream();
  const writer = out.writable.getWriter();
  let next: Promise<IteratorResult<C>> | null = null;
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
    let failed: { code: string; message: string } | null = null;
    try {
      next ??= chunks.next();
      const left = expiresAt - Date.now();
      const got = left > 0 ? await within(next, Math.min(ms, left)) : SILENT;
      if (got === SILENT) {
        if (Date.now() < expiresAt) return ms === 0 ? null : { text: SSE_KEEPALIVE, end: false };
        failed = TOKEN_EXPIRED;
      } else {
        next = null;
        if (!got.done) return { text: format.chunk(got.value), end: false };
      }
    } catch (err) {
      if (stopped) return { text: "", end: true };
      console.error(`${format.name} failed`, err);
      failed = err instanceof ApiError ? { code: err.code, message: err.message } : { code: "internal_error", message: "the stream failed" };
    }
    return { text: (failed ? format.failure(failed) : "") + format.end, end: true };
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
  return new Response(out.readable, { headers: format.headers });
}
