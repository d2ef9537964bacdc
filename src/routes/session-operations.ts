// The routes of the session operations that only hand the request to the session: one generic route per
// declaration with a `session` handler and no `custom` route. The session's path parameters, validated query
// and body, and caller (and the caller's trace, for a turn it submits) go to SessionObject.call, whose answer is the
// response; adding such an operation takes its declaration and its capability's handler, nothing here.

import { randomTraceId, traceFrom } from "../engine/trace";
import { unwrap } from "../protocol/errors";
import { OPERATIONS } from "../protocol/operations";
import { type Operation, sessionParam } from "../protocol/operations/operation";
import type { OpInput, OpName } from "../protocol/session-operations";
import { router, sessionCalls } from "./http";
import { route } from "./operation-route";

export const sessionOperations = router();

/** A declared operation the session serves (its handler's name is its operationId). */
const servedBySession = (op: Operation): op is Operation & { operationId: OpName } => op.session === true && !op.custom;

for (const op of OPERATIONS.filter(servedBySession)) {
  const status = Number(Object.keys(op.responses).find((s) => s.startsWith("2")));
  sessionOperations.openapi(route(op), async (c) => {
    const params = c.req.param() as Record<string, string>;
    const body = op.body ? (c.req.valid as (target: "json") => unknown)("json") : undefined;
    const query = op.query ? (c.req.valid as (target: "query") => unknown)("query") : undefined;
    // The turn joins the caller's trace (W3C traceparent), so its events line up with the caller's spans.
    const trace = traceFrom(c.req.header("traceparent"), randomTraceId);
    // What the route validated against the declaration is what the operation's handler takes.
    const input = { params, body, ...(query ? { query } : {}), by: c.get("keyHash"), trace } as OpInput<OpName>;
    const value = unwrap(await sessionCalls(c.env, sessionParam(params)!).call(op.operationId, input));
    // A read the session serialized already (the chat's messages) is sent as it is.
    return new Response(typeof value === "string" ? value : JSON.stringify(value), { status, headers: { "content-type": "application/json" } });
  });
}
