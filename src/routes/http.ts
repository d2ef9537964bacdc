// Shared pieces of the HTTP surface: the app type, the error envelope, and stub lookups.
import { OpenAPIHono } from "@hono/zod-openapi";
import type { Context } from "hono";
import { HTTPException } from "hono/http-exception";
import type { Env } from "../env";
import { ApiError, unwrap, zodIssues } from "../protocol/errors";
import type { SessionHandler } from "../protocol/operations/operation";
import type { Principal } from "../protocol/permissions";
import type { OperationInput } from "../session/capability";
import { unsupportedMediaType } from "./json-depth";

export type AppEnv = { Bindings: Env; Variables: { principal: Principal; keyHash: string } };

/** A router whose validation failures become the 422 error envelope (docs/reference/errors.md). */
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
    if (err.status === 415) return unsupportedMediaType();
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

/**
 * Runs the session operation `name` of session `sid` (SessionObject.call) and returns its value, typed by the
 * caller (the RPC's typing of it is lost). `params` are the operation's path parameters besides `sid`.
 */
export async function callSession<T>(
  env: Env,
  sid: string,
  name: SessionHandler,
  input: Omit<OperationInput, "params"> & { params?: Record<string, string> },
): Promise<T> {
  return unwrap(await sessionStub(env, sid).call(name, { ...input, params: { sid, ...input.params } })) as T;
}
