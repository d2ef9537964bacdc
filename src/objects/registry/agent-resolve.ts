// Which config a new session of a registered agent runs (docs/guides/versions.md): `name@3` that
// version, `name@canary` the version its label points at, and a plain name its traffic split (a label by
// weight, the same one for the same resource while the weights stay), else its newest version.
import type { Env } from "../../env";
import type { AgentConfig } from "../../protocol/agent-config";
import { parseAgentRef, pickRoute } from "../../protocol/agent-versions";
import { ApiError } from "../../protocol/errors";
import { own } from "../../protocol/own-key";
import { agentVersion, currentAgent } from "./agent-cache";

export interface OpenedAgent {
  config: AgentConfig;
  version: number;
  /** The label that chose the version (null: pinned by number, or the newest). */
  label: string | null;
}

/**
 * The version `ref` opens, for a session of `resource` (sticky routing). 404 when the agent does not exist,
 * 422 naming `field` when its version or label does not.
 */
export async function openAgent(
  env: Pick<Env, "REGISTRY" | "AGENT_CACHE_SECONDS">,
  ref: string,
  resource: string | null,
  field = "agent",
): Promise<OpenedAgent> {
  const { name, version, label } = parseAgentRef(ref);
  const current = await currentAgent(env, name);
  if (!current) throw ApiError.notFound("Agent", name);
  const { routing } = current;
  const pinned = async (v: number, by: string | null): Promise<OpenedAgent> => {
    if (v === routing.version) return { config: current.config, version: v, label: by };
    const config = await agentVersion(env, name, v);
    if (!config) throw ApiError.validation([{ path: field, reason: `agent '${name}' has no version ${v}` }]);
    return { config, version: v, label: by };
  };
  if (version !== undefined) return pinned(version, null);
  // Digits are never a label (labels begin with a letter): a number that is no version number, such as 0.
  if (label !== undefined && /^[0-9]+$/.test(label)) {
    throw ApiError.validation([{ path: field, reason: `agent '${name}' has no version ${label}: version numbers start at 1, without leading zeros` }]);
  }
  const labelled = (l: string): number | undefined => own(routing.labels, l);
  if (label !== undefined) {
    const v = labelled(label);
    if (v === undefined) throw ApiError.validation([{ path: field, reason: `agent '${name}' has no label '${label}'` }]);
    return pinned(v, label);
  }
  const routed = pickRoute(routing.routes, resource === null ? null : `${name}:${resource}`);
  const v = routed === null ? undefined : labelled(routed);
  return v === undefined ? { config: current.config, version: routing.version, label: null } : pinned(v, routed);
}

/** The agent's name in a reference (`name@3` is agent `name`). */
export const agentName = (ref: string): string => parseAgentRef(ref).name;
