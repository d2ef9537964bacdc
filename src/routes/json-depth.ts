// Request bodies of /v1: JSON only, and not nested deeper than MAX_JSON_DEPTH (src/protocol/json-nesting.ts, which
// WebSocket frames are held to as well). A structure thousands of levels deep overflows the stack where it is
// copied (the Durable Object RPC boundary, structured clone) or queried (SQLite's JSON functions), which would
// otherwise fail as a 500 halfway through a request or later, on every read of what it stored. The check applies to every body read as JSON, whatever the Content-Type's case or
// suffix, and a body under any other media type is refused here rather than left for a route to skip.
import type { MiddlewareHandler } from "hono";
import { ApiError } from "../protocol/errors";
import { deepField, MAX_JSON_DEPTH } from "../protocol/json-nesting";
import type { AppEnv } from "./http";

export { MAX_JSON_DEPTH };

/**
 * The media types a body is read as JSON under: `application/json` and `application/<type>+json` (letters, `.`
 * and `-`), in any case, with parameters such as `; charset=utf-8`. The routes' validators accept the same set.
 */
const JSON_MEDIA_TYPE = /^application\/(?:[a-z.-]+\+)?json$/i;

export const isJsonMediaType = (contentType: string) => JSON_MEDIA_TYPE.test(contentType.split(";")[0]!.trim());

export const unsupportedMediaType = () =>
  new ApiError("unsupported_media_type", "Content-Type must be application/json (or application/<type>+json) for a request with a body");

export const checkJsonBody: MiddlewareHandler<AppEnv> = async (c, next) => {
  if (c.req.raw.body === null) return next();
  const text = await c.req.text();
  if (text === "") return next(); // no body: the route says whether it needs one
  if (!isJsonMediaType(c.req.header("content-type") ?? "")) throw unsupportedMediaType();
  try {
    JSON.parse(text);
  } catch {
    return next(); // malformed JSON: the route's validator answers 400
  }
  // Read from the text (src/protocol/json-nesting.ts), as WebSocket frames are.
  const field = deepField(text);
  if (field !== null) throw ApiError.validation([{ path: field, reason: `nests deeper than ${MAX_JSON_DEPTH} levels` }]);
  await next();
};
