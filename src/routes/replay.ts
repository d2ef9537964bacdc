// Replay (issue 21): POST /v1/sessions/:sid/turns/:turn_id/replay runs a recorded turn again in a new session
// (a fork just before it) with a changed config, answering model calls from the recording while the requests
// match; GET /v1/replays/:exec_id is the comparison with the original.
import { createRoute, z } from "@hono/zod-openapi";
import type { ForkSource } from "../durable/fork-history";
import type { ReplaySource } from "../durable/replay-source";
import { REPLAY_TURN_KEY, type ReplayResult } from "../durable/replay-turns";
import { ReplayComparison } from "../protocol/event-payloads";
import { checkInputFits } from "../runtime/context-budget";
import { ApiError, type Result, unwrap } from "../runtime/errors";
import { randomId } from "../runtime/ids";
import { validateAgentConfig } from "./agents";
import { errorResponses, router, sessionStub } from "./http";

/** What the source session gives: the replay's start, and the config, policy and owner to fork with. */
type ReplayStart = ReplaySource & Omit<ForkSource, "messages_json" | "paused_json">;

const ReplayBody = z
  .strictObject({
    agent: z
      .record(z.string(), z.unknown())
      .optional()
      .openapi({ description: "AgentConfig fields that replace the recorded agent's (top-level fields, whole); name stays" }),
    tools: z
      .enum(["recorded", "live"])
      .optional()
      .openapi({ description: "recorded (default): a call with the recorded name and arguments gets the recorded result; live: it runs again" }),
  })
  .openapi("ReplayTurn");

const Params = z.object({
  sid: z.string().openapi({ param: { name: "sid", in: "path" } }),
  turn_id: z.string().openapi({ param: { name: "turn_id", in: "path" } }),
});
const ExecId = z.object({ exec_id: z.string().openapi({ param: { name: "exec_id", in: "path" } }) });

const Replay = z
  .object({
    exec_id: z.string(),
    source_session: z.string(),
    source_turn_id: z.string(),
    status: z.enum(["running", "completed"]),
    comparison: ReplayComparison.nullable().openapi({ description: "null while the replay runs" }),
  })
  .openapi("Replay");

export const replay = router()
  .openapi(
    createRoute({
      method: "post",
      path: "/v1/sessions/{sid}/turns/{turn_id}/replay",
      operationId: "replayTurn",
      summary: "Run a recorded turn again in a new session, with a changed config",
      request: { params: Params, body: { required: false, content: { "application/json": { schema: ReplayBody } } } },
      responses: {
        201: {
          description: "The replay session exists and its turn runs",
          content: {
            "application/json": {
              schema: z.object({ exec_id: z.string(), turn_id: z.string(), source_session: z.string(), source_turn_id: z.string(), at_sequence: z.int() }),
            },
          },
        },
        ...errorResponses(400, 401, 403, 404, 409, 422),
      },
    }),
    async (c) => {
      const { sid, turn_id } = c.req.valid("param");
      const body = c.req.valid("json") ?? {};
      const principal = c.get("principal");
      if (principal.kind === "token" && body.agent !== undefined) throw new ApiError("forbidden", "A browser token cannot replay with another config");
      // The RPC stub's typing loses this result's shape (an AgentConfig is too deep for it).
      const source = unwrap((await sessionStub(c.env, sid).replaySource(turn_id)) as unknown as Result<ReplayStart>);
      const agent = body.agent ? await validateAgentConfig({ ...source.agent, ...body.agent, name: source.agent.name }, c.env, "agent") : source.agent;
      // Before the replay session exists: a changed agent with no room for the recorded input opens none.
      checkInputFits(agent, source.input, "agent", "makes the recorded input too long");
      const exec_id = randomId("ses");
      const stub = sessionStub(c.env, exec_id);
      unwrap(
        await stub.create({
          session_id: exec_id,
          agent,
          policy: source.policy,
          metadata: JSON.parse(source.metadata) as Record<string, unknown>,
          owner: principal.kind === "token" ? principal.subject : source.owner,
          fork: { from_session: sid, at_sequence: source.at_sequence, messages_json: source.messages_json, paused_json: null },
          replay: {
            source_session: sid,
            source_turn_id: turn_id,
            tools: body.tools ?? "recorded",
            recording_json: source.recording_json,
            original_json: source.original_json,
          },
        }),
      );
      const turn = unwrap(await stub.submitTurn({ input: source.input, idempotency_key: REPLAY_TURN_KEY }));
      return c.json({ exec_id, turn_id: turn.turn_id, source_session: sid, source_turn_id: turn_id, at_sequence: source.at_sequence }, 201);
    },
  )
  .openapi(
    createRoute({
      method: "get",
      path: "/v1/replays/{exec_id}",
      operationId: "getReplay",
      summary: "A replay's comparison with the original turn (null while it runs)",
      request: { params: ExecId },
      responses: { 200: { description: "The replay", content: { "application/json": { schema: Replay } } }, ...errorResponses(401, 403, 404) },
    }),
    async (c) => {
      const { exec_id } = c.req.valid("param");
      const result = unwrap((await sessionStub(c.env, exec_id).replayResult()) as unknown as Result<ReplayResult>);
      return c.json({ exec_id, ...result }, 200);
    },
  );
