// The one error type of the client: an HTTP error envelope `{"error":{code,message,details?}}`, or a
// network failure (status 0).

export interface ResponseLike {
  readonly status: number;
  readonly ok: boolean;
  readonly headers: { get(name: string): string | null };
  text(): Promise<string>;
  arrayBuffer(): Promise<ArrayBuffer>;
}

export class RuntimeError extends Error {
  override readonly name = "RuntimeError";

  constructor(
    /** The HTTP status; 0 when the server could not be reached. */
    readonly status: number,
    /** The envelope's code (`unauthorized`, `not_found`, `validation_failed`, ...), `network_error` or `http_<status>`. */
    readonly code: string,
    message: string,
    /** The envelope's details: for 422, `[{path, reason}]` for each failing field. */
    readonly details?: unknown,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }

  /** Reads an error response into a RuntimeError (a body that is not the envelope keeps its first 200 characters). */
  static async fromResponse(res: ResponseLike): Promise<RuntimeError> {
    let text = "";
    try {
      text = await res.text();
    } catch {
      // an unreadable body: the status says enough
    }
    try {
      const body = JSON.parse(text) as { error?: { code?: unknown; message?: unknown; details?: unknown } };
      const e = body.error;
      if (e && typeof e.code === "string") {
        return new RuntimeError(res.status, e.code, typeof e.message === "string" ? e.message : e.code, e.details);
      }
    } catch {
      // not JSON
    }
    const snippet = text.trim().replace(/\s+/g, " ").slice(0, 200);
    return new RuntimeError(res.status, `http_${res.status}`, `HTTP ${res.status}${snippet ? `: ${snippet}` : ""}`);
  }

  static network(err: unknown, what: string): RuntimeError {
    let reason = err instanceof Error ? err.message : String(err);
    // Node's fetch says only "fetch failed"; the cause has the system error (ECONNREFUSED, ENOTFOUND, ...).
    const cause = err instanceof Error ? (err.cause as { code?: unknown; message?: unknown } | undefined) : undefined;
    if (cause && typeof cause.code === "string") reason += ` (${cause.code})`;
    else if (cause && typeof cause.message === "string") reason += ` (${cause.message})`;
    return new RuntimeError(0, "network_error", `${what} failed: ${reason}`, undefined, { cause: err });
  }

  /** Whether trying again later can help: a network failure, 408, 429 or a 5xx. Any other 4xx is final. */
  get retryable(): boolean {
    return this.status === 0 || this.status === 408 || this.status === 429 || this.status >= 500;
  }

  /** The 422 field list, when there is one. */
  get fieldIssues(): { path: string; reason: string }[] {
    return Array.isArray(this.details)
      ? this.details.filter((d): d is { path: string; reason: string } => !!d && typeof d === "object" && "path" in d && "reason" in d)
      : [];
  }
}
