// `provider:model` strings (docs/guides/model-fallback-and-caching.md): which providers exist and how a model string splits.
import { z } from "zod";

export const PROVIDERS = ["openai", "anthropic", "openai-compatible", "workers-ai", "demo"] as const;
export type Provider = (typeof PROVIDERS)[number];

export function parseModelSpec(spec: string): { provider: Provider; model: string } | null {
  const i = spec.indexOf(":");
  if (i <= 0 || i === spec.length - 1) return null;
  const provider = spec.slice(0, i);
  if (!(PROVIDERS as readonly string[]).includes(provider)) return null;
  return { provider: provider as Provider, model: spec.slice(i + 1) };
}

export const modelSpecField = z.string().refine((s) => parseModelSpec(s) !== null, {
  message: `must be "provider:model" with provider one of ${PROVIDERS.join(", ")}`,
});

/**
 * A deployment's entry for a model (MODEL_PRICES, MODEL_CAPABILITIES): keyed by the whole model string, or by
 * a prefix of the model's name.
 */
export function byModel<T>(table: Record<string, T>, modelSpec: string): T | undefined {
  const spec = parseModelSpec(modelSpec);
  if (!spec) return undefined;
  return table[modelSpec] ?? Object.entries(table).find(([prefix]) => spec.model.startsWith(prefix))?.[1];
}
