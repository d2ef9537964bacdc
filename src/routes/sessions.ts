// Session routes (SPEC §4): creation, read models, turns, interrupt, queue control, tool inventory.
import { registry } from "../durable/registry-object";
import type { AgentConfig } from "../protocol/agent-config";
import { ApiError, unwrap } from "../protocol/errors";
import { sessions as sessionOps, turns as turnOps } from "../protocol/operations";
import { DEFAULT_POLICY } from "../protocol/policy";
import { randomId } from "../runtime/ids";
import { randomTraceId, traceFrom } from "../runtime/trace";
import { validateAgentConfig } from "./agents";
import { router, sessionStub } from "./http";
import { route } from "./operation-route";

export const sessions = router()
  .openapi(route(sessionOps.createSession), async (c) => {
    const body = c.req.valid("json");
    const principal = c.get("principal");
    if (principal.kind === "token" && body.agent !== principal.agent) {
      throw new ApiError("forbidden", `This token opens sessions of agent "${principal.agent}" only`);
    }
    const owner = principal.kind === "token" ? principal.subject : (body.owner ?? null);
    let agent: AgentConfig | null;
    if (typeof body.agent === "string") {
      agent = await registry(c.env).get(body.agent);
      if (!agent) throw ApiError.notFound("Agent", body.agent);
    } else {
      // An inline config needs no name of its own (it is registered nowhere); "inline" stands in.
      agent = await validateAgentConfig({ name: "inline", ...body.agent }, c.env, "agent");
    }
    const session_id = randomId("ses");
    const policy = body.policy ?? DEFAULT_POLICY;
    const result = await sessionStub(c.env, session_id).create({ session_id, agent, policy, metadata: body.metadata ?? {}, owner });
    return c.json(unwrap(result), 201);
  })
  .openapi(route(sessionOps.getSession), async (c) => c.json(unwrap(await sessionStub(c.env, c.req.valid("param").sid).snapshot()), 200))
  .openapi(route(sessionOps.getThread), async (c) => c.json(unwrap(await sessionStub(c.env, c.req.valid("param").sid).thread()), 200))
  .openapi(route(turnOps.submitTurn), async (c) => {
    // The turn joins the caller's trace (W3C traceparent), so its events line up with the caller's spans.
    const trace = traceFrom(c.req.header("traceparent"), randomTraceId);
    return c.json(unwrap(await sessionStub(c.env, c.req.valid("param").sid).submitTurn(c.req.valid("json"), trace)), 202);
  })
  .openapi(route(turnOps.interrupt), async (c) => c.json(unwrap(await sessionStub(c.env, c.req.valid("param").sid).interrupt(c.req.valid("json").reason)), 200))
  .openapi(route(turnOps.injectMessage), async (c) =>
    c.json(unwrap(await sessionStub(c.env, c.req.valid("param").sid).injectMessage(c.req.valid("json").content)), 202),
  )
  .openapi(route(turnOps.resolveAction), async (c) => {
    const { sid, action_id } = c.req.valid("param");
    const { decision, reason } = c.req.valid("json");
    return c.json(unwrap(await sessionStub(c.env, sid).resolveAction(action_id, decision, reason, c.get("keyHash"))), 200);
  })
  .openapi(route(turnOps.removeQueuedTurn), async (c) => {
    const { sid, turn_id } = c.req.valid("param");
    return c.json(unwrap(await sessionStub(c.env, sid).removeQueued(turn_id)), 200);
  })
  .openapi(route(turnOps.promoteQueuedTurn), async (c) => {
    const { sid, turn_id } = c.req.valid("param");
    return c.json(unwrap(await sessionStub(c.env, sid).promoteQueued(turn_id)), 200);
  })
  .openapi(route(turnOps.getExecutionTree), async (c) => {
    const { sid, turn_id } = c.req.valid("param");
    return c.json(unwrap(await sessionStub(c.env, sid).tree(turn_id)), 200);
  })
  .openapi(route(sessionOps.getTools), async (c) => c.json(unwrap(await sessionStub(c.env, c.req.valid("param").sid).tools()), 200));
