// What a model takes besides text, so a turn with an image for a model that takes none is refused when it is
// submitted (422) rather than failing at the provider. A model nobody declared is assumed to take images: the
// provider then decides.
import { byModel, parseModelSpec } from "../../protocol/model-spec";

export interface ModelCapabilities {
  /** Whether the model takes image parts. */
  images: boolean;
}

/** A deployment's own declarations (MODEL_CAPABILITIES): a model string, or a model-name prefix, to its capabilities. */
export type CapabilityOverrides = Record<string, ModelCapabilities>;

// Models known to take text only, by provider and model-name prefix.
const TEXT_ONLY: Partial<Record<string, string[]>> = {
  openai: ["gpt-3.5-turbo", "o1-mini", "o3-mini"],
  // The demo model echoes text; `demo:text-only` stands for a model that takes no images.
  demo: ["text-only"],
};

/**
 * MODEL_CAPABILITIES as JSON, e.g. {"openai-compatible:llama-3.1-8b": {"images": false}}; entries without a
 * boolean `images` are ignored.
 */
export function parseCapabilityOverrides(raw: string | undefined): CapabilityOverrides {
  if (!raw) return {};
  try {
    const parsed = JSON.parse(raw) as Record<string, { images?: unknown }>;
    const out: CapabilityOverrides = {};
    for (const [model, c] of Object.entries(parsed ?? {})) if (typeof c?.images === "boolean") out[model] = { images: c.images };
    return out;
  } catch {
    console.error("MODEL_CAPABILITIES is not valid JSON; it is ignored");
    return {};
  }
}

/** The model's capabilities: the deployment's declaration, else the built-in list, else images assumed. */
export function capabilitiesOf(modelSpec: string, overrides: CapabilityOverrides = {}): ModelCapabilities {
  const own = byModel(overrides, modelSpec);
  if (own) return own;
  const spec = parseModelSpec(modelSpec);
  const textOnly = spec ? (TEXT_ONLY[spec.provider] ?? []).some((prefix) => spec.model.startsWith(prefix)) : false;
  return { images: !textOnly };
}

export const isImage = (mediaType: string): boolean => mediaType.startsWith("image/");
