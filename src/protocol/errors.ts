// One error type for everything a client can be told about; routes turn it into the error envelope (docs/reference/errors.md).

/** Every code a client can get in the error envelope, with its HTTP status and meaning (docs/reference/errors.md). */
export const ERROR_CODES = {
  malformed_body: { status: 400, meaning: "The body (or a WebSocket frame) is not valid JSON." },
  unauthorized: { status: 401, meaning: "No API key or token, or one the deployment does not know (also when no keys are configured)." },
  token_expired: { status: 401, meaning: "A browser token past its expiry; ask `POST /v1/tokens` for a new one." },
  invalid_token: {
    status: 401,
    meaning: "A token that is malformed, tampered with, not signed by this deployment, or minted by an API key the deployment no longer has.",
  },
  token_audience_mismatch: {
    status: 401,
    meaning:
      "A token issued for another deployment (its `aud` is not this deployment's `DEPLOYMENT_ID`, or digest of its API keys), or before that id changed; ask `POST /v1/tokens` for a new one.",
  },
  forbidden: { status: 403, meaning: "The key's role or the token's grants, session or agent do not allow this request." },
  not_found: {
    status: 404,
    meaning:
      "The session, agent, turn, action, schedule, subscription, artifact or file does not exist (or was erased); `details.missing` is `session` when it is the session itself.",
  },
  conflict: {
    status: 409,
    meaning:
      "The request contradicts the current state: an idempotency key reused with another body, an action already decided, a turn not ended, a session holding as many files as it may (`FILES_MAX_SESSION_FILES`).",
  },
  session_busy: {
    status: 409,
    meaning: "A turn submitted with on_busy `reject` while another runs; `details.running_turn_id` names the running turn. Nothing was stored.",
  },
  eval_gate_failed: {
    status: 409,
    meaning:
      "A label move that requires an eval (`require`) found no finished run of the version on the dataset version, or the newest one fails: `details` names the run and each failing scorer (its mean and the minimum) or cost ratio.",
  },
  body_too_large: {
    status: 413,
    meaning: "A request body over 1 MiB, or a file over the limit of a file (`FILES_MAX_BYTES`) or of a session's files (`FILES_MAX_SESSION_BYTES`).",
  },
  unsupported_media_type: {
    status: 415,
    meaning:
      "A request body sent under a Content-Type other than `application/json` or `application/<type>+json` (any case, with parameters), or a file whose media type is not on the deployment's allowlist (`FILES_MEDIA_TYPES`).",
  },
  range_not_satisfiable: { status: 416, meaning: "A `Range` header that asks for bytes past the end of the file." },
  validation_failed: { status: 422, meaning: "A field is missing, unknown or invalid; `details` lists `{path, reason}` for each." },
  rate_limited: { status: 429, meaning: "Too many requests or turns a minute for this key, or the session's queue (20 turns and live messages) is full." },
  upgrade_required: { status: 426, meaning: "The WebSocket route called without a WebSocket upgrade." },
  internal_error: { status: 500, meaning: "The runtime failed; the log says more (`runtime.error`, `turn.failed`)." },
} as const satisfies Record<string, { status: number; meaning: string }>;

export type ErrorCode = keyof typeof ERROR_CODES;

export interface FieldIssue {
  path: string;
  reason: string;
}

/**
 * A refusal of a turn's input with each issue's `input[k]` or `input[k].field` path named as a surface's own
 * request has it (`rename` answers the new path; `whole` is the matched part), and `input` itself as `all` when
 * given; any other error as it is.
 */
