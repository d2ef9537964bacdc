// Streamed Chat Completions answers read in one stage. A provider reads an answer through four web streams (text
// decoding, SSE, an async zod-checked JSON stage, its own mapping): in workerd about 20 µs of CPU per stage and
// chunk, which a session object pays for every token of every answer while it serves nothing else. Here the
// provider still builds and sends the request and reads a failed one (its errors and what they say about
// retrying); a successful answer's body is taken from its `fetch` and read by one pull stream that decodes, splits
// and maps each chunk as the consumer asks for it. The mapping is the provider's, one mapper per wire dialect
// (compatible-chat-stream.ts, openai-chat-stream.ts). One difference is kept: a body that fails mid-read ends the
// stream with the read's own error, where the provider wraps it in an APICallError (retryable only for a network
// code, which workerd's errors do not carry); the loop fails the call either way, and a fallback model may take it.
import type {
  LanguageModelV3,
  LanguageModelV3CallOptions,
  LanguageModelV3FinishReason,
  LanguageModelV3StreamPart,
  LanguageModelV3StreamResult,
} from "@ai-sdk/provider";
import { createParser, type EventSourceParser } from "eventsource-parser";

/** The request header that marks a streamed call whose answer is taken; removed before the request leaves. */
const TAKE_HEADER = "x-agent-runtime-take";

/** A successful answer taken from the provider, with what its errors name (the request's address and body). */
export interface TakenAnswer {
  response: Response;
  url: string;
  /** The request body as sent (JSON text): parsed only when an error names it. */
  requestBody: string;
}

/** Thrown by the provider's `fetch` once the answer is taken: it passes through the provider untouched (not a network error). */
class AnswerTaken extends Error {
  constructor(readonly taken: TakenAnswer) {
    super("the answer is read in one stage");
  }
}

/** A provider `fetch` that hands the successful answer of a call marked with TAKE_HEADER to that call, not the provider. */
export function takingFetch(base: typeof fetch = (input, init) => fetch(input, init)): typeof fetch {
  return async (input, init) => {
    // The provider passes its headers as a plain object with lower-case names (a copy without the mark is cheaper than a Headers).
    const { [TAKE_HEADER]: mark, ...headers } = (init?.headers ?? {}) as Record<string, string>;
    if (mark === undefined) return base(input, init);
    const response = await base(input, { ...init, headers });
    if (!response.ok || !response.body) return response; // the provider reads a failure (status, body, retry-after)
    throw new AnswerTaken({ response, url: String(input), requestBody: typeof init?.body === "string" ? init.body : "" });
  };
}

/** How a dialect reads a taken answer: its stream parts (it may read ahead and throw, as its provider does in doStream). */
export type AnswerReading = (taken: TakenAnswer, events: SseEvents) => Promise<ReadableStream<LanguageModelV3StreamPart>>;

/** `inner` (a Chat Completions model made with takingFetch) with its streamed answers read in one stage by `read`. */
export class OneStageChatModel implements LanguageModelV3 {
  readonly specificationVersion = "v3";
  readonly provider: string;
  readonly modelId: string;
  readonly supportedUrls: LanguageModelV3["supportedUrls"];

  constructor(
    private readonly inner: LanguageModelV3,
    private readonly read: AnswerReading,
  ) {
    this.provider = inner.provider;
    this.modelId = inner.modelId;
    this.supportedUrls = inner.supportedUrls;
  }

  doGenerate(options: LanguageModelV3CallOptions) {
    return this.inner.doGenerate(options);
  }

  async doStream(options: LanguageModelV3CallOptions): Promise<LanguageModelV3StreamResult> {
    if (options.includeRawChunks) return this.inner.doStream(options);
    try {
      return await this.inner.doStream({ ...options, headers: { ...options.headers, [TAKE_HEADER]: "1" } });
    } catch (err) {
      if (!(err instanceof AnswerTaken)) throw err;
      const { taken } = err;
      // The provider's stream-start carries the warnings of its request settings; the runtime reads none (model-stream.ts).
      const stream = await this.read(taken, new SseEvents(taken.response.body!));
      return { stream, response: { headers: Object.fromEntries(taken.response.headers) } };
    }
  }
}

