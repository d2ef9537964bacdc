// Known model prices, for cost.recorded (USD per million tokens: input, output, and input read from the
// provider's prompt cache). Unknown models cost null.
import { byModel, parseModelSpec } from "../protocol/model-spec";
import type { Usage } from "./turn-state";

/** USD per million tokens. */
export interface Price {
  input: number;
  output: number;
  cached_input: number;
}

// Cache reads: OpenAI's list price (a half or a quarter of input), Anthropic's a tenth.
const PRICES: [prefix: string, input: number, output: number, cachedInput: number][] = [
  ["gpt-4o-mini", 0.15, 0.6, 0.075],
  ["gpt-4o", 2.5, 10, 1.25],
  ["gpt-4.1-nano", 0.1, 0.4, 0.025],
  ["gpt-4.1-mini", 0.4, 1.6, 0.1],
  ["gpt-4.1", 2, 8, 0.5],
  ["o4-mini", 1.1, 4.4, 0.275],
  ["o3", 2, 8, 0.5],
  ["claude-3-5-haiku", 0.8, 4, 0.08],
  ["claude-haiku-4", 1, 5, 0.1],
  ["claude-sonnet-4", 3, 15, 0.3],
  ["claude-3-7-sonnet", 3, 15, 0.3],
  ["claude-opus-4", 15, 75, 1.5],
];

/** A deployment's own prices (MODEL_PRICES): a model string, or a model-name prefix, to USD per million tokens. */
export type PriceOverrides = Record<string, Price>;

/**
 * MODEL_PRICES as JSON, e.g. {"openai-compatible:llama-3.1-8b": {"input": 0.05, "output": 0.08, "cached_input": 0.01}};
 * cached_input defaults to input (no discount assumed); invalid entries are ignored.
 */
export function parsePriceOverrides(raw: string | undefined): PriceOverrides {
  if (!raw) return {};
  try {
    const parsed = JSON.parse(raw) as Record<string, { input?: unknown; output?: unknown; cached_input?: unknown }>;
    const out: PriceOverrides = {};
    for (const [model, p] of Object.entries(parsed ?? {})) {
      if (!(typeof p?.input === "number" && typeof p.output === "number" && p.input >= 0 && p.output >= 0)) continue;
      const cached = typeof p.cached_input === "number" && p.cached_input >= 0 ? p.cached_input : p.input;
      out[model] = { input: p.input, output: p.output, cached_input: cached };
    }
    return out;
  } catch {
    console.error("MODEL_PRICES is not valid JSON; it is ignored");
    return {};
  }
}

/** USD per million tokens for a model string, or null when its price is not known. */
export function priceOf(modelSpec: string, overrides: PriceOverrides = {}): Price | null {
  const spec = parseModelSpec(modelSpec);
  if (!spec) return null;
  const own = byModel(overrides, modelSpec);
  if (own) return own;
  if (spec.provider === "demo") return { input: 0, output: 0, cached_input: 0 };
  const price = PRICES.find(([prefix]) => spec.model.startsWith(prefix));
  return price ? { input: price[1], output: price[2], cached_input: price[3] } : null;
}

/** The cost of one call in USD (cached input at its own price), or null when the model's price is not known (the demo model is free). */
export function costOf(modelSpec: string, usage: Usage, overrides: PriceOverrides = {}): number | null {
  const price = priceOf(modelSpec, overrides);
  if (!price) return null;
  const cached = usage.cached_input_tokens ?? 0;
  return ((usage.input_tokens - cached) * price.input + cached * price.cached_input + usage.output_tokens * price.output) / 1_000_000;
}
