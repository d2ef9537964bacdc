// What @ai-sdk/openai accepts of a streamed Chat Completions chunk (its openaiChatChunkSchema, or its error data
// schema), checked and stripped of unknown fields as its zod schema does but without zod, and the APICallError it
// makes of an error chunk that comes before any output (its createOpenAIStreamError).
import { APICallError, JSONParseError, TypeValidationError } from "@ai-sdk/provider";
import type { TakenAnswer } from "./chat-stream";

const FAIL = Symbol("fail");
/** A field's check: the value as the schema gives it back (objects without unknown keys), or FAIL. */
type Shape = (v: unknown) => unknown;

const string: Shape = (v) => (typeof v === "string" ? v : FAIL);
const number: Shape = (v) => (typeof v === "number" && Number.isFinite(v) ? v : FAIL);
const any: Shape = (v) => v;
const literal =
  (x: string): Shape =>
  (v) =>
    v === x ? v : FAIL;
const nullish =
  (shape: Shape): Shape =>
  (v) =>
    v == null ? v : shape(v);
const either =
  (...shapes: Shape[]): Shape =>
  (v) =>
    shapes.map((shape) => shape(v)).find((r) => r !== FAIL) ?? FAIL;
const array =
  (shape: Shape): Shape =>
  (v) => {
    if (!Array.isArray(v)) return FAIL;
    const out = new Array(v.length);
    for (let i = 0; i < v.length; i++) if ((out[i] = shape(v[i])) === FAIL) return FAIL;
    return out;
  };
function object(fields: Record<string, Shape>): Shape {
  const entries = Object.entries(fields);
  return (v) => {
    if (typeof v !== "object" || v === null || Array.isArray(v)) return FAIL;
    const out: Record<string, unknown> = {};
    for (const [key, shape] of entries) {
      const field = (v as Record<string, unknown>)[key];
      const r = shape(field);
      if (r === FAIL) return FAIL;
      if (field !== undefined) out[key] = r;
    }
    return out;
  };
}

const logprobs = nullish(array(object({ token: string, logprob: number, top_logprobs: array(object({ token: string, logprob: number })) })));
const chunkShape = object({
  id: nullish(string),
  created: nullish(number),
  model: nullish(string),
  choices: array(
    object({
      delta: nullish(
        object({
          role: nullish(literal("assistant")),
          content: nullish(string),
          refusal: nullish(string),
          tool_calls: nullish(
            array(
              object({
                index: number,
                id: nullish(string),
                type: nullish(literal("function")),
                function: object({ name: nullish(string), arguments: nullish(string) }),
              }),
            ),
          ),
          annotations: nullish(
            array(
              object({
                type: literal("url_citation"),
                url_citation: object({ start_index: number, end_index: number, url: string, title: string }),
              }),
            ),
          ),
        }),
      ),
      logprobs: nullish(object({ content: logprobs, refusal: logprobs })),
      finish_reason: nullish(string),
      index: number,
    }),
  ),
  usage: nullish(
    object({
      prompt_tokens: nullish(number),
      completion_tokens: nullish(number),
      total_tokens: nullish(number),
      prompt_tokens_details: nullish(object({ cached_tokens: nullish(number), cache_write_tokens: nullish(number) })),
      completion_tokens_details: nullish(
        object({ reasoning_tokens: nullish(number), accepted_prediction_tokens: nullish(number), rejected_prediction_tokens: nullish(number) }),
      ),
    }),
  ),
});
const errorShape = object({
  error: object({ message: string, type: nullish(string), param: nullish(any), code: nullish(either(string, number)) }),
});

