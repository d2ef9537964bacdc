// The APICallError @ai-sdk/openai makes of an error chunk that comes before any output (its createOpenAIStreamError):
// doStream throws it, so the call is retried like a failed request.
import { APICallError } from "@ai-sdk/provider";
import type { ErrorChunk } from "./chat-chunk-schemas";
import type { TakenAnswer } from "./chat-stream";

type ErrorFrame = ErrorChunk["error"];

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
