// `provider:model` resolution through the AI SDK (docs/guides/model-fallback-and-caching.md).
import { createAnthropic } from "@ai-sdk/anthropic";
import { createOpenAI } from "@ai-sdk/openai";
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import type { EmbeddingModelV3, LanguageModelV3 } from "@ai-sdk/provider";
import { type Provider, parseModelSpec } from "../protocol/model-spec";
import { takingFetch } from "./chat-stream";
import { oneStageCompatibleModel } from "./compatible-chat-stream";
import { DemoModel } from "./demo-model";
import { oneStageOpenAIChatModel } from "./openai-chat-stream";
import { attachableModels, attachingFetch } from "./response-attach";

/** The provider settings a deployment may carry (bindings and secrets). */
export interface ProviderEnv {
  OPENAI_API_KEY?: string;
  OPENAI_BASE_URL?: string;
  /**
   * "responses": `openai:` models use the Responses API in background mode, so a call a restart cuts is read
   * again instead of paid twice (response-attach.ts); default "chat" (Chat Completions).
   */
  OPENAI_API?: string;
  ANTHROPIC_API_KEY?: string;
  /** A gateway or proxy in front of the Anthropic Messages API (default https://api.anthropic.com/v1). */
  ANTHROPIC_BASE_URL?: string;
  OPENAI_COMPATIBLE_BASE_URL?: string;
  OPENAI_COMPATIBLE_API_KEY?: string;
  /** Workers AI models, built by the Cloudflare layer from the `AI` binding when it exists. */
  workersAI?: (modelId: string) => LanguageModelV3;
}

/** The provider keys of a deployment: no event may hold one (protocol/redact.ts, redactCredentials). */
export function providerKeys(env: ProviderEnv): string[] {
  return [env.OPENAI_API_KEY, env.ANTHROPIC_API_KEY, env.OPENAI_COMPATIBLE_API_KEY].filter((k): k is string => !!k);
}

export function providerConfigured(provider: Provider, env: ProviderEnv): boolean {
  switch (provider) {
    case "openai":
      return Boolean(env.OPENAI_API_KEY);
    case "anthropic":
      return Boolean(env.ANTHROPIC_API_KEY);
    case "openai-compatible":
      return Boolean(env.OPENAI_COMPATIBLE_BASE_URL);
    case "workers-ai":
      return env.workersAI !== undefined;
    case "demo":
      return true;
  }
}

/**
 * Provider models by spec and settings. A provider's model builds its response schemas when it is made (for
 * openai-compatible a zod schema whose construction and first use cost about a millisecond), and holds nothing
 * of a call, so one instance serves every turn of the isolate with the same settings.
 */
const made = new Map<string, LanguageModelV3>();
const MAX_MADE = 100;

export function resolveModel(spec: string, env: ProviderEnv): LanguageModelV3 {
  const parsed = parseModelSpec(spec);
  if (!parsed) throw new Error(`Invalid model "${spec}"`);
  if (!providerConfigured(parsed.provider, env)) {
    throw new Error(`Provider "${parsed.provider}" is not configured in this deployment`);
  }
  // Workers AI models wrap the binding of one request's env, and demo models are cheap: only keyed ones are kept.
  if (parsed.provider === "workers-ai" || parsed.provider === "demo") return makeModel(parsed, env);
  const key = JSON.stringify([
    spec,
    env.OPENAI_API_KEY,
    env.OPENAI_BASE_URL,
    env.OPENAI_API,
    env.ANTHROPIC_API_KEY,
    env.ANTHROPIC_BASE_URL,
    env.OPENAI_COMPATIBLE_BASE_URL,
    env.OPENAI_COMPATIBLE_API_KEY,
  ]);
  let model = made.get(key);
  if (!model) {
    if (made.size >= MAX_MADE) made.clear();
    model = makeModel(parsed, env);
    made.set(key, model);
  }
  return model;
}

/** The embedding model of `spec` (memory.recall.embedding_model: an openai or openai-compatible model). */
export function resolveEmbeddingModel(spec: string, env: ProviderEnv): EmbeddingModelV3 {
  const parsed = parseModelSpec(spec);
  if (!parsed || !providerConfigured(parsed.provider, env)) throw new Error(`Embedding model "${spec}" is not available in this deployment`);
  switch (parsed.provider) {
    case "openai":
      return createOpenAI({ apiKey: env.OPENAI_API_KEY, baseURL: env.OPENAI_BASE_URL || undefined }).embedding(parsed.model);
    case "openai-compatible":
      return createOpenAICompatible({
        name: "openai-compatible",
        baseURL: env.OPENAI_COMPATIBLE_BASE_URL!,
        apiKey: env.OPENAI_COMPATIBLE_API_KEY || undefined,
      }).embeddingModel(parsed.model);
    default:
      throw new Error(`Provider "${parsed.provider}" has no embedding models here`);
  }
}

function makeModel({ provider, model }: NonNullable<ReturnType<typeof parseModelSpec>>, env: ProviderEnv): LanguageModelV3 {
  switch (provider) {
    case "openai": {
      if (env.OPENAI_API !== "responses") {
        return oneStageOpenAIChatModel(
          createOpenAI({ apiKey: env.OPENAI_API_KEY, baseURL: env.OPENAI_BASE_URL || undefined, fetch: takingFetch() }).chat(model),
        );
      }
      const made = createOpenAI({ apiKey: env.OPENAI_API_KEY, baseURL: env.OPENAI_BASE_URL || undefined, fetch: attachingFetch() }).responses(model);
      attachableModels.add(made);
      return made;
    }
    case "anthropic":
      return createAnthropic({ apiKey: env.ANTHROPIC_API_KEY, baseURL: env.ANTHROPIC_BASE_URL || undefined })(model);
    case "openai-compatible":
      return oneStageCompatibleModel(
        createOpenAICompatible({
          name: "openai-compatible",
          baseURL: env.OPENAI_COMPATIBLE_BASE_URL!,
          apiKey: env.OPENAI_COMPATIBLE_API_KEY || undefined,
          includeUsage: true,
          supportsStructuredOutputs: true, // output_schema goes out as a json_schema response_format
          fetch: takingFetch(),
        }).chatModel(model),
      );
    case "workers-ai":
      return env.workersAI!(model);
    case "demo":
      return new DemoModel(model);
  }
}
