// The routes of the session operations that only hand the request to the session: one generic route per
// declaration with a `session` handler and no `custom` route. The session's path parameters, validated query
// and body, and caller (and the caller's trace, for a turn it submits) go to SessionObject.call, whose answer is the
// response; adding such an operation takes its declaration and its capability's handler, nothing here.

import { randomTraceId, traceFrom } from "../engine/trace";
import { OPERATIONS } from "../protocol/operations";
import { sessionParam } from "../protocol/operations/operation";
import type { OperationInput } from "../session/capability";
import { callSession, router } from "./http";
import { route } from "./operation-route";

export const sessionOperations = router();

for (const op of OPERATIONS) {
  const handler = op.session;
  if (!handler || op.custom) continue;
  const status = Number(Object.keys(op.responses).find((s) => s.startsWith("2")));
  sessionOperations.openapi(route(op), async (c) => {
    const params = c.req.param() as Record<string, string>;
    const body = op.body ? (c.req.valid as (target: "json") => unknown)("json") : undefined;
    const query = op.query ? (c.req.valid as (target: "query") => OperationInput["query"])("query") : undefined;
    // The turn joins the caller's trace (W3C traceparent), so its events line up with the caller's spans.
    const trace = traceFrom(c.req.header("traceparent"), randomTraceId);
    const value = await callSession<unknown>(c.env, sessionParam(params)!, handler, { params, body, ...(query ? { query } : {}), by: c.get("keyHash"), trace });
    // A read the session serialized already (the chat's messages) is sent as it is.
    if (typeof value === "string") return c.body(value, status as 200, { "content-type": "application/json" }) as never;
    return c.json(value as object, status as 200) as never;
  });
}
