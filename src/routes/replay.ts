// Replay (docs/guides/fork-and-replay.md): POST /v1/sessions/:sid/turns/:turn_id/replay runs a recorded turn again in a new session
// (a fork just before it) with a changed config, answering model calls from the recording while the requests
// match; GET /v1/replays/:exec_id is the comparison with the original.

import { checkInputFits } from "../engine/context-budget";
import { randomId } from "../ids";
import { openReplay } from "../objects/evals/open-replay";
import { ApiError } from "../protocol/errors";
import { turns as ops } from "../protocol/operations";
import { validateAgentConfig } from "./agents";
import { requirePermission } from "./auth";
import { callSession, router } from "./http";
import { ownerOf } from "./open-session";
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
  const turn_id_replayed = await openReplay(c.env, {
    sid,
    turnId: turn_id,
    source,
    execId: exec_id,
    agent,
    // The source's version when the config is the one it ran; a changed config is no stored version.
    agentVersion: body.agent || source.agent_version === null ? null : { version: source.agent_version, label: null },
    tools: body.tools ?? "recorded",
    owner: ownerOf(principal) ?? source.owner,
    by: c.get("keyHash"),
  });
  return c.json({ exec_id, turn_id: turn_id_replayed, source_session: sid, source_turn_id: turn_id, at_sequence: source.at_sequence }, 201);
});
