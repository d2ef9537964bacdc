// One declaration per operation of the HTTP API: method, path, who may call it, what it takes and answers,
// and for a session's operations the session handler it reaches. Plain zod and data: the routes
// (src/routes/operation-route.ts) build the Hono routes and /openapi.json from these, the client takes its
// types from them, docs/reference/api.md is generated from them, and the access test walks them.
import { z } from "zod";
import type { Permission } from "../permissions";

export type Method = "get" | "post" | "put" | "patch" | "delete";

/** The error envelope (docs/reference/errors.md) every failing request answers. */
export const ErrorBody = z.object({ error: z.object({ code: z.string(), message: z.string(), details: z.unknown().optional() }) }).meta({ id: "Error" });

export const ERROR_TEXT = {
  400: "Malformed body",
  401: "Missing or invalid API key or token",
  403: "The key's role or the token's scopes do not allow this",
  404: "Not found",
  409: "Conflict",
  413: "Body too large",
  415: "Media type not accepted (a body that is not JSON, or a file type not on the allowlist)",
  416: "Range not satisfiable",
  422: "Validation failed; details lists each field and reason",
  429: "Rate limited",
} as const;
export type ErrorStatus = keyof typeof ERROR_TEXT;

/** A success response: its description and its body's schema per media type (none: no body). */
export interface Reply {
  description: string;
  content?: Record<string, z.ZodType>;
}

export interface Operation {
  method: Method;
  /** OpenAPI form: `{param}` segments. */
  path: string;
  operationId: string;
  summary: string;
  /** What the caller must be allowed to do; "public" for what anyone may read. */
  permission: Permission | "public";
  /** What the rate limiter counts for it: nothing, the request, or the request and a turn. */
  rateLimit: "none" | "request" | "turn";
  /** Whether a browser may send its credential as `?access_token=` (it cannot set headers there): always, or on an SSE request. */
  queryCredential?: "always" | "event-stream";
  params?: z.ZodObject;
  query?: z.ZodObject;
  body?: { schema: z.ZodType; required: boolean };
  responses: Record<number, Reply>;
  /** The statuses it answers with the error envelope besides those errorStatuses() adds from its access, rate limit and body. */
  errors: readonly ErrorStatus[];
  /**
   * Served by the session the path names (`sid`, or `exec_id`), by the handler of this operationId that one of its
   * capabilities declares (src/session/operations.ts types it from this declaration). Unless `custom`, its route is
   * the generic one: the session gets the path parameters, the query, the body and the caller, and its answer is the response.
   */
  session?: true;
  /** Its route is written by hand in src/routes (it does more than hand the request to one session handler). */
  custom?: true;
  /** A custom session operation's: what its session handler answers the route (`answers<T>()`), which does the rest. */
  answers?: Answer<unknown>;
  /** The body of the statuses in `errors` when the operation speaks a protocol with an error shape of its own (A2A's HTTP+JSON). */
  errorBody?: z.ZodType;
}

/**
 * The statuses an operation answers with the error envelope: its own, and those its access, its rate limit and
 * its body add to every operation that has them (401 and 403 unless it is public, 429 when the limiter counts
 * it, 400, 413 and 415 for a JSON body that is malformed, too large or not JSON).
 */
export function errorStatuses(op: Pick<Operation, "errors" | "permission" | "rateLimit" | "body">): ErrorStatus[] {
  const implied: ErrorStatus[] = [
    ...(op.permission === "public" ? [] : ([401, 403] as const)),
    ...(op.rateLimit === "none" ? [] : ([429] as const)),
    ...(op.body ? ([400, 413, 415] as const) : []),
  ];
  return [...new Set([...op.errors, ...implied])].sort((a, b) => a - b);
}

/** The session a path names: `sid`, or a replay's `exec_id`. */
export const sessionParam = (params: Record<string, string | undefined>): string | undefined => params.sid ?? params.exec_id;

/** A type carried by a declaration (no value at run time): what a custom operation's session handler answers. */
export interface Answer<T> {
  readonly type?: T;
}
export const answers = <T>(): Answer<T> => ({});

/** Declares an operation, keeping its literal types (the routes and the client read its schemas' types). */
export const operation = <const O extends Operation>(op: O): O => op;

export const json = <S extends z.ZodType>(schema: S, description: string) => ({ description, content: { "application/json": schema } });
/** A JSON body, required unless `false` is given (the literal is kept: the handler's input types follow it). */
export function jsonBody<S extends z.ZodType>(schema: S): { schema: S; required: true };
export function jsonBody<S extends z.ZodType>(schema: S, required: false): { schema: S; required: false };
export function jsonBody<S extends z.ZodType>(schema: S, required = true): { schema: S; required: boolean } {
  return { schema, required };
}

const pathParam = (example?: string) => (example ? z.string().meta({ example }) : z.string());
/** The session id of a session's path. */
export const Sid = z.object({ sid: pathParam("ses_0123456789abcdef01234567") });
/** A session's path with more `{param}` segments. */
export const sidWith = <K extends string>(...names: K[]) => Sid.extend(Object.fromEntries(names.map((n) => [n, z.string()])) as { [P in K]: z.ZodString });

/** The response of an operation at a status, as its schema's output type. */
export type ResponseOf<O extends Operation, S extends keyof O["responses"]> = O["responses"][S] extends {
  content: { "application/json": infer T extends z.ZodType };
}
  ? z.output<T>
  : never;
type Success = 200 | 201 | 202 | 203 | 204 | 205 | 206;
/** The statuses an operation answers when it succeeds (its declared 2xx responses). */
export type SuccessStatus<O extends Operation> = Extract<keyof O["responses"], Success>;
/** What a successful call answers: the JSON body of each success status, `undefined` for a 204. */
export type AnswerOf<O extends Operation> =
  SuccessStatus<O> extends infer S ? (S extends SuccessStatus<O> ? (S extends 204 ? undefined : ResponseOf<O, S>) : never) : never;
/** The query of an operation as its handler reads it (its values parsed). */
export type QueryOf<O extends Operation> = O["query"] extends z.ZodType ? z.output<O["query"]> : never;
/** The body of an operation as its caller writes it. */
export type BodyOf<O extends Operation> = O["body"] extends { schema: infer T extends z.ZodType } ? z.input<T> : never;
