// POST /v1/sessions/:sid/fork (docs/guides/fork-and-replay.md): a new session whose conversation is the source's as of one
// sequence of its log; the source is only read.

import { randomId } from "../ids";
import { joinResource } from "../objects/memory/resource-memory-object";
import { agentConfig } from "../objects/registry/agent-cache";
import type { AgentConfig } from "../protocol/agent-config";
import { ApiError, unwrap } from "../protocol/errors";
import { sessions as ops } from "../protocol/operations";
import { validateAgentConfig } from "./agents";
import { sessionFiles } from "./files";
import { callSession, type Deployment, router, sessionStub } from "./http";
import { ownerOf } from "./open-session";
import { route } from "./operation-route";

async function forkAgent(agent: string | Record<string, unknown>, deployment: Deployment): Promise<AgentConfig> {
  if (typeof agent !== "string") return validateAgentConfig({ name: "inline", ...agent }, deployment, "agent");
  const found = await agentConfig(deployment.env, agent);
  if (!found) throw ApiError.notFound("Agent", agent);
  return found;
}

export const fork = router().openapi(route(ops.forkSession), async (c) => {
  const { sid } = c.req.valid("param");
  const body = c.req.valid("json");
  const principal = c.get("principal");
  if (principal.kind === "token" && body.agent !== undefined) throw new ApiError("forbidden", "A browser token cannot fork with another agent");
  const source = await callSession(c.env, sid, "forkSession", { body: { at_sequence: body.at_sequence }, by: c.get("keyHash") });
  // The conversation names the source's files: the fork reads them from the source's objects at once, and makes
  // its own copies off this request (file-ledger.ts), so what the source later deletes or erases stays the fork's.
  const files = await sessionFiles(c.env, sid).all();
  const agent = body.agent === undefined ? source.agent : await forkAgent(body.agent, c);
  const session_id = randomId("ses");
  // A fork holds its source's conversation: erasing the source erases it too, and so does erasing the source's
  // resource, whose memory it shares (copying none).
  unwrap(await sessionStub(c.env, sid).addDerived(session_id, "fork"));
  const resource_id = await joinResource(c.env, source.resource_id, session_id);
  const created = await sessionStub(c.env, session_id).create({
    session_id,
    agent,
    // The fork runs the source's version when it keeps its config; another agent is no stored version.
    agent_version: body.agent === undefined && source.agent_version !== null ? { version: source.agent_version, label: null } : null,
    policy: source.policy,
    metadata: body.metadata ?? (JSON.parse(source.metadata) as Record<string, unknown>),
    owner: ownerOf(principal) ?? source.owner,
    resource_id,
    fork: { from_session: sid, at_sequence: body.at_sequence, messages_json: source.messages_json, paused_json: source.paused_json, files },
  });
  const forked = unwrap(created);
  return c.json({ ...forked, from_session: sid, at_sequence: body.at_sequence }, 201);
});
