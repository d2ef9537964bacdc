// Request bodies of /v1: JSON only, and not nested deeper than MAX_JSON_DEPTH. A structure thousands of levels
// deep overflows the stack where it is copied (the Durable Object RPC boundary, structured clone) or queried
// (SQLite's JSON functions), which would otherwise fail as a 500 halfway through a request or later, on every
// read of what it stored. The check applies to every body read as JSON, whatever the Content-Type's case or
// suffix, and a body under any other media type is refused here rather than left for a route to skip.
import type { MiddlewareHandler } from "hono";
import { ApiError } from "../protocol/errors";
import type { AppEnv } from "./http";

export const MAX_JSON_DEPTH = 64;

/**
 * The media types a body is read as JSON under: `application/json` and `application/<type>+json` (letters, `.`
 * and `-`), in any case, with parameters such as `; charset=utf-8`. The routes' validators accept the same set.
 */
const JSON_MEDIA_TYPE = /^application\/(?:[a-z.-]+\+)?json$/i;

export const isJsonMediaType = (contentType: string) => JSON_MEDIA_TYPE.test(contentType.split(";")[0]!.trim());

export const unsupportedMediaType = () =>
  new ApiError("unsupported_media_type", "Content-Type must be application/json (or application/<type>+json) for a request with a body");

/** The top-level field under which `value` nests deeper than `max` levels ("" for the body itself), or null. */
export function tooDeep(value: unknown, max = MAX_JSON_DEPTH): string | null {
  const stack: { v: unknown; depth: number; top: string }[] = [{ v: value, depth: 1, top: "" }];
  while (stack.length > 0) {
    const { v, depth, top } = stack.pop()!;
    if (v === null || typeof v !== "object") continue;
    if (depth > max) return top;
    for (const [k, child] of Object.entries(v)) stack.push({ v: child, depth: depth + 1, top: top || (Array.isArray(value) ? `[${k}]` : k) });
  }
  return null;
}

export const checkJsonBody: MiddlewareHandler<AppEnv> = async (c, next) => {
  if (c.req.raw.body === null) return next();
  const text = await c.req.text();
  if (text === "") return next(); // no body: the route says whether it needs one
  if (!isJsonMediaType(c.req.header("content-type") ?? "")) throw unsupportedMediaType();
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return next(); // malformed JSON: the route's validator answers 400
  }
  const field = tooDeep(body);
  if (field !== null) throw ApiError.validation([{ path: field, reason: `nests deeper than ${MAX_JSON_DEPTH} levels` }]);
  await next();
};
