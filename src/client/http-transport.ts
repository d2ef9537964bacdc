// How the client sends a request: the runtime's URL and key, the fetch it was given, errors as RuntimeError.
// HttpApi (http-api.ts) builds its typed calls on it.
import type { BackoffOptions, FetchLike, RuntimeClientOptions } from "./client-options";
import { type ResponseLike, RuntimeError } from "./errors";
import type { WebSocketConstructorLike, WebSocketFactory } from "./socket";

export const enc = encodeURIComponent;

/** A request body sent as it is (a file upload), rather than as JSON. */
export class RawBody {
  constructor(
    readonly bytes: Uint8Array | Blob,
    readonly contentType: string,
  ) {}
}
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

  protected async request(method: string, path: string, body?: unknown, signal?: AbortSignal, extra?: Record<string, string>): Promise<ResponseLike> {
    const headers: Record<string, string> = { authorization: `Bearer ${this.key}`, accept: "application/json", ...extra };
    const raw = body instanceof RawBody ? body : null;
    if (body !== undefined) headers["content-type"] = raw ? raw.contentType : "application/json";
    let res: ResponseLike;
    try {
      res = await this.fetchImpl(`${this.baseUrl}${path}`, {
        method,
        headers,
        ...(body === undefined ? {} : { body: raw ? raw.bytes : JSON.stringify(body) }),
        ...(signal ? { signal } : {}),
      });
    } catch (err) {
      if (signal?.aborted) throw err;
      throw RuntimeError.network(err, `${method} ${path.split("?")[0]}`);
    }
    if (!res.ok) throw await RuntimeError.fromResponse(res);
    return res;
  }

  protected async json<T>(method: string, path: string, body?: unknown, signal?: AbortSignal): Promise<T> {
    const res = await this.request(method, path, body, signal);
    const text = await res.text();
    try {
      return JSON.parse(text) as T;
    } catch {
      throw new RuntimeError(res.status, "malformed_response", `${method} ${path.split("?")[0]} answered a body that is not JSON`);
    }
  }
}
