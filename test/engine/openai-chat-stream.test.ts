// The one-stage reading of streamed `openai:` Chat Completions answers (src/engine/openai-chat-stream.ts) against
// @ai-sdk/openai's own reading of the same bytes: the same stream parts in the same order, however the body is cut,
// the same error chunks thrown from doStream before any output, and the same stream errors.
import { createOpenAI } from "@ai-sdk/openai";
import { APICallError, type LanguageModelV3 } from "@ai-sdk/provider";
import { describe, expect, it } from "vitest";
import { takingFetch } from "../../src/engine/chat-stream";
import { oneStageOpenAIChatModel } from "../../src/engine/openai-chat-stream";
import { answering, bothRequests, expectSameParts, options, parts, sse, stalling, taken } from "./support/sse-answers";

const head = { id: "chatcmpl-1", object: "chat.completion.chunk", created: 1_700_000_000, model: "gpt-x", system_fingerprint: "fp" };
const chunk = (delta: Record<string, unknown> | null, finish: string | null = null, extra: Record<string, unknown> = {}) => ({
  ...head,
  choices: delta === null && finish === null ? [] : [{ index: 0, delta: delta ?? {}, finish_reason: finish, ...extra }],
});
const usage = {
  prompt_tokens: 120,
  completion_tokens: 30,
  total_tokens: 150,
  prompt_tokens_details: { cached_tokens: 100, cache_write_tokens: 5, audio_tokens: 0 },
  completion_tokens_details: { reasoning_tokens: 7, accepted_prediction_tokens: 3, rejected_prediction_tokens: 1, audio_tokens: 0 },
};
const usageChunk = { ...head, choices: [], usage };
const call = (index: number, id: string | undefined, name: string | undefined, args: string) => ({
  index,
  ...(id ? { id, type: "function" } : {}),
  function: { ...(name ? { name } : {}), arguments: args },
});
const logprob = (token: string) => ({ token, logprob: -0.5, bytes: [1, 2], top_logprobs: [{ token, logprob: -0.5, bytes: [1] }] });
const citation = (url: string) => ({ type: "url_citation", url_citation: { start_index: 0, end_index: 4, url, title: `about ${url}` } });
const failure = { error: { message: "The server is overloaded", type: "server_error", code: "overloaded", param: null } };

const ANSWERS: Record<string, string> = {
  text_with_usage: sse(
    chunk({ role: "assistant", content: "", refusal: null }),
    ...["Hé", "llo ✓ ", "日本", " and", " more"].map((t) => chunk({ content: t })),
    chunk({}, "stop"),
    usageChunk,
  ),
  refusal: sse(chunk({ role: "assistant", content: "", refusal: "" }), chunk({ refusal: "I can't" }), chunk({ refusal: " help." }), chunk({}, "stop")),
  parallel_tools: sse(
    chunk({ role: "assistant", content: null, tool_calls: [call(0, "call_a", "lookup", ""), call(1, "call_b", "lookup", '{"q":')] }),
    chunk({ tool_calls: [call(0, undefined, undefined, '{"query":"one"}'), call(1, undefined, undefined, '"two"}')] }),
    chunk({ tool_calls: [call(2, "call_c", "lookup", '{"query":"three"}'), call(3, "call_d", "other", "{}")] }),
    chunk({}, "tool_calls"),
    usageChunk,
  ),
  text_then_tool: sse(chunk({ content: "Let me look." }), chunk({ tool_calls: [call(0, "call_t", "lookup", '{"query":"x"}')] }), chunk({}, "tool_calls")),
  annotations: sse(chunk({ content: "See this" }), chunk({ annotations: [citation("https://a.test"), citation("https://b.test")] }), chunk({}, "stop")),
  logprobs: sse(
    chunk({ content: "Hi" }, null, { logprobs: { content: [logprob("Hi")], refusal: null } }),
    chunk({ content: "!" }, null, { logprobs: { content: [logprob("!")] } }),
    chunk({ refusal: "no" }, null, { logprobs: { content: null, refusal: [logprob("no")] } }),
    chunk({}, "stop"),
  ),
  metadata_later: sse({ choices: [{ index: 0, delta: { role: "assistant" } }] }, chunk({ content: "x" }), chunk({}, "length")),
  error_after_output: sse(chunk({ content: "partial" }), failure),
  error_then_finish_reason: sse(chunk({ content: "partial" }), failure, chunk({}, "stop")),
  no_finish_reason: sse(chunk({ content: "cut" })),
  not_json: sse(chunk({ content: "a" }), "{not json", chunk({}, "stop")),
  proto_key: sse(chunk({ content: "a" }), `{"__proto__":{"x":1},"choices":[]}`, chunk({}, "stop")),
  not_json_first: sse("{not json", chunk({ content: "a" }), chunk({}, "stop")),
  wrong_types: sse(chunk({ content: "a" }), chunk({ content: 7 }), { error: { code: 1 } }, chunk({}, "stop")),
  tool_call_null: sse(chunk({ content: "a" }), chunk({ tool_calls: [null] }), chunk({ tool_calls: [{ index: "0", function: {} }] }), chunk({}, "stop")),
  error_beside_choices: sse(chunk({ content: "a" }), { ...chunk({}), error: { message: "late" } }, chunk({}, "stop")),
  empty_content_only: sse(chunk({ content: "" }), chunk({}, "stop")),
  unterminated: `data: ${JSON.stringify(chunk({ content: "a" }))}\n\ndata: ${JSON.stringify(chunk({}, "stop"))}`,
  crlf: `data: ${JSON.stringify(chunk({ content: "crlf" }))}\r\n\r\ndata: ${JSON.stringify(chunk({}, "stop"))}\r\n\r\ndata: [DONE]\r\n\r\n`,
};

