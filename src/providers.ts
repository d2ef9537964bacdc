// The provider settings the engine needs, from the Worker's bindings: plain keys and URLs, and Workers AI
// models built from the AI binding (the one provider that needs a Cloudflare API).
import { createWorkersAI } from "workers-ai-provider";
import type { ProviderEnv } from "./engine/models";
import type { Env } from "./env";

export function providerEnv(env: Env): ProviderEnv {
  const ai = env.AI;
  return {
    OPENAI_API_KEY: env.OPENAI_API_KEY,
    OPENAI_BASE_URL: env.OPENAI_BASE_URL,
    OPENAI_API: env.OPENAI_API,
    ANTHROPIC_API_KEY: env.ANTHROPIC_API_KEY,
    ANTHROPIC_BASE_URL: env.ANTHROPIC_BASE_URL,
    OPENAI_COMPATIBLE_BASE_URL: env.OPENAI_COMPATIBLE_BASE_URL,
    OPENAI_COMPATIBLE_API_KEY: env.OPENAI_COMPATIBLE_API_KEY,
    workersAI: ai ? (modelId) => createWorkersAI({ binding: ai })(modelId as Parameters<ReturnType<typeof createWorkersAI>>[0]) : undefined,
  };
}
