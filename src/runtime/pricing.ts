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

/** The cost of one call in USD, or null when the model's price is not known (the demo model is free). */
export function costOf(modelSpec: string, usage: Usage): number | null {
  const spec = parseModelSpec(modelSpec);
  if (!spec) return null;
  if (spec.provider === "demo") return 0;
  const price = PRICES.find(([prefix]) => spec.model.startsWith(prefix));
  if (!price) return null;
  return (usage.input_tokens * price[1] + usage.output_tokens * price[2]) / 1_000_000;
}