/** The data of an SSE body's events, pulled a body read at a time; `[DONE]` is not an event. */
export class SseEvents {
  private readonly reader: ReadableStreamDefaultReader<Uint8Array>;
  private readonly decoder = new TextDecoder();
  private readonly parser: EventSourceParser;
  private queue: string[] = [];
  private next = 0;
  /** Set once the body ended or was cancelled: nothing more is read. */
  private ended = false;

  constructor(body: ReadableStream<Uint8Array>) {
    this.reader = body.getReader();
    this.parser = createParser({ onEvent: (e) => e.data !== "[DONE]" && this.queue.push(e.data) });
  }

  /** The next event's data, or null once the body has ended (an unterminated last event is dropped, as the provider's SSE stage drops it). */
  async read(): Promise<string | null> {
    while (this.next === this.queue.length) {
      if (this.ended) return null;
      this.queue = [];
      this.next = 0;
      const { done, value } = await this.reader.read();
      if (done) this.ended = true;
      else this.parser.feed(this.decoder.decode(value, { stream: true }));
    }
    return this.queue[this.next++]!;
  }

  /** Stop reading: the body is cancelled (the model stops generating), and read() answers null from now on. */
  cancel(reason?: unknown): Promise<void> {
    this.ended = true;
    this.queue = [];
    this.next = 0;
    return this.reader.cancel(reason).catch(() => {});
  }

  /** Events read ahead (by a dialect that looks for an early error) are read again, first. */
  unread(data: string[]): void {
    this.queue = [...data, ...this.queue.slice(this.next)];
    this.next = 0;
  }
}

/** A dialect's chunk-by-chunk mapping: `chunk` per event's data, `end` when the body has ended. */
export interface ChunkMapper {
  chunk(data: string): void;
  end(): void;
}

/**
 * The answer's events as stream parts: each read pulls events until they make at least one part. A mapping that
 * throws errors the stream and cancels the body (as the provider's pipeline cancels its source); a consumer's
 * cancel cancels the body and ends a pending read without mapping more.
 */
export function answerStream(
  events: SseEvents,
  mapper: (enqueue: (part: LanguageModelV3StreamPart) => void) => ChunkMapper,
): ReadableStream<LanguageModelV3StreamPart> {
  let parts: LanguageModelV3StreamPart[] = [];
  const map = mapper((part) => parts.push(part));
  let cancelled = false;
  return new ReadableStream<LanguageModelV3StreamPart>({
    start(controller) {
      controller.enqueue({ type: "stream-start", warnings: [] });
    },
    async pull(controller) {
      try {
        while (parts.length === 0) {
          const data = await events.read();
          if (cancelled) return;
          if (data === null) {
            map.end();
            for (const part of parts) controller.enqueue(part);
            controller.close();
            return;
          }
          map.chunk(data);
        }
      } catch (err) {
        await events.cancel(err);
        throw err;
      }
      for (const part of parts) controller.enqueue(part);
      parts = [];
    },
    cancel(reason) {
      cancelled = true;
      return events.cancel(reason);
    },
  });
}

/** A Chat Completions finish_reason as both providers read it; after a refusal, @ai-sdk/openai reads "stop" as a content filter. */
export function unifiedReason(reason: string, hasRefusal = false): LanguageModelV3FinishReason["unified"] {
  switch (reason) {
    case "stop":
      return hasRefusal ? "content-filter" : "stop";
    case "length":
      return "length";
    case "content_filter":
      return "content-filter";
    case "function_call":
    case "tool_calls":
      return "tool-calls";
    default:
      return "other";
  }
}

/** The usage of an answer that reported none. */
export const NO_USAGE: Extract<LanguageModelV3StreamPart, { type: "finish" }>["usage"] = {
  inputTokens: { total: undefined, noCache: undefined, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: undefined, text: undefined, reasoning: undefined },
  raw: undefined,
};
