// The one-stage reading of streamed Chat Completions answers (src/engine/chat-stream.ts) against the provider's own
// reading of the same bytes: the same stream parts in the same order, however the body is cut into chunks, and the
// same refusals and errors. The answers come from the provider's `fetch` setting (no server is needed to serve bytes).
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { APICallError, type LanguageModelV3 } from "@ai-sdk/provider";
import { describe, expect, it } from "vitest";
import { takingFetch } from "../../src/engine/chat-stream";
import { oneStageCompatibleModel } from "../../src/engine/compatible-chat-stream";
import { streamModel } from "../../src/engine/model-stream";
import { answering, bothRequests, expectSameParts, options, sse, taken } from "./support/sse-answers";

const head = { id: "chatcmpl-1", created: 1_700_000_000, model: "m-1" };
const chunk = (delta: Record<string, unknown> | null, finish: string | null = null, extra: Record<string, unknown> = {}) => ({
  ...head,
  choices: delta === null && finish === null ? [] : [{ index: 0, delta: delta ?? {}, finish_reason: finish }],
  ...extra,
});
const usage = {
  prompt_tokens: 120,
  completion_tokens: 30,
  total_tokens: 150,
  prompt_tokens_details: { cached_tokens: 100 },
  completion_tokens_details: { reasoning_tokens: 7, accepted_prediction_tokens: 3, rejected_prediction_tokens: 1 },
};
const call = (index: number, id: string | undefined, name: string | undefined, args: string) => ({
  index,
  ...(id ? { id, type: "function" } : {}),
  function: { ...(name ? { name } : {}), arguments: args },
});

const ANSWERS: Record<string, string> = {
  text: sse(
    chunk({ role: "assistant", content: "" }),
    ...["Hé", "llo ✓ ", "日本", " and", " more"].map((t) => chunk({ content: t })),
    chunk({}, "stop"),
    chunk(null, null, { usage }),
  ),
  parallel_tools: sse(
    chunk({ role: "assistant", tool_calls: [call(0, "call_a", "lookup", ""), call(1, "call_b", "lookup", '{"q":')] }),
    chunk({ tool_calls: [call(0, undefined, undefined, '{"query":"one"}'), call(1, undefined, undefined, '"two"}')] }),
    chunk({ tool_calls: [call(2, "call_c", "lookup", '{"query":"three"}'), call(3, "call_d", "other", "{}")] }),
    chunk({}, "tool_calls", { usage }),
  ),
  arguments_before_name: sse(
    chunk({ tool_calls: [{ index: 0, id: "call_x", function: { arguments: '{"a":' } }] }),
    chunk({ tool_calls: [{ index: 0, function: { name: "lookup", arguments: "1}" } }] }),
    chunk({}, "tool_calls"),
  ),
  reasoning_then_text: sse(
    chunk({ reasoning_content: "think" }),
    chunk({ reasoning: " more" }),
    chunk({ content: "answer" }),
    chunk({
      content: [
        { type: "thinking", thinking: [{ type: "text", text: "again" }] },
        { type: "text", text: "!" },
      ],
    }),
    chunk({}, "length", { usage }),
  ),
  text_then_tool: sse(chunk({ content: "Let me look." }), chunk({ tool_calls: [call(0, "call_t", "lookup", '{"query":"x"}')] }), chunk({}, "tool_calls")),
  content_filter: sse(chunk({ content: "no" }), chunk({}, "content_filter")),
  error_chunk: sse(chunk({ content: "partial" }), { error: { message: "overloaded", type: "server_error", code: "overloaded" } }),
  no_finish_reason: sse(chunk({ content: "cut" })),
  unterminated: `data: ${JSON.stringify(chunk({ content: "a" }))}\n\ndata: ${JSON.stringify(chunk({}, "stop"))}`,
  crlf: `data: ${JSON.stringify(chunk({ content: "crlf" }))}\r\n\r\ndata: ${JSON.stringify(chunk({}, "stop"))}\r\n\r\ndata: [DONE]\r\n\r\n`,
  not_json: sse(chunk({ content: "a" }), "{not json", chunk({}, "stop")),
  proto_key: sse(chunk({ content: "a" }), `{"__proto__":{"x":1},"choices":[]}`, chunk({}, "stop")),
  no_choices: sse({ id: "x" }, chunk({}, "stop")),
  tool_call_null: sse(chunk({ content: "a" }), chunk({ tool_calls: [null] }), chunk({}, "stop")),
  wrong_types: sse(
    chunk({ content: "a" }),
    chunk({ content: 7 }),
    chunk({ tool_calls: [{ index: "0", function: {} }] }),
    { error: { code: 1 } },
    chunk({}, "stop"),
  ),
  error_beside_choices: sse(chunk({ content: "a" }), chunk({}, null, { error: { message: "late" } }), chunk({}, "stop")),
  content_parts: sse(chunk({ content: [{ type: "text", text: "a" }, { type: "image" }, { type: "text", text: 5 }] }), chunk({}, "stop")),
};

