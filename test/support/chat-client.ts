// A headless useChat for tests (runs inside workerd): the AI SDK's own AbstractChat and DefaultChatTransport,
// with a state object instead of React's, reaching the worker through SELF. Every response the transport
// receives is recorded and parsed again with parseJsonEventStream + uiMessageChunkSchema; a chunk that fails
// the schema is kept in `failures`, which every test expects empty.
import { SELF } from "cloudflare:test";
import {
  AbstractChat,
  type ChatInit,
  type ChatState,
  type ChatStatus,
  DefaultChatTransport,
  parseJsonEventStream,
  type UIMessage,
  type UIMessageChunk,
  uiMessageChunkSchema,
} from "ai";
import { KEY } from "./api";

export const BASE = "https://runtime.test";

class HeadlessState implements ChatState<UIMessage> {
  status: ChatStatus = "ready";
  error: Error | undefined = undefined;
  constructor(public messages: UIMessage[]) {}
  pushMessage = (message: UIMessage) => {
    this.messages = [...this.messages, message];
  };
  popMessage = () => {
    this.messages = this.messages.slice(0, -1);
  };
  replaceMessage = (index: number, message: UIMessage) => {
    this.messages = [...this.messages.slice(0, index), this.snapshot(message), ...this.messages.slice(index + 1)];
  };
  snapshot = <T>(thing: T): T => structuredClone(thing);
}

/** One HTTP exchange of the transport. */
export interface Exchange {
  method: string;
  path: string;
  status: number;
  headers: Headers;
  /** The request body, parsed. */
  body: any;
  /** The raw body (SSE text for a stream). */
  raw: Promise<string>;
  /** The chunks, parsed and validated as the AI SDK does. */
  chunks: Promise<UIMessageChunk[]>;
}

export interface ChatLog {
  exchanges: Exchange[];
  /** Chunks that failed uiMessageChunkSchema (or unparsable data lines). */
  failures: unknown[];
}

export interface HeadlessChatOptions extends Omit<ChatInit<UIMessage>, "transport"> {
  /** Body extras (for example `agent`). */
  body?: Record<string, unknown>;
  /** Cuts the next POST's response after this many SSE events with a network error, as a dropped connection does. */
  dropAfter?: number;
}

export class HeadlessChat extends AbstractChat<UIMessage> {
  readonly log: ChatLog = { exchanges: [], failures: [] };
  private dropAfter: number | undefined;

  constructor({ messages, body, dropAfter, ...init }: HeadlessChatOptions) {
    const fetch = (input: RequestInfo | URL, req?: RequestInit) => this.fetch(input, req);
    const transport = new DefaultChatTransport<UIMessage>({ api: `${BASE}/v1/chat`, headers: { authorization: `Bearer ${KEY}` }, body, fetch });
    super({ ...init, transport, state: new HeadlessState(messages ?? []) });
    this.dropAfter = dropAfter;
  }

  /** The chunks of every response so far, in order. */
  async allChunks(): Promise<UIMessageChunk[][]> {
    return Promise.all(this.log.exchanges.map((e) => e.chunks));
  }

  private async fetch(input: RequestInfo | URL, init?: RequestInit): Promise<Response> {
    const res = await SELF.fetch(input, init);
    let body = res.body;
    if (body && init?.method === "POST" && this.dropAfter !== undefined) {
      body = cutAfter(body, this.dropAfter);
      this.dropAfter = undefined;
    }
    const [mine, theirs] = body ? body.tee() : [null, null];
    const raw = mine ? collect(mine) : Promise.resolve("");
    const chunks = raw.then((text) => this.parse(text));
    const url = new URL(typeof input === "string" ? input : input instanceof URL ? input.href : input.url);
    const sent = typeof init?.body === "string" ? JSON.parse(init.body) : undefined;
    this.log.exchanges.push({ method: init?.method ?? "GET", path: url.pathname, status: res.status, headers: res.headers, body: sent, raw, chunks });
    return new Response(theirs, { status: res.status, headers: res.headers });
  }

  private async parse(text: string): Promise<UIMessageChunk[]> {
    const chunks: UIMessageChunk[] = [];
    if (!text.startsWith("data:")) return chunks; // a JSON error or an empty 204
    const reader = parseJsonEventStream({ stream: new Response(text).body!, schema: uiMessageChunkSchema }).getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return chunks;
      if (value.success) chunks.push(value.value);
      else this.log.failures.push(value.rawValue ?? value.error);
    }
  }
}

/** The text of a stream up to its end, or up to where it failed. */
async function collect(stream: ReadableStream<Uint8Array>): Promise<string> {
  const reader = stream.getReader();
  const decoder = new TextDecoder();
  let text = "";
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return text;
      text += decoder.decode(value, { stream: true });
    }
  } catch {
    return text;
  }
}

/** Passes `events` whole SSE events through, then fails the stream as a dropped connection does. */
function cutAfter(body: ReadableStream<Uint8Array>, events: number): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  const encoder = new TextEncoder();
  let buffer = "";
  let passed = 0;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      for (;;) {
        const end = buffer.indexOf("\n\n");
        if (end >= 0) {
          controller.enqueue(encoder.encode(buffer.slice(0, end + 2)));
          buffer = buffer.slice(end + 2);
          if (++passed >= events) {
            await reader.cancel();
            controller.error(new TypeError("network error"));
          }
          return;
        }
        const { done, value } = await reader.read();
        if (done) return controller.close();
        buffer += decoder.decode(value, { stream: true });
      }
    },
    cancel: () => reader.cancel(),
  });
}

/** Waits until `check` holds, polling. */
export async function until(check: () => boolean | Promise<boolean>, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** A message as JSON sees it (no undefined fields), for comparisons. */
export function plain<T>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T;
}
