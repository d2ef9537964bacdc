// The fake Anthropic Messages API (POST /anthropic/v1/messages on the fake server of fake-openai.ts, the
// deployment's ANTHROPIC_BASE_URL): answers a scripted Step as the streamed Messages events @ai-sdk/anthropic
// reads (message_start, content blocks, message_delta with the usage, message_stop). Scripts are shared with
// the Chat Completions fake: the request's `model` is the script id.
import type { ServerResponse } from "node:http";
import type { Step } from "./fake-model";

/** A retry-after-ms header for a scripted error that asks for one. */
export function retryAfter(step: Step): Record<string, string> {
  return step.error?.retry_after_ms !== undefined ? { "retry-after-ms": String(step.error.retry_after_ms) } : {};
}

export async function anthropicMessages(res: ServerResponse, step: Step, model: string): Promise<void> {
  if (step.error) {
    res.writeHead(step.error.status, { "content-type": "application/json", ...retryAfter(step) });
    res.end(JSON.stringify({ type: "error", error: { type: "overloaded_error", message: step.error.message } }));
    return;
  }
  const { prompt_tokens, completion_tokens, cached_tokens = 0 } = step.usage ?? { prompt_tokens: 10, completion_tokens: 5 };
  const events: [string, unknown][] = [
    [
      "message_start",
      {
        message: {
          id: `msg_fake_${Date.now()}`,
          type: "message",
          role: "assistant",
          model,
          content: [],
          stop_reason: null,
          // Anthropic counts cache reads apart from input_tokens.
          usage: { input_tokens: prompt_tokens - cached_tokens, cache_read_input_tokens: cached_tokens, cache_creation_input_tokens: 0, output_tokens: 1 },
        },
      },
    ],
  ];
  let index = 0;
  if (step.text) {
    events.push(["content_block_start", { index, content_block: { type: "text", text: "" } }]);
    events.push(["content_block_delta", { index, delta: { type: "text_delta", text: step.text } }]);
    events.push(["content_block_stop", { index }]);
    index += 1;
  }
  for (const [i, call] of (step.tool_calls ?? []).entries()) {
    const args = typeof call.arguments === "string" ? call.arguments : JSON.stringify(call.arguments ?? {});
    events.push(["content_block_start", { index, content_block: { type: "tool_use", id: call.id ?? `toolu_${i}`, name: call.name, input: {} } }]);
    events.push(["content_block_delta", { index, delta: { type: "input_json_delta", partial_json: args } }]);
    events.push(["content_block_stop", { index }]);
    index += 1;
  }
  const stop = step.tool_calls?.length ? "tool_use" : "end_turn";
  events.push(["message_delta", { delta: { stop_reason: stop, stop_sequence: null }, usage: { output_tokens: completion_tokens } }]);
  events.push(["message_stop", {}]);

  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
  for (const [i, [type, data]] of events.entries()) {
    if (step.delay_ms) await new Promise((resolve) => setTimeout(resolve, step.delay_ms));
    if (res.destroyed) return;
    res.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...(data as object) })}\n\n`);
    if (step.hang && i === 0) return void (await new Promise((resolve) => res.once("close", resolve)));
  }
  res.end();
}