function models(serve: typeof fetch): { provider: LanguageModelV3; oneStage: LanguageModelV3 } {
  const make = (f: typeof fetch) =>
    createOpenAICompatible({ name: "openai-compatible", baseURL: "http://model.test/v1", includeUsage: true, fetch: f }).chatModel("m");
  return { provider: make(serve), oneStage: oneStageCompatibleModel(make(takingFetch(serve))) };
}

describe("one-stage reading of streamed Chat Completions answers", () => {
  for (const [name, body] of Object.entries(ANSWERS)) {
    it(`${name}: the provider's parts, whole and cut into 1, 3 and 7 byte pieces`, () => expectSameParts(models, body));
  }

  it("the loop reads the same answer from both: text, tool calls with parsed input, finish and usage", async () => {
    const read = async (model: LanguageModelV3) => {
      const out = [];
      for await (const p of streamModel(model, { ...options(), abortSignal: new AbortController().signal })) out.push(p);
      return out;
    };
    const both = models(answering(ANSWERS.parallel_tools!, 5));
    const got = await read(both.oneStage);
    expect(got).toEqual(await read(both.provider));
    expect(got.filter((p) => p.type === "tool-call").map((p) => p.type === "tool-call" && [p.toolCallId, p.input])).toEqual([
      ["call_a", { query: "one" }],
      ["call_b", { q: "two" }],
      ["call_c", { query: "three" }],
      ["call_d", {}],
    ]);
    expect(got.at(-1)).toEqual({
      type: "finish",
      finishReason: "tool-calls",
      usage: { input_tokens: 120, output_tokens: 30, total_tokens: 150, cached_input_tokens: 100 },
    });
  });

  it("a failed answer is the provider's to read: the same retryable APICallError with its status and retry-after", async () => {
    const failing: typeof fetch = async () =>
      new Response(JSON.stringify({ error: { message: "slow down" } }), { status: 429, headers: { "retry-after": "1" } });
    const error = await Promise.resolve(models(failing).oneStage.doStream(options())).catch((e: unknown) => e);
    expect(APICallError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ statusCode: 429, isRetryable: true, message: "slow down", responseHeaders: { "retry-after": "1" } });
  });

  it("the request leaves without the marker header, as the provider built it, and the answer is taken", async () => {
    const [viaProvider, viaOneStage] = await bothRequests(models, ANSWERS.text!);
    expect(viaOneStage!.url).toBe(viaProvider!.url);
    expect([...viaOneStage!.headers.keys()]).toEqual([...viaProvider!.headers.keys()]);
    expect(viaOneStage!.body).toEqual(viaProvider!.body);
    expect(await taken(models, ANSWERS.text!)).toEqual({ provider: false, oneStage: true });
  });

  it("cancelling the stream cancels the answer's body", async () => {
    let cancelled: unknown = null;
    const endless: typeof fetch = async () =>
      new Response(
        new ReadableStream({
          pull(c) {
            c.enqueue(new TextEncoder().encode(`data: ${JSON.stringify(chunk({ content: "x" }))}\n\n`));
          },
          cancel(reason) {
            cancelled = reason;
          },
        }),
        { status: 200 },
      );
    const { stream } = await models(endless).oneStage.doStream(options());
    const reader = stream.getReader();
    expect((await reader.read()).value).toEqual({ type: "stream-start", warnings: [] });
    await reader.read();
    await reader.cancel("stop");
    expect(cancelled).toBe("stop");
  });
});
