// A new session of a registered agent, opened the same way by every surface that opens one: POST /v1/sessions,
// a chat's first message, a Responses conversation, an A2A context and an MCP run_agent_<name> call. Each surface chooses the version (its
// own errors for a bad reference) and where the session is created; the caller's reach, the owner, the input's
// limits and the resource the session joins (its owner's, unless named) are settled here.
import { checkInputFits } from "../engine/context-budget";
import type { Env } from "../env";
import { joinResource } from "../objects/memory/resource-memory-object";
import { agentName, type OpenedAgent } from "../objects/registry/agent-resolve";
import { ApiError } from "../protocol/errors";
import type { InputPart } from "../protocol/input-parts";
import { allows, type Principal } from "../protocol/permissions";
import { DEFAULT_POLICY, type Policy } from "../protocol/policy";
import type { CreateSessionInput } from "../session/object";
import { checkNewInput, inputChecks } from "../session/queue/turn-attachments";
import { sessionStub } from "./http";

/** Refuses a caller that may not open a session of `ref`'s agent: one without sessions.create, or a token of another agent. */
export function checkMayOpen(principal: Principal, ref: string): void {
  if (!allows(principal, "sessions.create")) throw new ApiError("forbidden", "This caller opens no sessions");
  if (principal.kind === "token" && principal.agent !== agentName(ref)) {
    throw new ApiError("forbidden", principal.agent ? `This token opens sessions of agent "${principal.agent}" only` : "This token opens no sessions");
  }
}

/**
 * The owner, and so the resource, of a session `principal` opens without naming one: a token's subject (a key's
 * sessions have none unless it names one). A new session's version is routed by it too (sticky per resource).
 */
export function ownerOf(principal: Principal): string | null {
  return principal.kind === "token" ? principal.subject : null;
}

export interface NewSession {
  metadata: Record<string, unknown>;
  /** The end user an API key opens it for (a token's sessions are always its subject's). */
  owner?: string | null;
  /** The resource whose memory it shares; absent: its owner's (none without an owner). */
  resource_id?: string | null;
  policy?: Policy;
  /** The first input, checked against the agent's limits before anything is created. */
  input?: { text: string; path: string };
  /** The first turn's input, checked as far as it can be before the session exists (checkNewInput). */
  turn?: string | InputPart[];
}

/**
 * What creates session `session_id` of the `opened` version for `principal`, once the session has joined its
 * resource (joining is idempotent, so a creation that fails after it leaves nothing a retry would not).
 */
export async function newSession(
  env: Pick<Env, "RESOURCES" | "TOOL_URL_ALLOWLIST" | "MODEL_CAPABILITIES">,
  principal: Principal,
  session_id: string,
  opened: OpenedAgent,
  s: NewSession,
): Promise<CreateSessionInput> {
  if (s.input) checkInputFits(opened.config, s.input.text, s.input.path);
  if (s.turn !== undefined) checkNewInput(s.turn, inputChecks(env, opened.config.model));
  const owner = ownerOf(principal) ?? s.owner ?? null;
  const resource_id = s.resource_id ?? owner;
  await joinResource(env, resource_id, session_id);
  return {
    session_id,
    agent: opened.config,
    agent_version: { version: opened.version, label: opened.label },
    policy: s.policy ?? DEFAULT_POLICY,
    metadata: s.metadata,
    owner,
    resource_id,
  };
}

/**
 * Erases a session this request opened for a first turn the session then refused (a file it would not take),
 * so the refusal leaves nothing behind, unless another message reached it meanwhile and submitted a turn. A
 * failure of the runtime (5xx) erases nothing: the turn may have begun.
 */
export async function dropRefused(env: Env, sid: string, err: unknown): Promise<void> {
  if (!(err instanceof ApiError) || err.status >= 500) return;
  await sessionStub(env, sid)
    .erase(true)
    .catch((cause: unknown) => console.error("open-session: a refused first turn's session was left", sid, cause));
}