function models(serve: typeof fetch): { provider: LanguageModelV3; oneStage: LanguageModelV3 } {
  const make = (f: typeof fetch) => createOpenAI({ apiKey: "sk-test", baseURL: "http://model.test/v1", fetch: f }).chat("gpt-x");
  return { provider: make(serve), oneStage: oneStageOpenAIChatModel(make(takingFetch(serve))) };
}

/** What doStream throws (or "returned"), with the fields a retry and a report read. */
async function thrown(model: LanguageModelV3) {
  const error = await model.doStream(options()).then(
    () => "returned",
    (e: unknown) => e,
  );
  if (!APICallError.isInstance(error)) return error;
  const { message, statusCode, isRetryable, url, requestBodyValues, responseHeaders, responseBody, data } = error;
  return { message, statusCode, isRetryable, url, requestBodyValues, responseHeaders, responseBody, data };
}

describe("one-stage reading of streamed openai Chat Completions answers", () => {
  for (const [name, body] of Object.entries(ANSWERS)) {
    it(`${name}: the provider's parts, whole and cut into 1, 3 and 7 byte pieces`, () => expectSameParts(models, body));
  }

  it("the request leaves without the marker header, as the provider built it, and the answer is taken", async () => {
    const [viaProvider, viaOneStage] = await bothRequests(models, ANSWERS.text_with_usage!);
    expect([viaOneStage!.url, [...viaOneStage!.headers], viaOneStage!.body]).toEqual([viaProvider!.url, [...viaProvider!.headers], viaProvider!.body]);
    expect(viaOneStage!.headers.has("x-agent-runtime-take")).toBe(false);
    expect(await taken(models, ANSWERS.text_with_usage!)).toEqual({ provider: false, oneStage: true });
  });

  it("the finish carries usage with cached, cache-written and reasoning tokens, predictions and logprobs as the provider reads them", async () => {
    const body = sse(chunk({ content: "Hi" }, null, { logprobs: { content: [logprob("Hi")] } }), chunk({}, "stop"), usageChunk);
    const finish = (await parts(models(answering(body, 0)).oneStage)).at(-1);
    expect(finish).toEqual({
      type: "finish",
      finishReason: { unified: "stop", raw: "stop" },
      usage: {
        inputTokens: { total: 120, noCache: 15, cacheRead: 100, cacheWrite: 5 },
        outputTokens: { total: 30, text: 23, reasoning: 7 },
        raw: {
          prompt_tokens: 120,
          completion_tokens: 30,
          total_tokens: 150,
          prompt_tokens_details: { cached_tokens: 100, cache_write_tokens: 5 },
          completion_tokens_details: { reasoning_tokens: 7, accepted_prediction_tokens: 3, rejected_prediction_tokens: 1 },
        },
      },
      providerMetadata: {
        openai: {
          acceptedPredictionTokens: 3,
          rejectedPredictionTokens: 1,
          logprobs: [{ token: "Hi", logprob: -0.5, top_logprobs: [{ token: "Hi", logprob: -0.5 }] }],
        },
      },
    });
  });

  const early: Record<string, string> = {
    overloaded: sse(chunk({ role: "assistant", content: "" }), failure, chunk({ content: "never" })),
    quota: sse({ error: { message: "You exceeded your quota", type: "insufficient_quota", code: "insufficient_quota" } }),
    numeric_code: sse(chunk({ role: "assistant" }), { error: { message: "bad", code: "400" } }),
    bare_message: sse({ error: { message: "something" } }),
  };
  for (const [name, body] of Object.entries(early)) {
    it(`an error chunk before any output (${name}) is thrown from doStream as the provider throws it`, async () => {
      const expected = await thrown(models(answering(body, 0)).provider);
      expect(expected).toMatchObject({ statusCode: expect.any(Number), url: "http://model.test/v1/chat/completions" });
      for (const size of [0, 1, 7]) expect(await thrown(models(answering(body, size)).oneStage)).toEqual(expected);
    });
  }

  it("an early overloaded error is retryable and a quota error is not", async () => {
    expect(await thrown(models(answering(early.overloaded!, 0)).oneStage)).toMatchObject({ statusCode: 503, isRetryable: true });
    expect(await thrown(models(answering(early.quota!, 0)).oneStage)).toMatchObject({ statusCode: 429, isRetryable: false });
    expect(await thrown(models(answering(early.bare_message!, 0)).oneStage)).toMatchObject({
      statusCode: 500,
      isRetryable: true,
      message: "OpenAI stream failed before any output was generated",
    });
  });

  it("a tool call the mapping cannot read errors the stream as the provider's does, and the body is cancelled", async () => {
    const first = `data: ${JSON.stringify(chunk({ tool_calls: [{ index: 0, function: { arguments: '{"a":1}' } }] }))}\n\n`;
    const read = async (model: LanguageModelV3) => {
      const { stream } = await model.doStream(options());
      const reader = stream.getReader();
      try {
        while (!(await reader.read()).done);
        return "ended";
      } catch (err) {
        return (err as Error).message;
      }
    };
    const expected = await read(models(stalling(first).fetch).provider);
    expect(expected).toContain("function.name");
    const body = stalling(first);
    expect(await read(models(body.fetch).oneStage)).toBe(expected);
    expect(body.cancelled()).toBeInstanceOf(Error);
  });

  it("an abort while a read waits for the body errors the stream with the abort's reason", async () => {
    const abort = new AbortController();
    const body = stalling(`data: ${JSON.stringify(chunk({ content: "a" }))}\n\n`, abort.signal);
    const { stream } = await models(body.fetch).oneStage.doStream(options());
    const reader = stream.getReader();
    const got = [(await reader.read()).value, (await reader.read()).value, (await reader.read()).value];
    expect(got.map((p) => p?.type)).toEqual(["stream-start", "response-metadata", "text-start"]);
    await reader.read(); // the delta
    const pending = reader.read();
    abort.abort(new Error("interrupted"));
    await expect(pending).rejects.toThrow("interrupted");
  });

  it("a cancel while a read waits for the body cancels the body and ends the read", async () => {
    const body = stalling(`data: ${JSON.stringify(chunk({ content: "a" }))}\n\n`);
    const { stream } = await models(body.fetch).oneStage.doStream(options());
    const reader = stream.getReader();
    for (let i = 0; i < 4; i++) await reader.read(); // stream-start, metadata, text-start, delta
    const pending = reader.read();
    await reader.cancel("stop");
    expect(await pending).toEqual({ done: true, value: undefined });
    expect(body.cancelled()).toBe("stop");
  });
});
