// Known model prices, for cost.recorded (USD per million tokens; input, output). Unknown models cost null.
import { parseModelSpec } from "../protocol/model-spec";
import type { Usage } from "./turn-state";

const PRICES: [prefix: string, input: number, output: number][] = [
  ["gpt-4o-mini", 0.15, 0.6],
  ["gpt-4o", 2.5, 10],
  ["gpt-4.1-nano", 0.1, 0.4],
  ["gpt-4.1-mini", 0.4, 1.6],
  ["gpt-4.1", 2, 8],
  ["o4-mini", 1.1, 4.4],
  ["o3", 2, 8],
  ["claude-3-5-haiku", 0.8, 4],
  ["claude-haiku-4", 1, 5],
  ["claude-sonnet-4", 3, 15],
  ["claude-3-7-sonnet", 3, 15],
  ["claude-opus-4", 15, 75],
];

/** A deployment's own prices (MODEL_PRICES): a model string, or a model-name prefix, to USD per million tokens. */
export type PriceOverrides = Record<string, { input: number; output: number }>;

/** MODEL_PRICES as JSON, e.g. {"openai-compatible:llama-3.1-8b": {"input": 0.05, "output": 0.08}}; invalid entries are ignored. */
export function parsePriceOverrides(raw: string | undefined): PriceOverrides {
  if (!raw) return {};
  try {
    const parsed = JSON.parse(raw) as Record<string, { input?: unknown; output?: unknown }>;
    const out: PriceOverrides = {};
    for (const [model, p] of Object.entries(parsed ?? {})) {
      if (typeof p?.input === "number" && typeof p.output === "number" && p.input >= 0 && p.output >= 0) out[model] = { input: p.input, output: p.output };
    }
    return out;
  } catch {
    console.error("MODEL_PRICES is not valid JSON; it is ignored");
    return {};
  }
}

/** USD per million tokens (input, output) for a model string, or null when its price is not known. */
export function priceOf(modelSpec: string, overrides: PriceOverrides = {}): [number, number] | null {
  const spec = parseModelSpec(modelSpec);
  if (!spec) return null;
  const own = overrides[modelSpec] ?? Object.entries(overrides).find(([prefix]) => spec.model.startsWith(prefix))?.[1];
  if (own) return [own.input, own.output];
  if (spec.provider === "demo") return [0, 0];
  const price = PRICES.find(([prefix]) => spec.model.startsWith(prefix));
  return price ? [price[1], price[2]] : null;
}

/** The cost of one call in USD, or null when the model's price is not known (the demo model is free). */
export function costOf(modelSpec: string, usage: Usage, overrides: PriceOverrides = {}): number | null {
  const price = priceOf(modelSpec, overrides);
  if (!price) return null;
  return (usage.input_tokens * price[0] + usage.output_tokens * price[1]) / 1_000_000;
}
