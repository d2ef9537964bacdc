// A declared operation (src/protocol/operations/) as a Hono route: its OpenAPI config for `.openapi()`, with the
// request schemas it validates, the responses it documents (and types), and the middleware every operation
// runs before its validators: who the caller is, whether it may do this, the rate limits, the body's size and depth.
import { createRoute, type RouteConfig } from "@hono/zod-openapi";
import { bodyLimit } from "hono/body-limit";
import type { MiddlewareHandler } from "hono/types";
import { ApiError } from "../protocol/errors";
import { ERROR_TEXT, ErrorBody, errorStatuses, type Operation } from "../protocol/operations/operation";
import { authenticate, authorize } from "./auth";
import { type AppEnv, errorJson } from "./http";
import { checkJsonBody } from "./json-depth";
import { rateLimit } from "./rate-limit";

const MAX_BODY_BYTES = 1024 * 1024;

const limitBody = bodyLimit({
  maxSize: MAX_BODY_BYTES,
  onError: (c) => errorJson(c, new ApiError("body_too_large", `Request body is larger than ${MAX_BODY_BYTES} bytes`)),
});

/**
 * A media type keyed as Hono's types read it. They read "application/<x>json" as JSON and type only plain, `+json`
 * and `vnd.` ones (JSON lines, application/x-ndjson, would type its handler as never): such a type is keyed by
 * `string`, which they answer with a plain Response. The OpenAPI document keeps the declared name.
 */
type MediaKey<M> = M extends `application/${infer S}json${string}` ? (S extends "" | `${string}+` | `vnd.${string}+` ? M : string) : M;
type Content<C> = { [M in keyof C as MediaKey<M>]: { schema: C[M] } };
type Responses<O extends Operation> = {
  [S in keyof O["responses"]]: O["responses"][S] extends { content: infer C } ? { description: string; content: Content<C> } : { description: string };
};
type Part<O, K extends string> = O extends { [P in K]: infer T } ? T : undefined;
type BodyOf<O extends Operation> = O extends { body: { schema: infer S } } ? { required: boolean; content: { "application/json": { schema: S } } } : undefined;

/** The route config of an operation, typed from its declaration (so handlers see its validated input). */
export type RouteOf<O extends Operation> = {
  method: O["method"];
  path: O["path"];
  request: { params: Part<O, "params">; query: Part<O, "query">; body: BodyOf<O> };
  responses: Responses<O>;
  middleware: MiddlewareHandler<AppEnv>[];
} & Omit<RouteConfig, "method" | "path" | "request" | "responses" | "middleware">;

/**
 * What runs before an operation's validators: nothing for a public one. `readsBody: false` for a handler that
 * hands the raw request on (the depth check would consume its body); `limitsBody: false` for one that bounds
 * its body itself (a file upload).
 */
export function guards(op: Operation, { readsBody = true, limitsBody = true } = {}): MiddlewareHandler<AppEnv>[] {
  if (op.permission === "public") return [];
  const checks = [authenticate(op.queryCredential), authorize(op.permission), rateLimit(op.rateLimit), ...(limitsBody ? [limitBody] : [])];
  return readsBody ? [...checks, checkJsonBody] : checks;
}

/**
 * An optional body sent empty (a JSON content type and no bytes) is an empty object, as when none is sent: the
 * validator parses the cached text "{}" instead of failing on "" as malformed JSON.
 */
const emptyOptionalBody: MiddlewareHandler<AppEnv> = async (c, next) => {
  // Hono keeps each body read as a promise (its type says otherwise).
  if ((await c.req.text()) === "") (c.req.bodyCache as { text?: Promise<string> }).text = Promise.resolve("{}");
  await next();
};

/** The OpenAPI route config of `op`, with its guards (and an optional body's reading) as route middleware. */
export function route<O extends Operation>(op: O): RouteOf<O> {
  const responses: RouteConfig["responses"] = {};
  for (const [status, { description, content }] of Object.entries(op.responses)) {
    responses[status] = content
      ? { description, content: Object.fromEntries(Object.entries(content).map(([media, schema]) => [media, { schema }])) }
      : { description };
  }
  for (const status of errorStatuses(op)) {
    const schema = op.errorBody && op.errors.includes(status) ? op.errorBody : ErrorBody;
    responses[status] = { description: ERROR_TEXT[status], content: { "application/json": { schema } } };
  }
  return createRoute({
    method: op.method,
    path: op.path,
    operationId: op.operationId,
    summary: op.summary,
    ...(op.permission === "public" ? { security: [] } : {}),
    request: {
      ...(op.params ? { params: op.params } : {}),
      ...(op.query ? { query: op.query } : {}),
      ...(op.body ? { body: { required: op.body.required, content: { "application/json": { schema: op.body.schema } } } } : {}),
    },
    responses,
    middleware: op.body?.required === false ? [...guards(op), emptyOptionalBody] : guards(op),
  }) as unknown as RouteOf<O>;
}
