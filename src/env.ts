// Bindings and settings of one deployment (one tenant). See wrangler.toml and docs/guides/deploying.md.
import type { EvalRunObject } from "./objects/evals/eval-run-object";
import type { IndexShardObject } from "./objects/index/index-shard";
import type { ResourceMemoryObject } from "./objects/memory/resource-memory-object";
import type { QuotaObject } from "./objects/quota/quota-object";
import type { RateLimiter } from "./objects/rate-limiter/rate-limiter";
import type { RegistryObject } from "./objects/registry/registry-object";
import type { SessionObject } from "./session/object";

export interface Env {
  SESSIONS: DurableObjectNamespace<SessionObject>;
  REGISTRY: DurableObjectNamespace<RegistryObject>;
  /** The session index's shards (src/objects/index/index-shards.ts). */
  INDEX: DurableObjectNamespace<IndexShardObject>;
  RATE_LIMITER: DurableObjectNamespace<RateLimiter>;
  RESOURCES: DurableObjectNamespace<ResourceMemoryObject>;
  /** One object per quota subject (src/objects/quota/). */
  QUOTAS: DurableObjectNamespace<QuotaObject>;
  /** One object per eval run (src/objects/evals/). */
  EVAL_RUNS: DurableObjectNamespace<EvalRunObject>;
  BLOBS: R2Bucket;
  /**
   * Dynamic Workers: code tools run in isolates of their own (src/sandbox/, docs/guides/code-tools.md). Absent in a
   * deployment without [[worker_loaders]]: code tools refuse to register there.
   */
  LOADER?: WorkerLoader;
  /** Comma-separated bearer keys, each `key` (admin) or `key:role` (admin, operator, read); none means every /v1 request is 401. */
  API_KEYS?: string;
  /** Signs the short-lived browser tokens of POST /v1/tokens (HMAC-SHA256); unset, no tokens are issued or accepted. */
  TOKEN_SIGNING_SECRET?: string;
  /** Who this deployment's tokens are for: every token carries it as `aud`, and a token with another `aud` is
   * 401 `token_audience_mismatch`. Unset: a digest of the API key set (never a key). Setting or changing it
   * (or, unset, the key set) logs out every token minted before. */
  DEPLOYMENT_ID?: string;
  /** `true`: approvals toward a quorum from one API key, and from every token it minted, count once. */
  APPROVAL_QUORUM_DISTINCT_KEYS?: string;
  /** Token buckets per key or token subject: requests and turn submissions a minute (unset: no limit). */
  RATE_LIMIT_REQUESTS_PER_MIN?: string;
  RATE_LIMIT_TURNS_PER_MIN?: string;
  /** The kinds of JSON log lines to write (`request`, `turn`), comma-separated; unset: all, `off`: none. */
  LOGS?: string;
  /** WebSockets one session accepts at once (default 100); more are closed with code 1013. */
  MAX_SOCKETS_PER_SESSION?: string;
  /** Comma-separated URL prefixes that HTTP tools may call. */
  TOOL_URL_ALLOWLIST?: string;
  /** Comma-separated origins allowed by CORS, or "*". */
  CORS_ORIGINS?: string;
  OPENAI_API_KEY?: string;
  OPENAI_BASE_URL?: string;
  /** "responses": openai models use the Responses API in background mode (re-attached after a restart); default "chat". */
  OPENAI_API?: string;
  ANTHROPIC_API_KEY?: string;
  /** The Anthropic Messages API's base URL, for a gateway or proxy (default https://api.anthropic.com/v1). */
  ANTHROPIC_BASE_URL?: string;
  OPENAI_COMPATIBLE_BASE_URL?: string;
  OPENAI_COMPATIBLE_API_KEY?: string;
  /** Time between keep-alives on SSE, chat streams and WebSockets, in ms (default 25000). */
  STREAM_KEEPALIVE_MS?: string;
  /** A channel WebSocket whose acks lag this many events behind is closed (code 4008); default 10000. */
  WS_MAX_UNACKED_EVENTS?: string;
  /** Outbound subscriptions: first retry delay (default 1000 ms, doubling up to 5 min), attempts before a
   * subscription is marked failing (default 10), and the timeout of one delivery request (default 10000 ms). */
  SUBSCRIPTION_RETRY_BASE_MS?: string;
  SUBSCRIPTION_MAX_ATTEMPTS?: string;
  SUBSCRIPTION_TIMEOUT_MS?: string;
  /** The first retry delay of a CancelTask owed to a remote A2A task (1000 ms), and the requests before giving up (20). */
  A2A_CANCEL_RETRY_BASE_MS?: string;
  A2A_CANCEL_MAX_ATTEMPTS?: string;
  /** agent_orchestrate limits (defaults 3, 12, 4; capped at 5, 50, 16). */
  ORCHESTRATE_MAX_DEPTH?: string;
  ORCHESTRATE_MAX_STEPS?: string;
  ORCHESTRATE_MAX_PARALLEL?: string;
  /** The most an agent's budget may set for a turn's model calls, tool calls and wall-clock ms (defaults 1000,
   * 5000, 3600000; at most 100000, 500000, 86400000); an agent that sets nothing gets 60, 200, 180000. */
  BUDGET_MAX_LLM_CALLS?: string;
  BUDGET_MAX_TOOL_CALLS?: string;
  BUDGET_MAX_WALL_CLOCK_MS?: string;
  /** The deployment's own model prices, JSON: {"<model string or name prefix>": {"input": usd, "output": usd}} per million tokens. */
  MODEL_PRICES?: string;
  /** What models take besides text, JSON: {"<model string or name prefix>": {"images": false}} (model-capabilities.ts). */
  MODEL_CAPABILITIES?: string;
  /** Objects the session index is split over (default 16, 1-256). Fixed per deployment: changing it starts an
   * empty shard set, see docs/scale.md for the migration. */
  INDEX_SHARDS?: string;
  /** How long a Worker isolate serves an agent config from its cache, in seconds (default 5; 0: no cache). */
  AGENT_CACHE_SECONDS?: string;
  /** How long a Worker isolate serves the quota definitions from its cache, in seconds (default 5; 0: no cache). */
  QUOTA_CACHE_SECONDS?: string;
  /** How often a turn paused by a quota looks again whether it has room, in ms (default 10000). */
  QUOTA_RECHECK_MS?: string;
  /** Eval cases in flight across all eval runs of the deployment (default 8): runs past it wait, live traffic keeps the rest. */
  EVAL_MAX_CONCURRENT_CASES?: string;
  /** Days a session may stay idle before it erases itself (unset: kept forever). */
  SESSION_RETENTION_DAYS?: string;
  /** Test-only: the same in seconds, overriding SESSION_RETENTION_DAYS (for tests that cannot wait days). */
  SESSION_RETENTION_SECONDS_FOR_TESTS?: string;
  /** Test-only: "1" enables test hooks (making index writes fail). Never set in production. */
  TEST_HOOKS?: string;
  /** Session files (docs/guides/files.md): bytes a file (default 20 MiB), bytes of all a session's files
   * (default 100 MiB), how many files a session keeps (default 1000), and the media types accepted, comma-separated (default: PNG, JPEG, GIF, WebP, SVG, PDF,
   * plain text, Markdown, CSV, JSON). */
  FILES_MAX_BYTES?: string;
  FILES_MAX_SESSION_BYTES?: string;
  FILES_MAX_SESSION_FILES?: string;
  FILES_MEDIA_TYPES?: string;
  /** Workers AI, for `workers-ai:<model>` (add `[ai] binding = "AI"` to wrangler.toml). */
  AI?: Ai;
}

/** A setting that must be a positive integer (a count, milliseconds): its value, or `fallback` when unset or not one. */
export function positiveSetting<T>(raw: string | undefined, fallback: T): number | T {
  const n = Number(raw);
  return Number.isInteger(n) && n > 0 ? n : fallback;
}
