// `openai:` Chat Completions models as the runtime resolves them (one-stage reading, src/engine/openai-chat-stream.ts)
// over real HTTP (Node's fetch) against the fake Chat Completions server, no wrangler: the loop reads what the provider's own reading gives, a
// refused request is retried, and an abort ends an answer that hangs.
import { createOpenAI } from "@ai-sdk/openai";
import type { LanguageModelV3 } from "@ai-sdk/provider";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { callOptions, streamModel } from "../../src/engine/model-stream";
import { resolveModel } from "../../src/engine/models";
import type { Step } from "../support/fake-model";
import { startFakeOpenAI } from "../support/fake-openai";
import { freePort } from "./support/wrangler-dev";

let base = "";
let server: { close(): Promise<void> };

beforeAll(async () => {
  const port = await freePort();
  server = await startFakeOpenAI(port);
  base = `http://127.0.0.1:${port}/v1`;
});
afterAll(() => server.close());

async function script(steps: Step[]): Promise<string> {
  const id = `openai-chat-${crypto.randomUUID()}`;
  const res = await fetch(`${base}/_scripts/${id}`, { method: "PUT", headers: { "content-type": "application/json" }, body: JSON.stringify({ steps }) });
  expect(res.ok).toBe(true);
  return id;
}

async function read(model: LanguageModelV3, signal = new AbortController().signal) {
  const out = [];
  const options = callOptions({ model: null as never, messages: [{ role: "user", content: "hi" }], signal });
  for await (const part of streamModel(model, { ...options, abortSignal: signal })) out.push(part);
  return out;
}

const env = () => ({ OPENAI_API_KEY: "sk-fake", OPENAI_BASE_URL: base });

describe("openai: Chat Completions models read in one stage", () => {
  it("the loop reads the provider's own answer: text, a tool call with its input, finish and usage", async () => {
    const step: Step = {
      text: "Hello there, wörld",
      chunk_size: 3,
      tool_calls: [{ id: "c1", name: "lookup", arguments: { q: "x" } }],
      usage: { prompt_tokens: 10, completion_tokens: 5, cached_tokens: 4 },
    };
    const id = await script([step, step]);
    const got = await read(resolveModel(`openai:${id}`, env()));
    expect(got).toEqual(await read(createOpenAI({ apiKey: "sk-fake", baseURL: base }).chat(id)));
    expect(
      got
        .filter((p) => p.type === "text")
        .map((p) => p.type === "text" && p.text)
        .join(""),
    ).toBe("Hello there, wörld");
    expect(got.at(-1)).toEqual({
      type: "finish",
      finishReason: "tool-calls",
      usage: { input_tokens: 10, output_tokens: 5, total_tokens: 15, cached_input_tokens: 4 },
    });
  });

  it("a refused request is the provider's to read and is retried", async () => {
    const id = await script([{ error: { status: 429, message: "slow down", retry_after_ms: 10 } }, { text: "ok" }]);
    expect((await read(resolveModel(`openai:${id}`, env()))).filter((p) => p.type === "text")).toEqual([{ type: "text", text: "ok" }]);
    const requests = (await (await fetch(`${base}/_scripts/${id}/requests`)).json()) as unknown[];
    expect(requests).toHaveLength(2);
  });

  it("an abort ends an answer that hangs after its first text", async () => {
    const id = await script([{ text: "partial answer", chunk_size: 50, hang: true }]);
    const abort = new AbortController();
    const parts: unknown[] = [];
    const reading = (async () => {
      for await (const part of streamModel(resolveModel(`openai:${id}`, env()), {
        ...callOptions({ model: null as never, messages: [{ role: "user", content: "hi" }], signal: abort.signal }),
        abortSignal: abort.signal,
      })) {
        parts.push(part);
        abort.abort(new Error("interrupted"));
      }
    })();
    await expect(reading).rejects.toThrow("interrupted");
    expect(parts).toEqual([{ type: "text", text: "partial answer" }]);
  });
});
