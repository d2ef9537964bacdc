// The most a model call may cost, computed once before it is made, the one figure for budgets and quotas
// (docs/guides/quotas.md, "How a call is reserved"; docs/guides/subagents-and-budgets.md, "Calls lost to a
// restart"): quotas reserve it, and model.requested records it, which a restart that cuts the call charges to
// the turn's budget as usage.lost. Its input is bounded by the request's size in UTF-8 bytes (the prompt, the tool
// schemas and the response format: no tokenizer counts more tokens than bytes), its output by max_output_tokens,
// and it is priced at the dearest model of the call's fallback chain (any of them may answer).
import type { LanguageModelV3CallOptions } from "@ai-sdk/provider";
import { costOf, type PriceOverrides } from "./pricing";
import type { Usage } from "./turn-state";

/** What a call is assumed to be able to write when it sets no max_tokens (a spend quota also caps such a call at it). */
export const DEFAULT_MAX_OUTPUT_TOKENS = 4096;

export interface CallEstimate {
  input_tokens: number;
  max_output_tokens: number;
  /** null: a model of the chain has no known price. */
  cost_usd: number | null;
}

/** The most call `options` may cost on `models` (its model, then its fallbacks). */
export function estimateCall(models: string[], options: LanguageModelV3CallOptions, prices: PriceOverrides | undefined): CallEstimate {
  const input_tokens = requestBytes(options);
  const max_output_tokens = options.maxOutputTokens ?? DEFAULT_MAX_OUTPUT_TOKENS;
  const usage = { input_tokens, output_tokens: max_output_tokens, total_tokens: input_tokens + max_output_tokens };
  return { input_tokens, max_output_tokens, cost_usd: dearestCost(models, usage, prices) };
}

/** What `usage` costs at the dearest of `models` (null when one has no known price). */
export function dearestCost(models: string[], usage: Usage, prices: PriceOverrides | undefined): number | null {
  let usd = 0;
  for (const m of models) {
    const cost = costOf(m, usage, prices);
    if (cost === null) return null;
    usd = Math.max(usd, cost);
  }
  return usd;
}

const encoder = new TextEncoder();
/** Prompt messages are made once per conversation message (model-stream.ts), so each is measured once. */
const measured = new WeakMap<object, number>();

const bytesOf = (value: unknown) => encoder.encode(JSON.stringify(value)).byteLength;

/** The UTF-8 size of JSON.stringify([prompt, tools ?? null, responseFormat ?? null]), each prompt message measured once. */
function requestBytes(options: LanguageModelV3CallOptions): number {
  let prompt = 2 + Math.max(0, options.prompt.length - 1);
  for (const m of options.prompt) {
    let n = measured.get(m);
    if (n === undefined) {
      n = bytesOf(m);
      measured.set(m, n);
    }
    prompt += n;
  }
  return 4 + prompt + bytesOf(options.tools ?? null) + bytesOf(options.responseFormat ?? null);
}
