// One error type for everything a client can be told about; routes turn it into the SPEC §2 envelope.

export type ErrorCode =
  | "malformed_body"
  | "unauthorized"
  | "token_expired"
  | "invalid_token"
  | "forbidden"
  | "not_found"
  | "conflict"
  | "body_too_large"
  | "validation_failed"
  | "rate_limited"
  | "upgrade_required"
  | "internal_error";

const STATUS: Record<ErrorCode, number> = {
  malformed_body: 400,
  unauthorized: 401,
  token_expired: 401,
  invalid_token: 401,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  body_too_large: 413,
  validation_failed: 422,
  rate_limited: 429,
  upgrade_required: 426,
  internal_error: 500,
};

export interface FieldIssue {
  path: string;
  reason: string;
}

export interface ErrorBody {
  error: { code: ErrorCode; message: string; details?: unknown };
}

export class ApiError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: unknown,
  ) {
    super(message);
    this.name = "ApiError";
  }

  get status(): number {
    return STATUS[this.code];
  }

  toBody(): ErrorBody {
    return { error: { code: this.code, message: this.message, ...(this.details === undefined ? {} : { details: this.details }) } };
  }

  static validation(issues: FieldIssue[]): ApiError {
    const summary = issues.map((i) => `${i.path || "(body)"}: ${i.reason}`).join("; ");
    return new ApiError("validation_failed", `Validation failed: ${summary}`, issues);
  }

  static notFound(what: string, id: string): ApiError {
    return new ApiError("not_found", `${what} '${id}' was not found`);
  }
}

/** A value or an error, for crossing the Durable Object RPC boundary (thrown errors lose their fields there). */
export type Result<T> = { ok: true; value: T } | { ok: false; error: ErrorBody["error"] };

export async function toResult<T>(fn: () => T | Promise<T>): Promise<Result<T>> {
  try {
    return { ok: true, value: await fn() };
  } catch (err) {
    if (err instanceof ApiError) return { ok: false, error: err.toBody().error };
    throw err;
  }
}

export function unwrap<T>(result: Result<T>): T {
  if (result.ok) return result.value;
  throw new ApiError(result.error.code, result.error.message, result.error.details);
}

interface ZodIssueLike {
  code?: string;
  path: readonly PropertyKey[];
  message: string;
  keys?: readonly string[];
  issues?: readonly ZodIssueLike[];
}

/** Turns zod issues into `{path, reason}` pairs: an unknown field is reported at its own path, a bad record key with its reason. */
export function zodIssues(issues: readonly ZodIssueLike[], prefix = ""): FieldIssue[] {
  const join = (path: readonly PropertyKey[]) => [prefix, ...path.map(String)].filter((p) => p !== "").join(".");
  return issues.flatMap((i) => {
    if (i.code === "unrecognized_keys" && i.keys) return i.keys.map((key) => ({ path: join([...i.path, key]), reason: "is not a known field" }));
    if (i.code === "invalid_key" && i.issues?.[0]) return [{ path: join(i.path), reason: i.issues[0].message }];
    return [{ path: join(i.path), reason: i.message }];
  });
}

/** A readable message for anything thrown. */
export function errorMessage(err: unknown): string {
  if (err instanceof Error) return err.message || err.name;
  if (typeof err === "string") return err;
  try {
    return JSON.stringify(err);
  } catch {
    return String(err);
  }
}
