// Session routes (SPEC §4): creation, read models, turns, interrupt, queue control, tool inventory.
import { createRoute, z } from "@hono/zod-openapi";
import { agentConfig } from "../durable/agent-cache";
import type { AgentConfig } from "../protocol/agent-config";
import { DEFAULT_POLICY, PolicySchema } from "../protocol/policy";
import { SnapshotSchema, ThreadSchema, ToolInventorySchema, TreeNodeSchema } from "../protocol/views";
import { ActionDecisionBody, InjectMessageBody, InterruptBody, SubmitTurnBody } from "../protocol/wire";
import { ApiError, unwrap } from "../runtime/errors";
import { randomId } from "../runtime/ids";
import { randomTraceId, traceFrom } from "../runtime/trace";
import { validateAgentConfig } from "./agents";
import { errorResponses, router, sessionStub } from "./http";

const CreateSessionBody = z
  .strictObject({
    // An inline config is validated by validateAgentConfig, which names each failing field under "agent.".
    agent: z
      .union([z.string().min(1), z.record(z.string(), z.unknown())])
      .openapi({ description: "A registered agent's name, or an inline AgentConfig (see the AgentConfig schema)" }),
    policy: PolicySchema.optional().openapi({
      description: "Enabled permission classes (default: all but external_mutate and secrets) and the workspace root",
    }),
    metadata: z.record(z.string(), z.unknown()).optional(),
    owner: z
      .string()
      .min(1)
      .max(200)
      .optional()
      .openapi({ description: "Who the session is for (an end user's id); a browser token's subject is used instead" }),
  })
  .openapi("CreateSession");

const Sid = z.object({ sid: z.string().openapi({ param: { name: "sid", in: "path" }, example: "ses_0123456789abcdef01234567" }) });
const SidTurn = Sid.extend({ turn_id: z.string().openapi({ param: { name: "turn_id", in: "path" } }) });
const json = (schema: z.ZodType, description: string) => ({ description, content: { "application/json": { schema } } });
const QueueResult = z.object({ queued: z.array(z.string()) });

