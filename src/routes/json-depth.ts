// JSON bodies nested deeper than MAX_JSON_DEPTH are refused with 422 before any object is touched: a
// structure thousands of levels deep overflows the stack where it is copied (the Durable Object RPC
// boundary, structured clone), which would otherwise fail as a 500 halfway through a request.
import type { MiddlewareHandler } from "hono";
import { ApiError } from "../protocol/errors";
import type { AppEnv } from "./http";

export const MAX_JSON_DEPTH = 64;

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

export const limitJsonDepth: MiddlewareHandler<AppEnv> = async (c, next) => {
  if ((c.req.method === "POST" || c.req.method === "PUT") && (c.req.header("content-type") ?? "").includes("application/json")) {
    let body: unknown;
    try {
      body = await c.req.json();
    } catch {
      return next(); // malformed JSON: the route's validator answers 400
    }
    const field = tooDeep(body);
    if (field !== null) throw ApiError.validation([{ path: field, reason: `nests deeper than ${MAX_JSON_DEPTH} levels` }]);
  }
  await next();
};
