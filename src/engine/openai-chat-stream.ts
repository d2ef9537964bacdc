// The openai provider's mapping of streamed Chat Completions chunks to stream parts (as @ai-sdk/openai's
// OpenAIChatLanguageModel.doStream maps them), read in one stage by chat-stream.ts: an error chunk before any output
// is thrown from doStream as an APICallError, so the call is retried like a failed request.
import type { JSONObject, LanguageModelV3, LanguageModelV3FinishReason, LanguageModelV3StreamPart } from "@ai-sdk/provider";
import { generateId, type StreamingToolCallDelta, StreamingToolCallTracker } from "@ai-sdk/provider-utils";
import { type OpenAIChunk as Chunk, openAIChunkSchema, parseChunk } from "./chat-chunk-schemas";
import { answerStream, type ChunkMapper, NO_USAGE, OneStageChatModel, type SseEvents, type TakenAnswer, unifiedReason } from "./chat-stream";
import { openAIStreamError } from "./openai-stream-error";

/** `inner` (`createOpenAI(...).chat(model)` made with takingFetch) with its streamed answers read in one stage. */
export function oneStageOpenAIChatModel(inner: LanguageModelV3): LanguageModelV3 {
  return new OneStageChatModel(inner, async (taken, events) => {
    await throwIfErrorBeforeOutput(taken, events);
    return answerStream(events, (enqueue) => new OpenAIChunkMapper(enqueue));
  });
}

/** Reads ahead to the first output chunk: an error chunk before it is the call's failure (the provider's throwIfOpenAIStreamErrorBeforeOutput). */
async function throwIfErrorBeforeOutput(taken: TakenAnswer, events: SseEvents): Promise<void> {
  const ahead: string[] = [];
  try {
    for (;;) {
      const data = await events.read();
      if (data === null) return;
      ahead.push(data);
      const value = parseChunk(openAIChunkSchema, data);
      if (value instanceof Error) return;
      if ("error" in value) {
        await events.cancel();
        throw openAIStreamError(value.error, taken, Object.fromEntries(taken.response.headers));
      }
      if (isOutputChunk(value)) return;
    }
  } finally {
    events.unread(ahead);
  }
}

function isOutputChunk(chunk: Chunk): boolean {
  return chunk.choices.some(({ delta }) => !!delta?.content || !!delta?.refusal || !!delta?.tool_calls?.length || !!delta?.annotations?.length);
}

type Logprob = NonNullable<NonNullable<Chunk["choices"][number]["logprobs"]>["content"]>[number];

/** The provider's mapping, chunk by chunk: one text part ("0"), tool calls through the tracker, the finish at the end. */
class OpenAIChunkMapper implements ChunkMapper {
  private readonly tracker: StreamingToolCallTracker<StreamingToolCallDelta>;
  private finishReason: LanguageModelV3FinishReason = { unified: "other", raw: undefined };
  private rawFinishReason: string | undefined;
  private usage: Chunk["usage"];
  private metadataSent = false;
  private textOpen = false;
  private hasRefusal = false;
  private logprobs: Logprob[] | null = null;
  private readonly metadata: Record<string, unknown> = {};

  constructor(private readonly enqueue: (part: LanguageModelV3StreamPart) => void) {
    this.tracker = new StreamingToolCallTracker({ enqueue }, { generateId, typeValidation: "if-present" });
  }

  chunk(data: string): void {
    const value = parseChunk(openAIChunkSchema, data);
    if (value instanceof Error || "error" in value) {
      this.failed(value instanceof Error ? value : value.error);
      return;
    }
    if (!this.metadataSent) {
      const metadata = { id: value.id ?? undefined, modelId: value.model ?? undefined, timestamp: value.created ? new Date(value.created * 1000) : undefined };
      if (metadata.id || metadata.modelId || metadata.timestamp) {
        this.metadataSent = true;
        this.enqueue({ type: "response-metadata", ...metadata });
      }
    }
    if (value.usage != null) {
      this.usage = value.usage;
      const details = value.usage.completion_tokens_details;
      if (details?.accepted_prediction_tokens != null) this.metadata.acceptedPredictionTokens = details.accepted_prediction_tokens;
      if (details?.rejected_prediction_tokens != null) this.metadata.rejectedPredictionTokens = details.rejected_prediction_tokens;
    }
    const choice = value.choices[0];
    if (choice?.finish_reason != null) this.rawFinishReason = choice.finish_reason;
    const { content, refusal } = choice?.logprobs ?? {};
    if (content != null || refusal != null) (this.logprobs ??= []).push(...(content ?? []), ...(refusal ?? []));
    const delta = choice?.delta;
    if (delta == null) return;
    if (delta.content) this.text(delta.content);
    if (delta.refusal) {
      this.hasRefusal = true;
      this.text(delta.refusal);
    }
    if (delta.content === "" && !delta.refusal) this.text("");
    for (const call of delta.tool_calls ?? []) this.tracker.processDelta(call);
    for (const { url_citation } of delta.annotations ?? []) {
      this.enqueue({ type: "source", sourceType: "url", id: generateId(), url: url_citation.url, title: url_citation.title });
    }
  }

  end(): void {
    if (this.textOpen) this.enqueue({ type: "text-end", id: "0" });
    this.tracker.flush();
    if (this.rawFinishReason != null) this.finishReason = { unified: unifiedReason(this.rawFinishReason, this.hasRefusal), raw: this.rawFinishReason };
    if (this.logprobs) this.metadata.logprobs = this.logprobs;
    this.enqueue({ type: "finish", finishReason: this.finishReason, usage: usageOf(this.usage), providerMetadata: { openai: this.metadata as JSONObject } });
  }

  private failed(error: unknown): void {
    this.finishReason = { unified: "error", raw: undefined };
    this.rawFinishReason = undefined;
    this.enqueue({ type: "error", error });
  }

  private text(delta: string): void {
    if (!this.textOpen) {
      this.enqueue({ type: "text-start", id: "0" });
      this.textOpen = true;
    }
    this.enqueue({ type: "text-delta", id: "0", delta });
  }
}

/** The provider's usage reading (convertOpenAIChatUsage): cached and cache-written input, reasoning output split out. */
function usageOf(usage: Chunk["usage"]): Extract<LanguageModelV3StreamPart, { type: "finish" }>["usage"] {
  if (usage == null) return NO_USAGE;
  const input = usage.prompt_tokens ?? 0;
  const output = usage.completion_tokens ?? 0;
  const cached = usage.prompt_tokens_details?.cached_tokens ?? 0;
  const written = usage.prompt_tokens_details?.cache_write_tokens ?? undefined;
  const reasoning = usage.completion_tokens_details?.reasoning_tokens ?? 0;
  return {
    inputTokens: { total: input, noCache: input - cached - (written ?? 0), cacheRead: cached, cacheWrite: written },
    outputTokens: { total: output, text: Math.max(0, output - reasoning), reasoning },
    raw: usage as JSONObject,
  };
}
