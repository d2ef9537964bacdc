// One error type for everything a client can be told about; routes turn it into the SPEC §2 envelope.

export type ErrorCode =
  | "malformed_body"
  | "unauthorized"
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

/** Turns zod issues into `{path, reason}` pairs. */
export function zodIssues(issues: readonly { path: readonly PropertyKey[]; message: string }[], prefix = ""): FieldIssue[] {
  return issues.map((i) => ({
    path: [prefix, ...i.path.map(String)].filter((p) => p !== "").join("."),
    reason: i.message,
  }));
}
