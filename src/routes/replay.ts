// Replay (docs/guides/fork-and-replay.md): POST /v1/sessions/:sid/turns/:turn_id/replay runs a recorded turn again in a new session
// (a fork just before it) with a changed config, answering model calls from the recording while the requests
// match; GET /v1/replays/:exec_id is the comparison with the original.

import { checkInputFits } from "../engine/context-budget";
import { randomId } from "../ids";
import { ApiError, unwrap } from "../protocol/errors";
import { turns as ops } from "../protocol/operations";
import { REPLAY_TURN_KEY } from "../session/replays/replay-turns";
import { validateAgentConfig } from "./agents";
import { requirePermission } from "./auth";
import { sessionFiles } from "./files";
import { callSession, router, sessionStub } from "./http";
import { route } from "./operation-route";

export const replay = router().openapi(route(ops.replayTurn), async (c) => {
  const { sid, turn_id } = c.req.valid("param");
  const body = c.req.valid("json") ?? {};
  const principal = c.get("principal");
  if (principal.kind === "token" && body.agent !== undefined) throw new ApiError("forbidden", "A browser token cannot replay with another config");
  // Live tools run the recorded turn's side effects again (each approval asked again): a permission of its own.
  if (body.tools === "live") requirePermission(principal, "session.replay_live");
  const source = await callSession(c.env, sid, "replayTurn", { params: { turn_id }, by: c.get("keyHash") });
  const agent = body.agent ? await validateAgentConfig({ ...source.agent, ...body.agent, name: source.agent.name }, c, "agent", source.agent) : source.agent;
  // Before the replay session exists: a changed agent with no room for the recorded input opens none.
  checkInputFits(agent, source.input, "agent", "makes the recorded input too long");
  const exec_id = randomId("ses");
  // The replay holds the source's conversation and turn: erasing the source erases it too.
  unwrap(await sessionStub(c.env, sid).addDerived(exec_id, "replay"));
  const stub = sessionStub(c.env, exec_id);
  unwrap(
    await stub.create({
      session_id: exec_id,
      agent,
      policy: source.policy,
      metadata: JSON.parse(source.metadata) as Record<string, unknown>,
      owner: principal.kind === "token" ? principal.subject : source.owner,
      // No resource: a replay reads memory only as the turn recorded it (its recall hits and tool results) and writes none.
      // The replayed turn's files, and those the earlier conversation names, become the replay session's own, as a fork's.
      fork: {
        from_session: sid,
        at_sequence: source.at_sequence,
        messages_json: source.messages_json,
        paused_json: null,
        files: await sessionFiles(c.env, sid).all(),
      },
      replay: {
        source_session: sid,
        source_turn_id: turn_id,
        tools: body.tools ?? "recorded",
        recording_json: source.recording_json,
        original_json: source.original_json,
      },
    }),
  );
  const files = source.files?.map((f) => ({ type: "file" as const, file_id: f.file_id, ...(f.filename ? { filename: f.filename } : {}) }));
  const replayed = { input: files ? [{ type: "text" as const, text: source.input }, ...files] : source.input, idempotency_key: REPLAY_TURN_KEY };
  const turn = await callSession(c.env, exec_id, "submitTurn", { body: replayed, by: c.get("keyHash") });
  return c.json({ exec_id, turn_id: turn.turn_id, source_session: sid, source_turn_id: turn_id, at_sequence: source.at_sequence }, 201);
});
