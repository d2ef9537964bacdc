// Streamed Chat Completions answers served by a provider's `fetch` setting (no server is needed to serve bytes), and
// the parts a model reads from them: the differential tests of the one-stage readings (chat-stream.ts) use them.
import type { LanguageModelV3, LanguageModelV3StreamPart } from "@ai-sdk/provider";
import { expect } from "vitest";
import { callOptions } from "../../../src/engine/model-stream";

/** An SSE body of `chunks` (strings as they are, others as JSON) ended by `[DONE]`. */
export const sse = (...chunks: unknown[]) => `${chunks.map((c) => `data: ${typeof c === "string" ? c : JSON.stringify(c)}\n\n`).join("")}data: [DONE]\n\n`;

/** The answer's bytes cut into pieces of `size` bytes (0: one piece), multi-byte characters split across them. */
export function answering(body: string, size: number): typeof fetch {
  return async () => {
    const bytes = new TextEncoder().encode(body);
    const stream = new ReadableStream<Uint8Array>({
      start(c) {
        const step = size || bytes.length;
        for (let i = 0; i < bytes.length; i += step) c.enqueue(bytes.slice(i, i + step));
        c.close();
      },
    });
    return new Response(stream, { status: 200, headers: { "content-type": "text/event-stream" } });
  };
}

export const options = () => callOptions({ model: null as never, messages: [{ role: "user", content: "hi" }], signal: new AbortController().signal });

/** Every part of a streamed call; errors by their name and whole message (the schema's issues included), sources without their generated ids. */
export async function parts(model: LanguageModelV3): Promise<unknown[]> {
  const { stream } = await model.doStream(options());
  const out: unknown[] = [];
  for await (const part of stream as unknown as AsyncIterable<LanguageModelV3StreamPart>) {
    if (part.type === "error") out.push({ type: "error", message: messageOf(part.error) });
    else if (part.type === "source")
      out.push({ ...part, id: expect.any(String) }); // generated ids
    else out.push(part);
  }
  return out;
}

const messageOf = (error: unknown) => (error instanceof Error ? `${error.name}: ${error.message}` : (error as { message?: unknown })?.message);

/** A body that gives `first` then waits; it records the reason it is cancelled with, and errors when `signal` aborts. */
export function stalling(first: string, signal?: AbortSignal): { fetch: typeof fetch; cancelled: () => unknown } {
  let cancelled: unknown = null;
  const serve: typeof fetch = async (_input, init) => {
    const abort = signal ?? init?.signal ?? undefined;
    const body = new ReadableStream<Uint8Array>({
      start(c) {
        c.enqueue(new TextEncoder().encode(first));
        abort?.addEventListener("abort", () => c.error(abort.reason), { once: true });
      },
      cancel(reason) {
        cancelled = reason;
      },
    });
    return new Response(body, { status: 200 });
  };
  return { fetch: serve, cancelled: () => cancelled };
}

type Models = (serve: typeof fetch) => { provider: LanguageModelV3; oneStage: LanguageModelV3 };

/** The one-stage reading gives the provider's parts for `body`, whole and cut into 1, 3 and 7 byte pieces. */
export async function expectSameParts(models: Models, body: string): Promise<void> {
  const expected = await parts(models(answering(body, 0)).provider);
  expect(expected.length).toBeGreaterThan(2);
  for (const size of [0, 1, 3, 7]) expect(await parts(models(answering(body, size)).oneStage)).toEqual(expected);
}

/** The requests the provider's reading and the one-stage reading send for `body`'s answer, as they leave. */
export async function bothRequests(models: Models, body: string): Promise<{ url: string; headers: Headers; body: unknown }[]> {
  const seen: { url: string; headers: Headers; body: unknown }[] = [];
  const recording: typeof fetch = async (input, init) => {
    seen.push({ url: String(input), headers: new Headers(init?.headers), body: JSON.parse(String(init?.body)) });
    return answering(body, 0)(input, init);
  };
  const { provider, oneStage } = models(recording);
  await parts(provider);
  await parts(oneStage);
  return seen;
}

/** Whether each reading took the answer: the provider's doStream result names its request body, a taken answer's does not. */
export async function taken(models: Models, body: string): Promise<{ provider: boolean; oneStage: boolean }> {
  const { provider, oneStage } = models(answering(body, 0));
  const took = async (model: LanguageModelV3) => {
    const result = await model.doStream(options());
    await result.stream.cancel();
    return result.request === undefined;
  };
  return { provider: await took(provider), oneStage: await took(oneStage) };
}
