// Checks the scripted fake Chat Completions server against the real AI SDK client stack
// (@ai-sdk/openai-compatible + ai), so other tests can rely on it behaving like a provider.
import { env } from "cloudflare:test";
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { APICallError, generateText, jsonSchema, streamText, type TextStreamPart, type ToolSet, tool } from "ai";
import { describe, expect, it } from "vitest";
import { requests, script, toolRequests, toolURL, uniqueId } from "../support/fake-model";

const baseURL = (env as unknown as { OPENAI_COMPATIBLE_BASE_URL: string }).OPENAI_COMPATIBLE_BASE_URL;
const provider = createOpenAICompatible({ baseURL, name: "fake", includeUsage: true });

const tools = {
  get_weather: tool({
    description: "Current weather for a city",
    inputSchema: jsonSchema<{ city: string }>({
      type: "object",
      properties: { city: { type: "string" } },
      required: ["city"],
      additionalProperties: false,
    }),
  }),
  search: tool({
    description: "Web search",
    inputSchema: jsonSchema<{ query: string; limit?: number }>({
      type: "object",
      properties: { query: { type: "string" }, limit: { type: "number" } },
      required: ["query"],
      additionalProperties: false,
    }),
  }),
};

async function collect<T extends ToolSet>(stream: AsyncIterable<TextStreamPart<T>>): Promise<TextStreamPart<T>[]> {
  const parts: TextStreamPart<T>[] = [];
  for await (const part of stream) parts.push(part);
  return parts;
}

