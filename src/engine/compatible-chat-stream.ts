// The openai-compatible provider's mapping of streamed Chat Completions chunks to stream parts (as
// @ai-sdk/openai-compatible maps them), read in one stage by chat-stream.ts.
import type { JSONObject, LanguageModelV3, LanguageModelV3FinishReason, LanguageModelV3StreamPart } from "@ai-sdk/provider";
import { InvalidResponseDataError } from "@ai-sdk/provider";
import { StreamingToolCallTracker } from "@ai-sdk/provider-utils";
import { type CompatibleChunk, compatibleChunkSchema, parseChunk } from "./chat-chunk-schemas";
import { answerStream, type ChunkMapper, NO_USAGE, OneStageChatModel, unifiedReason } from "./chat-stream";

/** `inner` (an openai-compatible chat model made with takingFetch) with its streamed answers read in one stage. */
export function oneStageCompatibleModel(inner: LanguageModelV3): LanguageModelV3 {
  const metadataKey = inner.provider.split(".")[0]!;
  return new OneStageChatModel(inner, async (_taken, events) => answerStream(events, (enqueue) => new CompatibleChunkMapper(enqueue, metadataKey)));
}

type Delta = NonNullable<CompatibleChunk["choices"][number]["delta"]>;
type ToolCallDelta = NonNullable<Delta["tool_calls"]>[number];
type Usage = NonNullable<CompatibleChunk["usage"]>;
type Enqueue = (part: LanguageModelV3StreamPart) => void;

/** The provider's mapping of Chat Completions chunks to stream parts, chunk by chunk. */
class CompatibleChunkMapper implements ChunkMapper {
  private tracker: StreamingToolCallTracker<ToolCallDelta>;
  /** Tool calls by index whose name has not come yet: some servers send arguments first (held, as the provider does). */
  private pending = new Map<number, { id: string | null; args: string; extra: ToolCallDelta["extra_content"] }>();
  private forwarded = new Set<number>();
  private finishReason: LanguageModelV3FinishReason | null = null;
  private usage: Usage | null = null;
  private first = true;
  private open: "text" | "reasoning" | null = null;

  constructor(
    private readonly enqueue: Enqueue,
    private readonly metadataKey: string,
  ) {
    this.tracker = new StreamingToolCallTracker<ToolCallDelta>(
      { enqueue },
      {
        // A Gemini thought signature goes back with the call, as the provider keeps it.
        extractMetadata: (delta) => {
          const signature = delta.extra_content?.google?.thought_signature;
          return signature ? { [metadataKey]: { thoughtSignature: signature } } : undefined;
        },
        buildToolCallProviderMetadata: (metadata) => metadata,
      },
    );
  }

  chunk(data: string): void {
    const value = parseChunk(compatibleChunkSchema, data);
    // A chunk with an `error` beside its choices is an error chunk too (the provider's chunk keeps unknown keys).
    if (value instanceof Error || "error" in value) {
      this.failed(value instanceof Error ? value : value.error);
      return;
    }
    if (this.first) {
      this.first = false;
      const created = value.created != null ? new Date(value.created * 1000) : undefined;
      this.enqueue({ type: "response-metadata", id: value.id ?? undefined, modelId: value.model ?? undefined, timestamp: created });
    }
    if (value.usage != null) this.usage = value.usage;
    const choice = value.choices[0];
    if (choice?.finish_reason != null) this.finishReason = { unified: unifiedReason(choice.finish_reason), raw: choice.finish_reason };
    const delta = choice?.delta;
    if (delta == null) return;
    const reasoning = delta.reasoning_content ?? delta.reasoning;
    if (reasoning) this.delta("reasoning", reasoning);
    if (typeof delta.content === "string") {
      if (delta.content) this.delta("text", delta.content);
    } else if (delta.content != null) {
      for (const part of delta.content) this.contentPart(part);
    }
    if (delta.tool_calls != null && delta.tool_calls.length > 0) {
      this.close("reasoning");
      for (const call of delta.tool_calls) this.toolCall(call);
    }
  }