export function inputPathsAs(err: unknown, rename: (k: number, field: string | undefined, whole: string) => string, all?: string): unknown {
  if (!(err instanceof ApiError) || err.code !== "validation_failed" || !Array.isArray(err.details)) return err;
  return ApiError.validation(
    (err.details as FieldIssue[]).map((issue) => ({
      ...issue,
      path:
        issue.path === "input" && all !== undefined
          ? all
          : issue.path.replace(/^input\[(\d+)\](?:\.(\w+))?/, (whole, k: string, field?: string) => rename(Number(k), field, whole)),
    })),
  );
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
    return ERROR_CODES[this.code].status;
  }

  toBody(): ErrorBody {
    return { error: { code: this.code, message: this.message, ...(this.details === undefined ? {} : { details: this.details }) } };
  }

  static validation(issues: FieldIssue[]): ApiError {
    const summary = issues.map((i) => `${i.path || "(body)"}: ${i.reason}`).join("; ");
    return new ApiError("validation_failed", `Validation failed: ${summary}`, issues);
  }

  /** A name or id the runtime has nothing of is quoted so in every message ('alice', 'ses_…'); a value to send as JSON writes it ("reject"). */
  static notFound(what: string, id: string): ApiError {
    return new ApiError("not_found", `${what} '${id}' was not found`);
  }

  /** The session object asked holds no session (never created, or erased): callers that may open it tell this
   * 404 from one about something the request names. */
  static noSession(id?: string): ApiError {
    return new ApiError("not_found", id === undefined ? "Session was not found" : `Session '${id}' was not found`, { missing: "session" });
  }

  static isNoSession(err: unknown): boolean {
    return err instanceof ApiError && err.code === "not_found" && (err.details as { missing?: unknown } | undefined)?.missing === "session";
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
  /** invalid_union: each alternative's issues, their paths relative to the union's value. */
  errors?: readonly (readonly ZodIssueLike[])[];
  expected?: string;
  values?: readonly unknown[];
  received?: string;
  /** too_big / too_small: "int" for zod's own bound of an integer (the safe range), beside the field's own bound. */
  origin?: string;
}

/** zod's bound of an integer to the safe range: 2^64 fails it and the field's own maximum, which says more. */
const safeRange = (i: ZodIssueLike): boolean => i.origin === "int" && (i.code === "too_big" || i.code === "too_small");

/** An issue's reason: a number JSON overflowed (1e400 is Infinity) or one past the safe integers said as such. */
function reasonOf(i: ZodIssueLike): string {
  if (i.code === "invalid_type" && (i.received === "Infinity" || i.received === "-Infinity")) return "must be a finite number";
  if (safeRange(i)) return i.code === "too_big" ? `must be at most ${Number.MAX_SAFE_INTEGER}` : `must be at least ${Number.MIN_SAFE_INTEGER}`;
  return i.message;
}

/**
 * Turns zod issues into `{path, reason}` pairs, one per field (the first said of it): an unknown field is reported
 * at its own path, a bad record key with its reason.
 */
export function zodIssues(issues: readonly ZodIssueLike[], prefix = ""): FieldIssue[] {
  const join = (path: readonly PropertyKey[]) => [prefix, ...path.map(String)].filter((p) => p !== "").join(".");
  const bounded = new Set(issues.filter((i) => !safeRange(i)).map((i) => join(i.path)));
  const all = issues
    .filter((i) => !(safeRange(i) && bounded.has(join(i.path))))
    .flatMap((i): FieldIssue[] => {
      if (i.code === "unrecognized_keys" && i.keys) return i.keys.map((key) => ({ path: join([...i.path, key]), reason: "is not a known field" }));
      if (i.code === "invalid_key" && i.issues?.[0]) return [{ path: join(i.path), reason: i.issues[0].message }];
      if (i.code === "invalid_union" && i.errors && i.errors.length > 0) return unionIssues(i.errors, join(i.path));
      return [{ path: join(i.path), reason: reasonOf(i) }];
    });
  const said = new Set<string>();
  return all.filter((i) => !said.has(i.path) && said.add(i.path));
}

/**
 * A value no alternative of a union takes, said as zod's bare "Invalid input" would not: when an alternative
 * took the value's shape (it refused only what lies inside, or fields it does not know), that alternative's
 * issues (the fewest such); otherwise what the alternatives expect (`expected string or array, received number`).
 */
function unionIssues(alternatives: readonly (readonly ZodIssueLike[])[], at: string): FieldIssue[] {
  const shaped = alternatives.filter((issues) => issues.every((i) => i.path.length > 0 || i.code === "unrecognized_keys"));
  if (shaped.length > 0) {
    const fewest = shaped.reduce((best, issues) => (issues.length < best.length ? issues : best));
    return zodIssues(fewest, at);
  }
  const expected = alternatives.flatMap((issues) =>
    issues.flatMap((i) =>
      i.code === "invalid_type" && i.expected ? [i.expected] : i.code === "invalid_value" && i.values ? i.values.map((v) => JSON.stringify(v)) : [],
    ),
  );
  const received = alternatives
    .flat()
    .map((i) => / received (\w+)$/.exec(i.message)?.[1])
    .find(Boolean);
  if (expected.length === 0) return [{ path: at, reason: alternatives.flat()[0]?.message ?? "Invalid input" }];
  return [{ path: at, reason: `Invalid input: expected ${[...new Set(expected)].join(" or ")}${received ? `, received ${received}` : ""}` }];
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
