// A request built from an operation's declaration (src/protocol/operations/): its path with the `{name}` segments
// filled from the params, its query, and the types of what it takes and answers. The transport
// (http-transport.ts) sends it; no path of the API is written a second time in the client.
import type { z } from "zod";
import type { Operation } from "../protocol/operations";

/** A request body sent as it is (a file upload), rather than as JSON. */
export class RawBody {
  constructor(
    readonly bytes: Uint8Array | Blob,
    readonly contentType: string,
  ) {}
}

/** A query value as it goes on the wire (the runtime parses it from text); undefined ones are left out. */
export type QueryValue = string | number | boolean | undefined;

type ParamsIn<O extends Operation> = O["params"] extends z.ZodObject ? { params: z.input<O["params"]> } : { params?: undefined };
type QueryIn<O extends Operation> = O["query"] extends z.ZodObject ? { query?: { [K in keyof z.input<O["query"]>]?: QueryValue } } : { query?: undefined };
/** A declared JSON body as its caller writes it; an operation that declares none may take raw bytes (an upload). */
type BodyIn<O extends Operation> = O["body"] extends { schema: infer S extends z.ZodType; required: infer R }
  ? R extends true
    ? { body: z.input<S> }
    : { body?: z.input<S> }
  : { body?: RawBody };

/** The parts of a request to `O`: its path parameters (required when it has any), its query and its body. */
export type RequestOf<O extends Operation> = ParamsIn<O> & QueryIn<O> & BodyIn<O>;

export interface RequestOptions {
  signal?: AbortSignal;
  /** More headers (a Range, an Accept). */
  headers?: Record<string, string>;
}

/** The arguments after the operation: its request (may be left out when nothing in it is required), then options. */
export type RequestArgs<O extends Operation> =
  object extends RequestOf<O> ? [input?: RequestOf<O>, options?: RequestOptions] : [input: RequestOf<O>, options?: RequestOptions];

const enc = encodeURIComponent;

/** The operation's path with its `{name}` segments filled from `params` (each URI-encoded), then the query (undefined values left out). */
export function operationPath(op: Operation, params: Record<string, string> = {}, query: Record<string, QueryValue> = {}): string {
  const path = op.path.replace(/\{(\w+)\}/g, (_, name: string) => {
    const value = params[name];
    if (value === undefined) throw new TypeError(`${op.operationId}: the path parameter ${name} is missing`);
    return enc(value);
  });
  const pairs = Object.entries(query).flatMap(([k, v]) => (v === undefined ? [] : [`${enc(k)}=${enc(String(v))}`]));
  return pairs.length > 0 ? `${path}?${pairs.join("&")}` : path;
}

/** The path of a request to `op`, its parts typed like a request's (for a URL the client hands on rather than fetches: the WebSocket's). */
export function pathOf<O extends Operation>(op: O, input: Omit<RequestOf<O>, "body">): string {
  const { params, query } = input as { params?: Record<string, string>; query?: Record<string, QueryValue> };
  return operationPath(op, params, query);
}
