// Moving a session to another version of its agent (POST /v1/sessions/{sid}/agent): explicit, recorded as
// session.version_changed, and only between turns, so a turn runs one config from its start to its end (a
// turn resumed after a restart reads the session's config again).
import { versionsOf } from "../../objects/registry/agent-versions-rpc";
import { registry } from "../../objects/registry/registry-object";
import { ApiError } from "../../protocol/errors";
import type { OpInput } from "../../protocol/session-operations";
import type { Capability } from "../capability";
import type { LogHost, SettingsHost } from "../hosts";

export type VersionSession = LogHost & SettingsHost;

export function versionCapability(s: VersionSession) {
  const idle = () => {
    const view = s.view();
    if (view.active_turn_id !== null) {
      throw new ApiError("conflict", "A turn is running: move the session when it has ended", { running_turn_id: view.active_turn_id });
    }
  };
  return {
    operations: {
      moveSessionAgent: async ({ params, body, by }: OpInput<"moveSessionAgent">) => {
        idle();
        const agent = s.agent().name;
        const found = await versionsOf(registry(s.bindings())).get(agent, body.version);
        if (!found) throw ApiError.validation([{ path: "version", reason: `agent '${agent}' has no version ${body.version}` }]);
        idle(); // a turn may have started while the registry answered
        if (s.agent().name !== agent) throw new ApiError("conflict", "The session's agent changed meanwhile (a handoff): ask again");
        const from_version = s.view().agent_version ?? null;
        // Versions are immutable: a move to the one the session runs changes nothing, so nothing is recorded.
        if (from_version === body.version) return { session_id: params.sid, agent, from_version, version: body.version };
        s.switchAgent(found.config, [{ type: "session.version_changed", payload: { agent, from_version, to_version: body.version, by } }]);
        return { session_id: params.sid, agent, from_version, version: body.version };
      },
    },
  } satisfies Capability;
}