export const sessions = router()
  .openapi(
    createRoute({
      method: "post",
      path: "/v1/sessions",
      operationId: "createSession",
      summary: "Open a session with a registered or inline agent",
      request: { body: { required: true, content: { "application/json": { schema: CreateSessionBody } } } },
      responses: {
        201: json(z.object({ session_id: z.string(), thread_id: z.string() }), "Created"),
        ...errorResponses(400, 401, 403, 404, 413, 422),
      },
    }),
    async (c) => {
      const body = c.req.valid("json");
      const principal = c.get("principal");
      if (principal.kind === "token" && body.agent !== principal.agent) {
        throw new ApiError("forbidden", `This token opens sessions of agent "${principal.agent}" only`);
      }
      const owner = principal.kind === "token" ? principal.subject : (body.owner ?? null);
      let agent: AgentConfig | null;
      if (typeof body.agent === "string") {
        agent = await agentConfig(c.env, body.agent);
        if (!agent) throw ApiError.notFound("Agent", body.agent);
      } else {
        // An inline config needs no name of its own (it is registered nowhere); "inline" stands in.
        agent = await validateAgentConfig({ name: "inline", ...body.agent }, c.env, "agent");
      }
      const session_id = randomId("ses");
      const policy = body.policy ?? DEFAULT_POLICY;
      const result = await sessionStub(c.env, session_id).create({ session_id, agent, policy, metadata: body.metadata ?? {}, owner });
      return c.json(unwrap(result), 201);
    },
  )
  .openapi(
    createRoute({
      method: "get",
      path: "/v1/sessions/{sid}",
      operationId: "getSession",
      summary: "Session snapshot: agent, status, threads, turns, last sequence, channels",
      request: { params: Sid },
      responses: { 200: json(SnapshotSchema, "Snapshot"), ...errorResponses(401, 404) },
    }),
    async (c) => c.json(unwrap(await sessionStub(c.env, c.req.valid("param").sid).snapshot()), 200),
  )
  .openapi(
    createRoute({
      method: "get",
      path: "/v1/sessions/{sid}/thread",
      operationId: "getThread",
      summary: "Thread read model: status, active turn, pending actions, queue, last outcome, budget",
      request: { params: Sid },
      responses: { 200: json(ThreadSchema, "Thread read model"), ...errorResponses(401, 404) },
    }),
    async (c) => c.json(unwrap(await sessionStub(c.env, c.req.valid("param").sid).thread()), 200),
  )
  .openapi(
    createRoute({
      method: "post",
      path: "/v1/sessions/{sid}/turns",
      operationId: "submitTurn",
      summary: "Submit a turn; it starts now or is queued behind the running one",
      request: { params: Sid, body: { required: true, content: { "application/json": { schema: SubmitTurnBody } } } },
      responses: {
        202: json(z.object({ turn_id: z.string(), status: z.enum(["accepted", "queued"]), duplicate: z.boolean().optional() }), "Accepted"),
        ...errorResponses(400, 401, 404, 409, 413, 422, 429),
      },
    }),
    async (c) => {
      // The turn joins the caller's trace (W3C traceparent), so its events line up with the caller's spans.
      const trace = traceFrom(c.req.header("traceparent"), randomTraceId);
      return c.json(unwrap(await sessionStub(c.env, c.req.valid("param").sid).submitTurn(c.req.valid("json"), trace)), 202);
    },
  )
  .openapi(
    createRoute({
      method: "post",
      path: "/v1/sessions/{sid}/interrupt",
      operationId: "interrupt",
      summary: "Cancel the running turn (no-op when idle)",
      request: { params: Sid, body: { required: false, content: { "application/json": { schema: InterruptBody } } } },
      responses: {
        200: json(z.object({ interrupted: z.boolean(), turn_id: z.string().nullable() }), "Done"),
        ...errorResponses(400, 401, 404, 422),
      },
    }),
    async (c) => c.json(unwrap(await sessionStub(c.env, c.req.valid("param").sid).interrupt(c.req.valid("json").reason)), 200),
  )
  .openapi(
    createRoute({
      method: "post",
      path: "/v1/sessions/{sid}/messages",
      operationId: "injectMessage",
      summary: "Inject a user message into the running turn (taken before its next model call); with no running turn it becomes a new turn",
      request: { params: Sid, body: { required: true, content: { "application/json": { schema: InjectMessageBody } } } },
      responses: {
        202: json(
          z.union([
            z.object({ delivery: z.literal("injected"), turn_id: z.string(), message_id: z.string() }),
            z.object({ delivery: z.literal("new_turn"), turn_id: z.string(), status: z.enum(["accepted", "queued"]) }),
          ]),
          "Accepted",
        ),
        ...errorResponses(400, 401, 404, 413, 422, 429),
      },
    }),
    async (c) => c.json(unwrap(await sessionStub(c.env, c.req.valid("param").sid).injectMessage(c.req.valid("json").content)), 202),
  )
  .openapi(
    createRoute({
      method: "post",
      path: "/v1/sessions/{sid}/actions/{action_id}",
      operationId: "resolveAction",
      summary: "Approve or reject a pending tool call",
      request: {
        params: Sid.extend({ action_id: z.string().openapi({ param: { name: "action_id", in: "path" } }) }),
        body: { required: true, content: { "application/json": { schema: ActionDecisionBody } } },
      },
      responses: {
        200: json(
          z.object({ action_id: z.string(), turn_id: z.string(), tool_call_id: z.string(), decision: z.enum(["approved", "rejected", "timed_out"]) }),
          "Resolved",
        ),
        ...errorResponses(400, 401, 404, 409, 422),
      },
    }),
    async (c) => {
      const { sid, action_id } = c.req.valid("param");
      const { decision, reason } = c.req.valid("json");
      return c.json(unwrap(await sessionStub(c.env, sid).resolveAction(action_id, decision, reason, c.get("keyHash"))), 200);
    },
  )
  .openapi(
    createRoute({
      method: "delete",
      path: "/v1/sessions/{sid}/queue/{turn_id}",
      operationId: "removeQueuedTurn",
      summary: "Remove a queued turn (it ends turn.cancelled)",
      request: { params: SidTurn },
      responses: { 200: json(QueueResult, "The queue after removal"), ...errorResponses(401, 404, 409) },
    }),
    async (c) => {
      const { sid, turn_id } = c.req.valid("param");
      return c.json(unwrap(await sessionStub(c.env, sid).removeQueued(turn_id)), 200);
    },
  )
  .openapi(
    createRoute({
      method: "post",
      path: "/v1/sessions/{sid}/queue/{turn_id}/promote",
      operationId: "promoteQueuedTurn",
      summary: "Move a queued turn to the front of the queue",
      request: { params: SidTurn },
      responses: { 200: json(QueueResult, "The queue after promotion"), ...errorResponses(401, 404, 409) },
    }),
    async (c) => {
      const { sid, turn_id } = c.req.valid("param");
      return c.json(unwrap(await sessionStub(c.env, sid).promoteQueued(turn_id)), 200);
    },
  )
  .openapi(
    createRoute({
      method: "get",
      path: "/v1/sessions/{sid}/turns/{turn_id}/tree",
      operationId: "getExecutionTree",
      summary: "The turn's execution tree: its tool calls, sub-agent calls containing the calls made inside them",
      request: { params: SidTurn },
      responses: {
        200: json(z.object({ version: z.literal(1), nodes: z.array(TreeNodeSchema) }), "Execution tree"),
        ...errorResponses(401, 404),
      },
    }),
    async (c) => {
      const { sid, turn_id } = c.req.valid("param");
      return c.json(unwrap(await sessionStub(c.env, sid).tree(turn_id)), 200);
    },
  )
  .openapi(
    createRoute({
      method: "get",
      path: "/v1/sessions/{sid}/tools",
      operationId: "getTools",
      summary: "Tool inventory of the session's agent",
      request: { params: Sid },
      responses: { 200: json(ToolInventorySchema, "Tools"), ...errorResponses(401, 404) },
    }),
    async (c) => c.json(unwrap(await sessionStub(c.env, c.req.valid("param").sid).tools()), 200),
  );
