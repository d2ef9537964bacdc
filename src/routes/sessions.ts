// Opening a session (docs/reference/api.md). The session's own operations are routed generically (session-operations.ts).

import { randomId } from "../ids";
import { joinResource } from "../objects/memory/resource-memory-object";
import { agentName, type OpenedAgent, openAgent } from "../objects/registry/agent-resolve";
import type { AgentConfig } from "../protocol/agent-config";
import { ApiError, unwrap } from "../protocol/errors";
import { sessions as sessionOps } from "../protocol/operations";
import { DEFAULT_POLICY } from "../protocol/policy";
import { validateAgentConfig } from "./agents";
import { router, sessionStub } from "./http";
import { route } from "./operation-route";

export const sessions = router().openapi(route(sessionOps.createSession), async (c) => {
  const body = c.req.valid("json");
  const principal = c.get("principal");
  if (principal.kind === "token" && (typeof body.agent !== "string" || agentName(body.agent) !== principal.agent)) {
    throw new ApiError("forbidden", `This token opens sessions of agent "${principal.agent}" only`);
  }
  const owner = principal.kind === "token" ? principal.subject : (body.owner ?? null);
  // A token's sessions belong to its subject's resource: it reaches no other resource's memory.
  if (principal.kind === "token" && body.resource_id !== undefined && body.resource_id !== principal.subject) {
    throw new ApiError("forbidden", "A token's sessions belong to its subject's resource; resource_id must be the subject or absent");
  }
  const resource_id = body.resource_id ?? owner;
  let agent: AgentConfig;
  let opened: OpenedAgent | null = null;
  if (typeof body.agent === "string") {
    opened = await openAgent(c.env, body.agent, resource_id);
    agent = opened.config;
  } else {
    // An inline config needs no name of its own (it is registered nowhere); "inline" stands in.
    agent = await validateAgentConfig({ name: "inline", ...body.agent }, c, "agent");
  }
  const session_id = randomId("ses");
  const policy = body.policy ?? DEFAULT_POLICY;
  await joinResource(c.env, resource_id, session_id);
  const agent_version = opened && { version: opened.version, label: opened.label };
  const result = await sessionStub(c.env, session_id).create({ session_id, agent, agent_version, policy, metadata: body.metadata ?? {}, owner, resource_id });
  return c.json({ ...unwrap(result), agent_version: opened?.version ?? null, ...(opened?.label ? { label: opened.label } : {}) }, 201);
});
