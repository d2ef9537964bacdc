// Bindings and settings of one deployment (one tenant). See wrangler.toml and the README.
import type { ProviderEnv } from "./runtime/models";
import type { RegistryObject } from "./durable/registry-object";
import type { SessionObject } from "./durable/session-object";

export interface Env extends ProviderEnv {
  SESSIONS: DurableObjectNamespace<SessionObject>;
  REGISTRY: DurableObjectNamespace<RegistryObject>;
  BLOBS: R2Bucket;
  /** Comma-separated bearer keys; none configured means every /v1 request is 401. */
  API_KEYS?: string;
  /** Comma-separated URL prefixes that HTTP tools may call. */
  TOOL_URL_ALLOWLIST?: string;
  /** Comma-separated origins allowed by CORS, or "*". */
  CORS_ORIGINS?: string;
}
