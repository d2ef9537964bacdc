// Shared pieces of the HTTP surface: the app type, the error envelope, auth, and stub lookups.
import { OpenAPIHono, z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { HTTPException } from "hono/http-exception";
import type { Env } from "../env";
import { ApiError, zodIssues } from "../runtime/errors";
import type { Principal } from "./permissions";

export type AppEnv = { Bindings: Env; Variables: { principal: Principal; keyHash: string } };

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
    401: "Missing or invalid API key or token",
    403: "The key's role or the token's scopes do not allow this",
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

const SESSION_ID = /^ses_[0-9a-f]{24}$/;

export function sessionStub(env: Env, sessionId: string) {
  if (!SESSION_ID.test(sessionId)) throw new ApiError("not_found", `Session '${sessionId}' was not found`);
  return env.SESSIONS.get(env.SESSIONS.idFromName(sessionId));
}
