// Bindings and settings of one deployment (one tenant). See wrangler.toml and the README.
import type { RegistryObject } from "./durable/registry-object";
import type { SessionObject } from "./durable/session-object";

export interface Env {
  SESSIONS: DurableObjectNamespace<SessionObject>;
  REGISTRY: DurableObjectNamespace<RegistryObject>;
  BLOBS: R2Bucket;
  /** Comma-separated bearer keys; none configured means every /v1 request is 401. */
  API_KEYS?: string;
  /** Comma-separated URL prefixes that HTTP tools may call. */
  TOOL_URL_ALLOWLIST?: string;
  /** Comma-separated origins allowed by CORS, or "*". */
  CORS_ORIGINS?: string;
  OPENAI_API_KEY?: string;
  OPENAI_BASE_URL?: string;
  ANTHROPIC_API_KEY?: string;
  OPENAI_COMPATIBLE_BASE_URL?: string;
  OPENAI_COMPATIBLE_API_KEY?: string;
  /** A channel WebSocket whose acks lag this many events behind is closed (code 4008); default 10000. */
  WS_MAX_UNACKED_EVENTS?: string;
  /** agent_orchestrate limits (defaults 3, 12, 4; capped at 5, 50, 16). */
  ORCHESTRATE_MAX_DEPTH?: string;
  ORCHESTRATE_MAX_STEPS?: string;
  ORCHESTRATE_MAX_PARALLEL?: string;
  /** Workers AI, for `workers-ai:<model>` (add `[ai] binding = "AI"` to wrangler.toml). */
  AI?: Ai;
}
