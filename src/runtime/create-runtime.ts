// The runtime as a package (docs/guides/typescript-tools.md): a tenant's Worker calls createRuntime with its
// in-process tools and exports what it answers, the Worker's default export and the Durable Object classes
// its wrangler.toml binds. The tools stay in the Worker's module scope: the session objects get them from the
// class made here, never through env.
import type { OpenAPIHono } from "@hono/zod-openapi";
import { type InProcessToolSpec, inProcessTools } from "../engine/tools/in-process";
import type { Env } from "../env";
import { EvalRunObject } from "../objects/evals/eval-run-object";
import { IndexShardObject } from "../objects/index/index-shard";
import { ResourceMemoryObject } from "../objects/memory/resource-memory-object";
import { QuotaObject } from "../objects/quota/quota-object";
import { RateLimiter } from "../objects/rate-limiter/rate-limiter";
import { RegistryObject } from "../objects/registry/registry-object";
import type { AppEnv } from "../routes/http";
import { CodeToolOutbound } from "../sandbox/outbound";
import { SessionObject as BaseSessionObject } from "../session/object";
import { createApp } from "./app";

export interface RuntimeOptions {
  /**
   * In-process tools by name: an AI SDK `tool({ description, inputSchema, execute })`, or `{ tool, permission_class,
   * idempotent, parallel_safe, timeout_ms, lock }`. An agent exposes one by naming it in `tools`, like a built-in.
   */
  tools?: Record<string, InProcessToolSpec>;
}

export interface Runtime {
  /** The Worker's default export: `export default runtime.worker`. */
  worker: Pick<OpenAPIHono<AppEnv>, "fetch">;
  /** The Durable Object classes wrangler.toml binds, each exported under its name: `export const { SessionObject, ... } = runtime.objects`. */
  objects: {
    SessionObject: typeof BaseSessionObject;
    RegistryObject: typeof RegistryObject;
    RateLimiter: typeof RateLimiter;
    IndexShardObject: typeof IndexShardObject;
    ResourceMemoryObject: typeof ResourceMemoryObject;
    QuotaObject: typeof QuotaObject;
    EvalRunObject: typeof EvalRunObject;
  };
  /** The entrypoint code tools reach their declared hosts through (docs/guides/code-tools.md): `export const { CodeToolOutbound } = runtime.entrypoints`. */
  entrypoints: { CodeToolOutbound: typeof CodeToolOutbound };
}

/** The runtime with `options.tools`; throws at the Worker's start on a tool it cannot take (its name, its options). */
export function createRuntime(options: RuntimeOptions = {}): Runtime {
  const tools = inProcessTools(options.tools ?? {});
  const app = createApp(tools);
  class SessionObject extends BaseSessionObject {
    constructor(ctx: DurableObjectState, env: Env) {
      super(ctx, env, tools);
    }
  }
  return {
    worker: { fetch: app.fetch },
    objects: { SessionObject, RegistryObject, RateLimiter, IndexShardObject, ResourceMemoryObject, QuotaObject, EvalRunObject },
    entrypoints: { CodeToolOutbound },
  };
}
