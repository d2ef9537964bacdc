// One streamed model call, straight through the provider's LanguageModelV3 interface (the AI SDK's
// provider packages). The runtime drives the loop itself, one call per step; `streamText` would validate
// the whole conversation with zod, convert it, and pipe every chunk through its own stream pipeline again
// on each call, a cost that grows with the session (docs/performance.md). Here the conversation goes to
// the provider as it is, and its stream parts are read directly.
import {
  APICallError,
  type JSONSchema7,
  type LanguageModelV3,
  type LanguageModelV3CallOptions,
  type LanguageModelV3FilePart,
  type LanguageModelV3FunctionTool,
  type LanguageModelV3Message,
  type LanguageModelV3Prompt,
  type LanguageModelV3StreamPart,
  type LanguageModelV3TextPart,
  type LanguageModelV3ToolResultPart,
} from "@ai-sdk/provider";
import { retryWithExponentialBackoff, secureJsonParse } from "@ai-sdk/provider-utils";
import type { AssistantModelMessage, FilePart, ModelMessage, ToolResultPart, UserModelMessage } from "ai";
import { errorMessage } from "../protocol/errors";
import type { Usage } from "./turn-state";

export type ModelTool = LanguageModelV3FunctionTool;

export interface ModelRequest {
  model: LanguageModelV3;
  system?: string;
  messages: ModelMessage[];
  tools?: ModelTool[];
  toolChoice?: "none";
  temperature?: number;
  maxOutputTokens?: number;
  /** Asks the provider for JSON matching the schema (output_schema); the runtime validates the answer. */
  jsonSchema?: JSONSchema7;
  signal: AbortSignal;
}

export type ModelPart =
  | { type: "text"; text: string }
  | { type: "tool-call"; toolCallId: string; toolName: string; input: unknown; invalid?: string }
  /** `model`: the model spec that answered, when a replay's recording says (a recorded fallback). */
  | { type: "finish"; usage: Usage; finishReason: string; model?: string };

/** A provider error the provider itself marked as worth retrying (429, 5xx) is retried this often. */
const MAX_RETRIES = 2;
/** A retry-after the provider asks for is honoured up to this long; longer, the backoff's delay is used. */
const MAX_RETRY_AFTER_MS = 60_000;

/** The provider failed every attempt; `retryable`: each failure was a retryable one (429, 5xx, network). */
export class RetriesFailed extends Error {
  constructor(
    message: string,
    readonly retryable: boolean,
  ) {
    super(message);
  }
}

/**
 * The call's stream as the loop needs it, up to its `finish`; a provider failure, an `error` part or a stream
 * that ends without finishing throws. `options` is the provider call (callOptions), its abortSignal the call's.
 */
export async function* streamModel(model: LanguageModelV3, options: LanguageModelV3CallOptions & { abortSignal: AbortSignal }): AsyncGenerator<ModelPart> {
  const signal = options.abortSignal;
  const retrying = retryWithExponentialBackoff({
    maxRetries: MAX_RETRIES,
    abortSignal: signal,
    shouldRetry: (err) => APICallError.isInstance(err) && err.isRetryable,
    getDelayInMs: retryDelay,
    createRetryError: ({ message, reason }) => new RetriesFailed(message, reason === "maxRetriesExceeded"),
  });
  const { stream } = await retrying(() => model.doStream(options)); // the same request for every attempt
  const reader = stream.getReader();
  // A stream that stalls must still end on abort (interrupt, wall clock): cancelling ends the pending read.
  const cancel = () => void reader.cancel(signal.reason).catch(() => {});
  signal.addEventListener("abort", cancel, { once: true });
  if (signal.aborted) cancel();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      signal.throwIfAborted();
      // A stream cut short is not an answer, even if some text came through.
      if (done) throw new Error("The model's response stream ended without finishing");
      const part = toModelPart(value);
      if (part) yield part;
      if (part?.type === "finish") return;
    }
  } finally {
    signal.removeEventListener("abort", cancel);
    cancel(); // a no-op for a finished stream; otherwise the consumer stopped early (a thrown error)
  }
}

function toModelPart(part: LanguageModelV3StreamPart): ModelPart | null {
  switch (part.type) {
    case "text-delta":
      return part.delta ? { type: "text", text: part.delta } : null;
    case "tool-call": {
      if (part.providerExecuted) return null;
      const parsed = parseInput(part.input);
      return { type: "tool-call", toolCallId: part.toolCallId, toolName: part.toolName, ...parsed };
    }
    case "finish": {
      // Some providers end a cut-off stream with a finish part instead of an error part.
      if (part.finishReason.unified === "error") {
        throw new Error(`The model's response ended in an error${part.finishReason.raw ? ` (${part.finishReason.raw})` : ""}`);
      }
      const input = part.usage.inputTokens.total ?? 0;
      const output = part.usage.outputTokens.total ?? 0;
      const cached = part.usage.inputTokens.cacheRead ?? 0;
      const usage: Usage = { input_tokens: input, output_tokens: output, total_tokens: input + output, ...(cached > 0 ? { cached_input_tokens: cached } : {}) };
      const answered = part.providerMetadata?.[REPLAY_METADATA]?.model;
      return { type: "finish", finishReason: part.finishReason.unified, usage, ...(typeof answered === "string" ? { model: answered } : {}) };
    }
    case "error":
      throw part.error instanceof Error ? part.error : new Error(errorMessage(part.error));
    default:
      return null; // reasoning, sources, metadata and warnings are not part of the runtime's contract
  }
}

/** The provider metadata key under which a replayed call names the model that answered it originally. */
export const REPLAY_METADATA = "replay";