type Maybe<T> = T | null | undefined;
type LogprobList = Maybe<{ token: string; logprob: number; top_logprobs: { token: string; logprob: number }[] }[]>;
export interface Chunk {
  id?: Maybe<string>;
  created?: Maybe<number>;
  model?: Maybe<string>;
  choices: {
    delta?: Maybe<{
      content?: Maybe<string>;
      refusal?: Maybe<string>;
      tool_calls?: Maybe<{ index: number; id?: Maybe<string>; type?: Maybe<"function">; function: { name?: Maybe<string>; arguments?: Maybe<string> } }[]>;
      annotations?: Maybe<{ type: "url_citation"; url_citation: { start_index: number; end_index: number; url: string; title: string } }[]>;
    }>;
    logprobs?: Maybe<{ content?: LogprobList; refusal?: LogprobList }>;
    finish_reason?: Maybe<string>;
    index: number;
  }[];
  usage?: Maybe<{
    prompt_tokens?: Maybe<number>;
    completion_tokens?: Maybe<number>;
    total_tokens?: Maybe<number>;
    prompt_tokens_details?: Maybe<{ cached_tokens?: Maybe<number>; cache_write_tokens?: Maybe<number> }>;
    completion_tokens_details?: Maybe<{
      reasoning_tokens?: Maybe<number>;
      accepted_prediction_tokens?: Maybe<number>;
      rejected_prediction_tokens?: Maybe<number>;
    }>;
  }>;
}
export interface ErrorFrame {
  message: string;
  type?: Maybe<string>;
  param?: unknown;
  code?: Maybe<string | number>;
}

/** A chunk's data as the provider reads it: a chunk, an error chunk, or why it is neither (the error its stream part carries). */
export function parseChunk(data: string): Chunk | { error: ErrorFrame } | JSONParseError | TypeValidationError {
  let value: unknown;
  try {
    value = JSON.parse(data);
  } catch (cause) {
    return new JSONParseError({ text: data, cause });
  }
  const chunk = chunkShape(value);
  if (chunk !== FAIL) return chunk as Chunk;
  const error = errorShape(value);
  if (error !== FAIL) return error as { error: ErrorFrame };
  return new TypeValidationError({ value, cause: new Error("not a Chat Completions chunk nor an error") });
}

/** The retryable (or not) failure an error chunk before any output makes of the call, with the provider's status and message. */
export function openAIStreamError(frame: ErrorFrame, taken: TakenAnswer, responseHeaders: Record<string, string>): APICallError {
  // The provider reads a frame as an error only with a type, code or param beside its message.
  const known = frame.type != null || "code" in frame || "param" in frame;
  const statusCode = known ? statusOf(frame) : 500;
  return new APICallError({
    message: known ? frame.message : "OpenAI stream failed before any output was generated",
    url: taken.url,
    requestBodyValues: parsedBody(taken.requestBody),
    statusCode,
    responseHeaders,
    responseBody: JSON.stringify(frame),
    data: frame,
    isRetryable: !known || (frame.code !== "insufficient_quota" && frame.type !== "insufficient_quota" && retryableStatus(statusCode)),
  });
}

function statusOf({ code, type }: ErrorFrame): number {
  const numeric = typeof code === "number" ? code : typeof code === "string" && /^\d{3}$/.test(code) ? Number(code) : undefined;
  if (numeric !== undefined && Number.isInteger(numeric) && numeric >= 400 && numeric <= 599) return numeric;
  const words = [code, type]
    .filter((v) => typeof v === "string" || typeof v === "number")
    .join(" ")
    .toLowerCase();
  const has = (...terms: string[]) => terms.some((term) => words.includes(term));
  if (has("insufficient_quota", "rate_limit")) return 429;
  if (has("authentication")) return 401;
  if (has("permission")) return 403;
  if (has("not_found")) return 404;
  if (has("invalid", "bad_request", "context_length")) return 400;
  if (has("overload")) return 503;
  if (has("timeout")) return 504;
  return 500;
}

const retryableStatus = (status: number) => status === 408 || status === 409 || status === 429 || status >= 500;

function parsedBody(body: string): unknown {
  try {
    return JSON.parse(body);
  } catch {
    return body;
  }
}
