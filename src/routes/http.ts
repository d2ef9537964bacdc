// Shared pieces of the HTTP surface: the app type, the error envelope, and stub lookups.
import { OpenAPIHono } from "@hono/zod-openapi";
import type { Context } from "hono";
import { HTTPException } from "hono/http-exception";
import type { InProcessTools } from "../engine/tools/in-process";
import type { Env } from "../env";
import { ApiError, unwrap, zodIssues } from "../protocol/errors";
import type { Principal } from "../protocol/permissions";
import type { OpInput, OpName } from "../protocol/session-operations";
import type { OpResult, SessionObject } from "../session/object";
import { unsupportedMediaType } from "./json-depth";

/** `tools`: the deployment's in-process tools, set for every request by the app createRuntime makes (runtime/app.ts). */
export type AppEnv = { Bindings: Env; Variables: { principal: Principal; keyHash: string; tools: InProcessTools } };
/** What checking an agent config needs of a request: the deployment's bindings and its in-process tools. */
export type Deployment = { env: Env; var: Pick<AppEnv["Variables"], "tools"> };

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
  if (!SESSION_ID.test(sessionId)) throw ApiError.noSession(sessionId);
  return env.SESSIONS.get(env.SESSIONS.idFromName(sessionId));
}

/** What a caller gives a session operation: its input, with the path's parameters besides `sid` (when it has more). */
export type CallInput<N extends OpName> = Omit<OpInput<N>, "params"> & { params?: Omit<OpInput<N>["params"], "sid"> };

/** Runs the session operation `name` of session `sid` (SessionObject.call) and returns what it declares it answers. */
export async function callSession<N extends OpName>(env: Env, sid: string, name: N, input: CallInput<N>): Promise<OpResult<N>> {
  const full = { ...input, params: { sid, ...input.params } } as OpInput<N>;
  return unwrap(await sessionCalls(env, sid).call(name, full));
}

/** The session's generic RPCs (its operation dispatch, its file ledger), typed as the object declares them. */
export function sessionCalls(env: Env, sid: string): Pick<SessionObject, "call" | "fileOp"> {
  // The stub's RPC typing drops a generic method's type parameter; the object's own signature is the contract.
  return sessionStub(env, sid) as unknown as Pick<SessionObject, "call" | "fileOp">;
}
