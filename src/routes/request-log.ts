// One log line per request: method, route pattern, status, duration and who called (a key id or a token's
// subject), never the credential or the body.
import type { MiddlewareHandler } from "hono";
import { logLine } from "../log";
import type { AppEnv } from "./http";

export const requestLog: MiddlewareHandler<AppEnv> = async (c, next) => {
  const t0 = Date.now();
  await next();
  const principal = c.get("principal");
  const written = logLine(c.env, {
    log: "request",
    method: c.req.method,
    route: c.req.routePath,
    status: c.res.status,
    duration_ms: Date.now() - t0,
    caller: principal ? (principal.kind === "key" ? principal.id : `token:${principal.subject}`) : null,
  });
  c.executionCtx.waitUntil(written);
};
