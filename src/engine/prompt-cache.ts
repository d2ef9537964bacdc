// Prompt caching (docs/guides/model-fallback-and-caching.md): each step of a turn resends the whole conversation, so the provider's prompt cache
// is asked to keep its stable prefix. Anthropic models get cache breakpoints (cache_control) on the last tool,
// the system prompt and the last message, which the next step's request repeats unchanged; OpenAI models get
// a prompt_cache_key per session, which routes a session's requests to the same cache. Both are provider
// options on copies of the request's parts: the request fingerprint (replay) reads the unmarked originals.
import type { LanguageModelV3CallOptions, SharedV3ProviderOptions } from "@ai-sdk/provider";
import { parseModelSpec } from "../protocol/model-spec";

const BREAKPOINT: SharedV3ProviderOptions = { anthropic: { cacheControl: { type: "ephemeral" } } };

/** A marked copy to the original it was made from. */
const originals = new WeakMap<object, object>();

/** The request part without the cache marks this module added (itself when it has none). */
export function unmarked<T extends object>(part: T): T {
  return (originals.get(part) as T | undefined) ?? part;
}

/** `options` as the provider of `spec` caches it: the session's `cacheKey` is OpenAI's prompt_cache_key. */
export function withPromptCache(spec: string, options: LanguageModelV3CallOptions, cacheKey: string | undefined): LanguageModelV3CallOptions {
  const provider = parseModelSpec(spec)?.provider;
  if (provider === "anthropic") return withBreakpoints(options);
  if (provider === "openai" && cacheKey) {
    return { ...options, providerOptions: { ...options.providerOptions, openai: { ...options.providerOptions?.openai, promptCacheKey: cacheKey } } };
  }
  return options;
}

function withBreakpoints(options: LanguageModelV3CallOptions): LanguageModelV3CallOptions {
  const prompt = [...options.prompt];
  const systemAt = prompt.findLastIndex((m) => m.role === "system");
  const lastAt = prompt.length - 1;
  for (const i of new Set([systemAt, lastAt])) if (i >= 0) prompt[i] = marked(prompt[i]!);
  const last = options.tools?.at(-1);
  let tools = options.tools;
  if (options.tools && last?.type === "function") {
    tools = [...options.tools.slice(0, -1), marked(last)];
    originals.set(tools, options.tools);
  }
  return { ...options, prompt, tools };
}

function marked<T extends { providerOptions?: SharedV3ProviderOptions }>(part: T): T {
  const copy = { ...part, providerOptions: { ...part.providerOptions, ...BREAKPOINT } };
  originals.set(copy, part);
  return copy;
}
