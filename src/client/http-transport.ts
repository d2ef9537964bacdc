// How the client sends a request: the runtime's URL and key, the fetch it was given, errors as RuntimeError.
// Every request is built from its operation's declaration (operation-request.ts); HttpApi (http-api.ts) builds its
// typed calls on `call` (a JSON answer) and `request` (the Response, for bytes and streams).
import type { AnswerOf, Operation } from "../protocol/operations";
import type { BackoffOptions, FetchLike, RuntimeClientOptions } from "./client-options";
import { type ResponseLike, RuntimeError } from "./errors";
import { operationPath, type QueryValue, RawBody, type RequestArgs } from "./operation-request";
import type { WebSocketConstructorLike, WebSocketFactory } from "./socket";

export class HttpTransport {
  readonly baseUrl: string;
  protected readonly key: string;
  protected readonly fetchImpl: FetchLike;
  protected readonly wsImpl: WebSocketConstructorLike | WebSocketFactory | undefined;
  protected readonly backoff: Required<BackoffOptions>;

  constructor(options: RuntimeClientOptions) {
    if (!options.url) throw new TypeError("RuntimeClient: url is required");
    if (!options.key) throw new TypeError("RuntimeClient: key is required");
    this.baseUrl = options.url.replace(/\/+$/, "");
    this.key = options.key;
    const globalFetch = (globalThis as { fetch?: FetchLike }).fetch;
    const f = options.fetch ?? (globalFetch ? globalFetch.bind(globalThis) : undefined);
    if (!f) throw new TypeError("RuntimeClient: no fetch available; pass options.fetch");
    this.fetchImpl = f;
    this.wsImpl = options.WebSocket ?? (globalThis as { WebSocket?: WebSocketConstructorLike }).WebSocket;
    this.backoff = { initialMs: 250, maxMs: 15_000, factor: 2, ...options.backoff };
  }

  /** Sends a request to `op` and answers its Response (a failing status throws RuntimeError). */
  protected async request<O extends Operation>(op: O, ...[input, options]: RequestArgs<O>): Promise<ResponseLike> {
    // Its parts as the builder reads them (RequestArgs<O> has typed them for this operation).
    const { params, query, body } = (input ?? {}) as { params?: Record<string, string>; query?: Record<string, QueryValue>; body?: unknown };
    const method = op.method.toUpperCase();
    const path = operationPath(op, params, query);
    const headers: Record<string, string> = { authorization: `Bearer ${this.key}`, accept: "application/json", ...options?.headers };
    const raw = body instanceof RawBody ? body : null;
    if (body !== undefined) headers["content-type"] = raw ? raw.contentType : "application/json";
    let res: ResponseLike;
    try {
      res = await this.fetchImpl(`${this.baseUrl}${path}`, {
        method,
        headers,
        ...(body === undefined ? {} : { body: raw ? raw.bytes : JSON.stringify(body) }),
        ...(options?.signal ? { signal: options.signal } : {}),
      });
    } catch (err) {
      if (options?.signal?.aborted) throw err;
      throw RuntimeError.network(err, `${method} ${path.split("?")[0]}`);
    }
    if (!res.ok) throw await RuntimeError.fromResponse(res);
    return res;
  }

  /** Sends a request to `op` and answers its JSON body as declared for its success status (`undefined` for a 204). */
  protected async call<O extends Operation>(op: O, ...args: RequestArgs<O>): Promise<AnswerOf<O>> {
    const res = await this.request(op, ...args);
    if (res.status === 204) return undefined as AnswerOf<O>;
    const text = await res.text();
    try {
      return JSON.parse(text) as AnswerOf<O>;
    } catch {
      throw new RuntimeError(res.status, "malformed_response", `${op.method.toUpperCase()} ${op.path} answered a body that is not JSON`);
    }
  }
}