  /** The body ended: what is open closes, held tool calls finish, and the finish part (an error part first without a finish reason). */
  end(): void {
    this.close(this.open);
    for (const [index, held] of this.pending) this.tracker.processDelta({ index, id: held.id, function: { arguments: held.args } });
    this.pending.clear();
    this.tracker.flush();
    if (!this.finishReason) {
      this.failed(new InvalidResponseDataError({ data: undefined, message: "Response stream ended without a finish reason." }));
    }
    const details = this.usage?.completion_tokens_details;
    const metadata: Record<string, number> = {};
    if (details?.accepted_prediction_tokens != null) metadata.acceptedPredictionTokens = details.accepted_prediction_tokens;
    if (details?.rejected_prediction_tokens != null) metadata.rejectedPredictionTokens = details.rejected_prediction_tokens;
    this.enqueue({ type: "finish", finishReason: this.finishReason!, usage: usageOf(this.usage), providerMetadata: { [this.metadataKey]: metadata } });
  }

  private failed(error: unknown): void {
    this.finishReason = { unified: "error", raw: undefined };
    this.enqueue({ type: "error", error });
  }

  /** A content part of the array form: text, or a `thinking` part's text as reasoning. */
  private contentPart(part: { type: string; text?: unknown; thinking?: unknown }): void {
    if (part.type === "text" && typeof part.text === "string" && part.text) this.delta("text", part.text);
    else if (part.type === "thinking" && Array.isArray(part.thinking)) {
      const text = part.thinking
        .filter((t) => t?.type === "text" && typeof t.text === "string")
        .map((t) => t.text)
        .join("");
      if (text) this.delta("reasoning", text);
    }
  }

  private delta(kind: "text" | "reasoning", delta: string): void {
    const id = kind === "text" ? "txt-0" : "reasoning-0";
    if (this.open !== kind) {
      this.close(this.open);
      this.enqueue({ type: kind === "text" ? "text-start" : "reasoning-start", id });
      this.open = kind;
    }
    this.enqueue({ type: kind === "text" ? "text-delta" : "reasoning-delta", id, delta });
  }

  private close(kind: "text" | "reasoning" | null): void {
    if (kind === null || this.open !== kind) return;
    this.enqueue({ type: kind === "text" ? "text-end" : "reasoning-end", id: kind === "text" ? "txt-0" : "reasoning-0" });
    this.open = null;
  }

  private toolCall(delta: ToolCallDelta): void {
    const index = delta.index;
    if (index == null || this.forwarded.has(index)) {
      this.tracker.processDelta(delta);
      return;
    }
    let held = this.pending.get(index);
    if (!held) {
      held = { id: delta.id ?? null, args: "", extra: delta.extra_content ?? null };
      this.pending.set(index, held);
    } else {
      held.id ??= delta.id ?? null;
      held.extra ??= delta.extra_content ?? null;
    }
    if (delta.function?.arguments != null) held.args += delta.function.arguments;
    const name = delta.function?.name;
    if (name == null) return;
    this.tracker.processDelta({ index, id: held.id, function: { name, arguments: held.args }, extra_content: held.extra ?? undefined });
    this.pending.delete(index);
    this.forwarded.add(index);
  }
}

/** The provider's usage reading: unknown without a usage chunk, else counts with cached input tokens split out. */
function usageOf(usage: Usage | null): Extract<LanguageModelV3StreamPart, { type: "finish" }>["usage"] {
  if (!usage) return NO_USAGE;
  const input = usage.prompt_tokens ?? 0;
  const output = usage.completion_tokens ?? 0;
  const cached = usage.prompt_tokens_details?.cached_tokens ?? 0;
  const reasoning = usage.completion_tokens_details?.reasoning_tokens ?? 0;
  return {
    inputTokens: { total: input, noCache: input - cached, cacheRead: cached, cacheWrite: undefined },
    outputTokens: { total: output, text: Math.max(0, output - reasoning), reasoning },
    raw: usage as JSONObject,
  };
}