function parseInput(input: string): { input: unknown; invalid?: string } {
  if (input.trim() === "") return { input: {} };
  try {
    // secureJsonParse refuses __proto__ and constructor.prototype keys, which could hide arguments from an approver.
    return { input: secureJsonParse(input) };
  } catch (err) {
    return { input, invalid: `the arguments are not valid JSON (${errorMessage(err)})` };
  }
}

/** The provider call for a request (what request_hash fingerprints). */
export function callOptions(request: ModelRequest): LanguageModelV3CallOptions {
  const hasTools = request.tools !== undefined && request.tools.length > 0;
  return {
    prompt: toPrompt(request.system, request.messages),
    tools: hasTools ? request.tools : undefined,
    toolChoice: request.toolChoice === "none" ? { type: "none" } : hasTools ? { type: "auto" } : undefined,
    temperature: request.temperature,
    maxOutputTokens: request.maxOutputTokens,
    responseFormat: request.jsonSchema ? { type: "json", schema: request.jsonSchema, name: "final_answer" } : undefined,
    abortSignal: request.signal,
  };
}

/**
 * The conversation in the provider interface's form. The runtime builds user text and files (their bytes, read
 * from the session's files), assistant text and tool calls, and tool results, so this is a reshaping part by part,
 * not the AI SDK's validation: file data given as a string is passed on as base64, and no URL is downloaded.
 */
export function toPrompt(system: string | undefined, messages: ModelMessage[]): LanguageModelV3Prompt {
  const prompt: LanguageModelV3Prompt = system ? [{ role: "system", content: system }] : [];
  for (const m of messages) {
    let message = converted.get(m);
    if (!message) {
      message = toMessage(m);
      converted.set(m, message);
    }
    const last = prompt.at(-1);
    // Providers expect the results of one step in one tool message: a new one, as converted ones are shared.
    if (message.role === "tool" && last?.role === "tool") prompt[prompt.length - 1] = { role: "tool", content: [...last.content, ...message.content] };
    else prompt.push(message);
  }
  return prompt;
}

/**
 * Each step's request repeats the conversation so far, whose messages never change once made: each is converted
 * once, and the same provider message comes back every step (request-fingerprint.ts keeps its canonical text).
 */
const converted = new WeakMap<ModelMessage, LanguageModelV3Message>();

function toMessage(m: ModelMessage): LanguageModelV3Message {
  const message = toParts(m);
  return m.providerOptions ? { ...message, providerOptions: m.providerOptions } : message;
}

function toParts(m: ModelMessage): LanguageModelV3Message {
  switch (m.role) {
    case "system":
      return { role: "system", content: m.content };
    case "user":
      return { role: "user", content: typeof m.content === "string" ? [{ type: "text", text: m.content }] : m.content.map(userPart) };
    case "assistant":
      return { role: "assistant", content: typeof m.content === "string" ? [{ type: "text", text: m.content }] : m.content.flatMap(assistantPart) };
    case "tool":
      return { role: "tool", content: m.content.map((p) => (p.type === "tool-result" ? toolResult(p) : p)) };
  }
}

type UserPart = Exclude<UserModelMessage["content"], string>[number];
type AssistantPart = Exclude<AssistantModelMessage["content"], string>[number];

/** A file's bytes as the provider interface takes them (it has no ArrayBuffer). */
function fileData(data: FilePart["data"]): LanguageModelV3FilePart["data"] {
  return data instanceof ArrayBuffer ? new Uint8Array(data) : data;
}

function filePart(p: FilePart): LanguageModelV3FilePart {
  return { ...p, data: fileData(p.data) };
}

function userPart(p: UserPart): LanguageModelV3TextPart | LanguageModelV3FilePart {
  if (p.type === "text") return p;
  if (p.type === "file") return filePart(p);
  // An image part, as the AI SDK's own conversion takes it: a file of its media type.
  return { type: "file", data: fileData(p.image), mediaType: p.mediaType ?? "image/*", providerOptions: p.providerOptions };
}

/** Empty text parts are left out (providers refuse them); approval requests are the SDK's, not the model's. */
function assistantPart(p: AssistantPart): Extract<LanguageModelV3Message, { role: "assistant" }>["content"] {
  if (p.type === "text") return p.text === "" ? [] : [p];
  if (p.type === "file") return [filePart(p)];
  if (p.type === "tool-approval-request") return [];
  if (p.type === "tool-result") return [toolResult(p)];
  return [p];
}

/** A tool's result; the SDK's deprecated "media" content is "image-data" for an image, else "file-data" (as the SDK maps it). */
function toolResult(p: ToolResultPart): LanguageModelV3ToolResultPart {
  if (p.output.type !== "content") return { ...p, output: p.output };
  const value = p.output.value.map((c) =>
    c.type === "media"
      ? { type: c.mediaType.startsWith("image/") ? ("image-data" as const) : ("file-data" as const), data: c.data, mediaType: c.mediaType }
      : c,
  );
  return { ...p, output: { type: "content", value } };
}

/** How long to wait before a retry: the provider's retry-after-ms or retry-after when it gives one, else the backoff's. */
function retryDelay({ error, exponentialBackoffDelay }: { error: unknown; exponentialBackoffDelay: number }): number {
  const headers = APICallError.isInstance(error) ? error.responseHeaders : undefined;
  let ms = Number.NaN;
  if (headers?.["retry-after-ms"]) ms = parseFloat(headers["retry-after-ms"]);
  else if (headers?.["retry-after"]) {
    const seconds = parseFloat(headers["retry-after"]);
    ms = Number.isNaN(seconds) ? Date.parse(headers["retry-after"]) - Date.now() : seconds * 1000;
  }
  return ms >= 0 && ms < MAX_RETRY_AFTER_MS ? ms : exponentialBackoffDelay;
}