describe("fake OpenAI-compatible server", () => {
  it("streams text in chunk_size deltas with usage", async () => {
    const id = uniqueId("text");
    const text = "Hello from the fake model!";
    await script(id, [{ text, chunk_size: 5, usage: { prompt_tokens: 12, completion_tokens: 7 } }]);

    const result = streamText({ model: provider(id), prompt: "hi" });
    const parts = await collect(result.fullStream);
    const deltas = parts.flatMap((p) => (p.type === "text-delta" ? [p.text] : []));

    expect(deltas).toEqual(["Hello", " from", " the ", "fake ", "model", "!"]);
    expect(deltas.join("")).toBe(text);
    expect(await result.text).toBe(text);
    expect(await result.finishReason).toBe("stop");
    const usage = await result.usage;
    expect(usage.inputTokens).toBe(12);
    expect(usage.outputTokens).toBe(7);
    expect(usage.totalTokens).toBe(19);
  });

  it("streams parallel tool calls and records the request", async () => {
    const id = uniqueId("tools");
    await script(id, [
      {
        text: "Let me check.",
        tool_calls: [
          { id: "call_weather", name: "get_weather", arguments: { city: "Paris" } },
          // No id: the server assigns call_<n>; raw string arguments are sent as-is.
          { name: "search", arguments: '{"query":"eiffel tower height","limit":3}' },
        ],
      },
    ]);

    const result = streamText({
      model: provider(id),
      system: "You are terse.",
      prompt: "Weather in Paris, and how tall is the Eiffel tower?",
      tools,
    });
    const parts = await collect(result.fullStream);
    const calls = parts.flatMap((p) => (p.type === "tool-call" ? [p] : []));

    expect(calls).toHaveLength(2);
    expect(calls[0]).toMatchObject({ toolName: "get_weather", toolCallId: "call_weather", input: { city: "Paris" } });
    expect(calls[1]).toMatchObject({ toolName: "search", input: { query: "eiffel tower height", limit: 3 } });
    expect(calls[1]!.toolCallId).toMatch(/^call_\d+$/);
    expect(await result.text).toBe("Let me check.");
    expect(await result.finishReason).toBe("tool-calls");

    const [req, ...rest] = await requests(id);
    expect(rest).toEqual([]);
    expect(req.model).toBe(id);
    expect(req.stream).toBe(true);
    expect(req.stream_options).toEqual({ include_usage: true });
    expect(req.messages).toEqual([
      { role: "system", content: "You are terse." },
      { role: "user", content: "Weather in Paris, and how tall is the Eiffel tower?" },
    ]);
    expect(req.tools.map((t: { function: { name: string } }) => t.function.name)).toEqual(["get_weather", "search"]);
    expect(req.tools[0]).toMatchObject({
      type: "function",
      function: {
        name: "get_weather",
        description: "Current weather for a city",
        parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
      },
    });
  });

  it("surfaces a scripted error step as an API error", async () => {
    const id = uniqueId("error");
    await script(id, [{ error: { status: 400, message: "context length exceeded" } }]);

    // onError: the error is asserted below; keep the default console logging quiet.
    const result = streamText({ model: provider(id), prompt: "hi", maxRetries: 0, onError: () => {} });
    const errors = (await collect(result.fullStream)).flatMap((p) => (p.type === "error" ? [p.error] : []));

    expect(errors).toHaveLength(1);
    const err = errors[0];
    expect(APICallError.isInstance(err)).toBe(true);
    expect((err as APICallError).statusCode).toBe(400);
    expect((err as APICallError).message).toBe("context length exceeded");
  });

  it("answers 500 'script <id> exhausted' when no steps remain", async () => {
    const id = uniqueId("exhausted");
    await script(id, [{ text: "only one" }]);
    expect((await generateText({ model: provider(id), prompt: "1" })).text).toBe("only one");

    const err = await generateText({ model: provider(id), prompt: "2", maxRetries: 0 }).catch((e: unknown) => e);
    expect(APICallError.isInstance(err)).toBe(true);
    expect((err as APICallError).statusCode).toBe(500);
    expect((err as APICallError).message).toBe(`script ${id} exhausted`);
    // Both attempts are recorded, in order.
    expect((await requests(id)).map((r) => r.messages.at(-1).content)).toEqual(["1", "2"]);
  });

  it("serves non-streaming completions (generateText) with text, tool calls and usage", async () => {
    const id = uniqueId("generate");
    await script(id, [
      { text: "Plain answer.", usage: { prompt_tokens: 3, completion_tokens: 2 } },
      { tool_calls: [{ name: "get_weather", arguments: { city: "Oslo" } }] },
    ]);

    const first = await generateText({ model: provider(id), prompt: "q1" });
    expect(first.text).toBe("Plain answer.");
    expect(first.finishReason).toBe("stop");
    expect(first.usage).toMatchObject({ inputTokens: 3, outputTokens: 2, totalTokens: 5 });

    const second = await generateText({ model: provider(id), prompt: "q2", tools });
    expect(second.finishReason).toBe("tool-calls");
    expect(second.toolCalls).toHaveLength(1);
    expect(second.toolCalls[0]).toMatchObject({ toolName: "get_weather", input: { city: "Oslo" } });
    expect(second.toolCalls[0]!.toolCallId).toMatch(/^call_\d+$/);
    expect(second.usage).toMatchObject({ inputTokens: 10, outputTokens: 5 });

    const recorded = await requests(id);
    expect(recorded).toHaveLength(2);
    expect(recorded[0].stream).toBeUndefined();
  });

  it("replacing a script resets its steps and recorded requests", async () => {
    const id = uniqueId("replace");
    await script(id, [{ text: "old" }, { text: "old 2" }]);
    await generateText({ model: provider(id), prompt: "x" });
    await script(id, [{ text: "new" }]);
    expect(await requests(id)).toEqual([]);
    expect((await generateText({ model: provider(id), prompt: "y" })).text).toBe("new");
  });

  it("honours delay_ms between streamed chunks", async () => {
    const id = uniqueId("delay");
    await script(id, [{ text: "abcdefgh", chunk_size: 4, delay_ms: 40 }]);
    const started = Date.now();
    const result = streamText({ model: provider(id), prompt: "hi" });
    expect(await result.text).toBe("abcdefgh");
    // 2 text chunks + finish + usage, each preceded by a 40 ms pause.
    expect(Date.now() - started).toBeGreaterThanOrEqual(150);
  });

  it("a hang step streams its first chunk and survives the client aborting", async () => {
    const id = uniqueId("hang");
    await script(id, [{ text: "first chunk then nothing", chunk_size: 6, hang: true }, { text: "still alive" }]);

    const abort = new AbortController();
    const result = streamText({ model: provider(id), prompt: "hi", abortSignal: abort.signal });
    const deltas: string[] = [];
    let aborted = false;
    for await (const part of result.fullStream) {
      if (part.type === "text-delta") {
        deltas.push(part.text);
        abort.abort();
      }
      if (part.type === "abort") aborted = true;
    }
    expect(deltas).toEqual(["first "]);
    expect(aborted).toBe(true);

    // The server is unharmed and moves on to the next step.
    expect((await generateText({ model: provider(id), prompt: "again" })).text).toBe("still alive");
  });

  it("serves the webhook tool endpoints and records their requests", async () => {
    const marker = uniqueId("tool-session");
    const body = (tool: string) => ({ tool, args: { x: 1 }, session_id: marker, turn_id: "t1", tool_call_id: "c1" });
    const post = (endpoint: string, payload: unknown) =>
      fetch(toolURL(endpoint), {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(payload),
      });

    const echo = await post("echo", body("echo"));
    expect(echo.status).toBe(200);
    expect(await echo.json()).toEqual({ received: body("echo") });

    const started = Date.now();
    const slow = await post("slow?ms=120", body("slow"));
    expect(slow.status).toBe(200);
    expect(await slow.json()).toEqual({ ok: true });
    expect(Date.now() - started).toBeGreaterThanOrEqual(100);

    const fail = await post("fail", body("fail"));
    expect(fail.status).toBe(500);
    expect(await fail.text()).toBe("tool exploded");

    const mine = (await toolRequests()).filter((r) => r?.session_id === marker);
    expect(mine.map((r) => r.tool)).toEqual(["echo", "slow", "fail"]);

    const missing = await fetch(`${baseURL}/nope`);
    expect(missing.status).toBe(404);
    expect(await missing.json()).toMatchObject({ error: { type: "not_found" } });
  });
});
