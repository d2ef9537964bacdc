// Opening a session (docs/reference/api.md). The session's own operations are routed generically (session-operations.ts).

import { randomId } from "../ids";
import { joinResource } from "../objects/memory/resource-memory-object";
import { agentName, type OpenedAgent, openAgent } from "../objects/registry/agent-resolve";
import { ApiError, unwrap } from "../protocol/errors";
import { sessions as sessionOps } from "../protocol/operations";
import { DEFAULT_POLICY } from "../protocol/policy";
import type { CreateSessionInput } from "../session/object";
import { validateAgentConfig } from "./agents";
import { router, sessionStub } from "./http";
import { newSession, ownerOf } from "./open-session";
import { route } from "./operation-route";

export const sessions = router().openapi(route(sessionOps.createSession), async (c) => {
  const body = c.req.valid("json");
  const principal = c.get("principal");
  if (principal.kind === "token" && (typeof body.agent !== "string" || agentName(body.agent) !== principal.agent)) {
    throw new ApiError("forbidden", `This token opens sessions of agent "${principal.agent}" only`);
  }
  const owner = ownerOf(principal) ?? body.owner ?? null;
  // A token's sessions belong to its subject's resource: it reaches no other resource's memory.
  if (principal.kind === "token" && body.resource_id !== undefined && body.resource_id !== principal.subject) {
    throw new ApiError("forbidden", "A token's sessions belong to its subject's resource; resource_id must be the subject or absent");
  }
  const resource_id = body.resource_id ?? owner;
  const session_id = randomId("ses");
  const fields = { metadata: body.metadata ?? {}, owner, resource_id, ...(body.policy ? { policy: body.policy } : {}) };
  let opened: OpenedAgent | null = null;
  let input: CreateSessionInput;
  if (typeof body.agent === "string") {
    opened = await openAgent(c.env, body.agent, resource_id);
    input = await newSession(c.env, principal, session_id, opened, fields);
  } else {
    // An inline config needs no name of its own (it is registered nowhere); "inline" stands in.
    const agent = await validateAgentConfig({ name: "inline", ...body.agent }, c, "agent");
    input = { session_id, agent, agent_version: null, policy: body.policy ?? DEFAULT_POLICY, ...fields };
    await joinResource(c.env, resource_id, session_id);
  }
  const result = await sessionStub(c.env, session_id).create(input);
  return c.json({ ...unwrap(result), agent_version: opened?.version ?? null, ...(opened?.label ? { label: opened.label } : {}) }, 201);
});
