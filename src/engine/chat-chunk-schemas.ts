// What each provider accepts of a streamed Chat Completions chunk: zod schemas that mirror @ai-sdk/openai's
// openaiChatChunkSchema and @ai-sdk/openai-compatible's chunk schema (z.object strips unknown keys, looseObject keeps
// them, as theirs do), checked synchronously per chunk: the providers' asynchronous check is their slow stage.
import { JSONParseError, TypeValidationError } from "@ai-sdk/provider";
import { secureJsonParse } from "@ai-sdk/provider-utils";
import { z } from "zod";

/** The error chunk both providers accept (their error data schemas are the same). */
const errorChunkSchema = z.object({
  error: z.object({
    message: z.string(),
    type: z.string().nullish(),
    param: z.any().nullish(),
    code: z.union([z.string(), z.number()]).nullish(),
  }),
});

/** A chunk's own fields, the same in both providers' schemas. */
const chunkHead = { id: z.string().nullish(), created: z.number().nullish(), model: z.string().nullish() };
/** A usage's counts, the same in both (one provider keeps unknown keys beside them, the other drops them). */
const usageCounts = { prompt_tokens: z.number().nullish(), completion_tokens: z.number().nullish(), total_tokens: z.number().nullish() };
const completionDetails = {
  reasoning_tokens: z.number().nullish(),
  accepted_prediction_tokens: z.number().nullish(),
  rejected_prediction_tokens: z.number().nullish(),
};

const logprobsSchema = z
  .array(z.object({ token: z.string(), logprob: z.number(), top_logprobs: z.array(z.object({ token: z.string(), logprob: z.number() })) }))
  .nullish();

/** @ai-sdk/openai's chunk: a Chat Completions chunk or an error chunk. */
export const openAIChunkSchema = z.union([
  z.object({
    ...chunkHead,
    choices: z.array(
      z.object({
        delta: z
          .object({
            role: z.enum(["assistant"]).nullish(),
            content: z.string().nullish(),
            refusal: z.string().nullish(),
            tool_calls: z
              .array(
                z.object({
                  index: z.number(),
                  id: z.string().nullish(),
                  type: z.literal("function").nullish(),
                  function: z.object({ name: z.string().nullish(), arguments: z.string().nullish() }),
                }),
              )
              .nullish(),
            annotations: z
              .array(
                z.object({
                  type: z.literal("url_citation"),
                  url_citation: z.object({ start_index: z.number(), end_index: z.number(), url: z.string(), title: z.string() }),
                }),
              )
              .nullish(),
          })
          .nullish(),
        logprobs: z.object({ content: logprobsSchema, refusal: logprobsSchema }).nullish(),
        finish_reason: z.string().nullish(),
        index: z.number(),
      }),
    ),
    usage: z
      .object({
        ...usageCounts,
        prompt_tokens_details: z.object({ cached_tokens: z.number().nullish(), cache_write_tokens: z.number().nullish() }).nullish(),
        completion_tokens_details: z.object(completionDetails).nullish(),
      })
      .nullish(),
  }),
  errorChunkSchema,
]);

/** @ai-sdk/openai-compatible's chunk (its chunkBaseSchema, content as a string or typed parts) or an error chunk. */
export const compatibleChunkSchema = z.union([
  z.looseObject({
    ...chunkHead,
    choices: z.array(
      z.object({
        delta: z
          .object({
            role: z.enum(["assistant", ""]).nullish(),
            content: z.union([z.string(), z.array(z.looseObject({ type: z.string() }))]).nullish(),
            reasoning_content: z.string().nullish(),
            reasoning: z.string().nullish(),
            tool_calls: z
              .array(
                z.object({
                  index: z.number().nullish(),
                  id: z.string().nullish(),
                  function: z.object({ name: z.string().nullish(), arguments: z.string().nullish() }),
                  // A Gemini thought signature, through its OpenAI compatibility.
                  extra_content: z.object({ google: z.object({ thought_signature: z.string().nullish() }).nullish() }).nullish(),
                }),
              )
              .nullish(),
          })
          .nullish(),
        finish_reason: z.string().nullish(),
      }),
    ),
    usage: z
      .looseObject({
        ...usageCounts,
        prompt_tokens_details: z.looseObject({ cached_tokens: z.number().nullish() }).nullish(),
        completion_tokens_details: z.looseObject(completionDetails).nullish(),
      })
      .nullish(),
  }),
  errorChunkSchema,
]);

export type ErrorChunk = z.infer<typeof errorChunkSchema>;
export type OpenAIChunk = Exclude<z.infer<typeof openAIChunkSchema>, ErrorChunk>;
export type CompatibleChunk = Exclude<z.infer<typeof compatibleChunkSchema>, ErrorChunk>;

/** A chunk's data as its provider reads it: the schema's value, or the error its stream part carries (not JSON, or refused). */
export function parseChunk<T>(schema: z.ZodType<T>, data: string): T | JSONParseError | TypeValidationError {
  let value: unknown;
  try {
    value = secureJsonParse(data); // as the providers parse: a __proto__ or constructor.prototype key is refused
  } catch (cause) {
    return new JSONParseError({ text: data, cause });
  }
  const result = schema.safeParse(value);
  return result.success ? result.data : TypeValidationError.wrap({ value, cause: result.error });
}
