// Shared pieces of the HTTP surface: the app type, the error envelope, auth, and stub lookups.
import { OpenAPIHono, z } from "@hono/zod-openapi";
import type { Context, MiddlewareHandler } from "hono";
import { HTTPException } from "hono/http-exception";
import type { Env } from "../env";
import { ApiError, zodIssues } from "../runtime/errors";

export type AppEnv = { Bindings: Env; Variables: { keyHash: string } };

export const ErrorSchema = z
  .object({
    error: z.object({
      code: z.string(),
      message: z.string(),
      details: z.unknown().optional(),
    }),
  })
  .openapi("Error");

export function errorResponses(...statuses: number[]) {
  const text: Record<number, string> = {
    400: "Malformed body",
    401: "Missing or invalid API key",
    404: "Not found",
    409: "Conflict",
    413: "Body too large",
    422: "Validation failed; details lists each field and reason",
    429: "Rate limited",
  };
  return Object.fromEntries(statuses.map((s) => [s, { description: text[s] ?? "Error", content: { "application/json": { schema: ErrorSchema } } }]));
}

/** A router whose validation failures become the SPEC §2 422 envelope. */
export function router(): OpenAPIHono<AppEnv> {
  return new OpenAPIHono<AppEnv>({
    defaultHook: (result) => {
      if (!result.success) throw ApiError.validation(zodIssues(result.error.issues));
    },
  });
}

export function errorJson(c: Context, err: ApiError) {
  return c.json(err.toBody(), err.status as 400);
}

export function toApiError(err: unknown): ApiError {
  if (err instanceof ApiError) return err;
  if (err instanceof HTTPException) {
    if (err.status === 413) return new ApiError("body_too_large", "Request body is too large");
    if (err.status === 415) return new ApiError("malformed_body", "Content-Type must be application/json");
    if (err.status === 400) return new ApiError("malformed_body", err.message || "Malformed request body");
  }
  console.error("unhandled error", err);
  return new ApiError("internal_error", "Internal error");
}

/** Who made a decision, without storing the key: the first 16 hex digits of its SHA-256. */
async function keyHash(key: string): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(key)));
  return `key_${[...digest.slice(0, 8)].map((b) => b.toString(16).padStart(2, "0")).join("")}`;
}

function timingSafeEqual(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
}

const STREAM_ROUTE = { ws: /^\/v1\/sessions\/[^/]+\/ws$/, sse: /^\/v1\/sessions\/[^/]+\/events$/ };

/** Bearer auth for /v1; `?access_token=` is accepted only where browsers cannot set headers (WS, SSE). */
export const requireApiKey: MiddlewareHandler<AppEnv> = async (c, next) => {
  const keys = (c.env.API_KEYS ?? "")
    .split(",")
    .map((k) => k.trim())
    .filter(Boolean);
  const header = c.req.header("authorization") ?? "";
  let presented = /^Bearer\s+(.+)$/i.exec(header)?.[1]?.trim() ?? null;
  const streaming =
    c.req.method === "GET" &&
    (STREAM_ROUTE.ws.test(c.req.path) || (STREAM_ROUTE.sse.test(c.req.path) && (c.req.header("accept") ?? "").includes("text/event-stream")));
  if (presented === null && streaming) presented = c.req.query("access_token") ?? null;
  if (presented === null || !keys.some((k) => timingSafeEqual(k, presented!))) {
    throw new ApiError("unauthorized", keys.length === 0 ? "No API keys are configured for this deployment" : "Missing or invalid API key");
  }
  c.set("keyHash", await keyHash(presented));
  await next();
};

const SESSION_ID = /^ses_[0-9a-f]{24}$/;

export function sessionStub(env: Env, sessionId: string) {
  if (!SESSION_ID.test(sessionId)) throw new ApiError("not_found", `Session '${sessionId}' was not found`);
  return env.SESSIONS.get(env.SESSIONS.idFromName(sessionId));
}
