// POST /v1/sessions/:sid/fork (issue 21): a new session whose conversation is the source's as of one
// sequence of its log; the source is only read.
import { createRoute, z } from "@hono/zod-openapi";
import { agentConfig } from "../durable/agent-cache";
import type { ForkSource } from "../durable/fork-history";
import type { AgentConfig } from "../protocol/agent-config";
import { ApiError, type Result, unwrap } from "../runtime/errors";
import { randomId } from "../runtime/ids";
import { validateAgentConfig } from "./agents";
import { errorResponses, router, sessionStub } from "./http";

const ForkBody = z
  .strictObject({
    at_sequence: z.int().openapi({ description: "The fork holds the conversation as of this event of the source's log" }),
    agent: z
      .union([z.string().min(1), z.record(z.string(), z.unknown())])
      .optional()
      .openapi({ description: "Another agent for the fork: a registered name or an inline AgentConfig (default: the source's)" }),
    metadata: z.record(z.string(), z.unknown()).optional().openapi({ description: "Default: the source's" }),
  })
  .openapi("ForkSession");

const Sid = z.object({ sid: z.string().openapi({ param: { name: "sid", in: "path" } }) });

async function forkAgent(agent: string | Record<string, unknown>, env: Parameters<typeof validateAgentConfig>[1]): Promise<AgentConfig> {
  if (typeof agent !== "string") return validateAgentConfig({ name: "inline", ...agent }, env, "agent");
  const found = await agentConfig(env, agent);
  if (!found) throw ApiError.notFound("Agent", agent);
  return found;
}

export const fork = router().openapi(
  createRoute({
    method: "post",
    path: "/v1/sessions/{sid}/fork",
    operationId: "forkSession",
    summary: "Open a new session with this session's conversation as of one event",
    request: { params: Sid, body: { required: true, content: { "application/json": { schema: ForkBody } } } },
    responses: {
      201: {
        description: "Forked",
        content: {
          "application/json": { schema: z.object({ session_id: z.string(), thread_id: z.string(), from_session: z.string(), at_sequence: z.int() }) },
        },
      },
      ...errorResponses(400, 401, 403, 404, 409, 422),
    },
  }),
  async (c) => {
    const { sid } = c.req.valid("param");
    const body = c.req.valid("json");
    const principal = c.get("principal");
    if (principal.kind === "token" && body.agent !== undefined) throw new ApiError("forbidden", "A browser token cannot fork with another agent");
    // The RPC stub's typing loses this result's shape (an AgentConfig is too deep for it).
    const source = unwrap((await sessionStub(c.env, sid).forkSource(body.at_sequence)) as unknown as Result<ForkSource>);
    const agent = body.agent === undefined ? source.agent : await forkAgent(body.agent, c.env);
    const session_id = randomId("ses");
    const created = await sessionStub(c.env, session_id).create({
      session_id,
      agent,
      policy: source.policy,
      metadata: body.metadata ?? (JSON.parse(source.metadata) as Record<string, unknown>),
      owner: principal.kind === "token" ? principal.subject : source.owner,
      fork: { from_session: sid, at_sequence: body.at_sequence, messages_json: source.messages_json, paused_json: source.paused_json },
    });
    return c.json({ ...unwrap(created), from_session: sid, at_sequence: body.at_sequence }, 201);
  },
);
