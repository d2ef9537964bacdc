// Who may call what: the permissions operations declare (src/protocol/operations/), what each key role and
// token scope allows.
// API keys carry a role; browser tokens carry a binding (one session, or one agent) and scopes.
import { ApiError } from "./errors";

/** What a route does, as far as access is concerned. */
export type Permission =
  | "agents.read"
  | "agents.write"
  | "sessions.create"
  | "sessions.list"
  | "session.read"
  | "session.submit"
  | "session.interrupt"
  | "session.approve"
  | "session.queue"
  | "session.delete"
  | "session.replay_live"
  | "session.subscribe"
  | "session.schedule"
  | "tokens.create"
  | "usage.read"
  | "quotas.write"
  | "memory.read"
  | "memory.write"
  | "resource.delete"
  | "mcp";

export type Role = "admin" | "operator" | "read";
export const ROLES: readonly Role[] = ["admin", "operator", "read"];

const READ: readonly Permission[] = ["agents.read", "sessions.list", "session.read", "usage.read", "memory.read"];

/** What each key role allows: admin everything, operator everything but registry and quota writes, read only reads. */
export function roleAllows(role: Role, permission: Permission): boolean {
  if (role === "admin") return true;
  if (role === "operator") return permission !== "agents.write" && permission !== "quotas.write";
  return READ.includes(permission);
}

/** Who made a request: a key with its role, or a browser token with its binding and scopes. */
export type Principal =
  | { kind: "key"; id: string; role: Role }
  | {
      kind: "token";
      id: string;
      /** Canonical (principal-id.ts, subjectFlaw) and compared exactly: the owner of what the token creates and reaches. */
      subject: string;
      session_id: string | null;
      agent: string | null;
      scopes: TokenScope[];
      /** When the token expires (ms since the epoch; every issued token has one): streams it opened end then. */
      expires_at: number | null;
    };

/**
 * Scopes a browser token may carry; `scopes` narrows a token to some of them (default: all its binding allows
 * but the opt-in ones).
 */
export const TOKEN_SCOPES = ["read", "submit", "interrupt", "approve", "create", "replay_live"] as const;
export type TokenScope = (typeof TOKEN_SCOPES)[number];

/** Scopes a token has only when minted with them: a live replay runs a recorded turn's side effects again. */
const OPT_IN_SCOPES: readonly TokenScope[] = ["replay_live"];

/** The scopes of a token minted without `scopes`: `create` only for an agent-bound one, no opt-in scope. */
export function defaultScopes(agentBound: boolean): TokenScope[] {
  return TOKEN_SCOPES.filter((s) => !OPT_IN_SCOPES.includes(s) && (agentBound || s !== "create"));
}

const SCOPE_OF: Partial<Record<Permission, TokenScope>> = {
  "session.read": "read",
  "session.submit": "submit",
  "session.interrupt": "interrupt",
  "session.approve": "approve",
  "sessions.create": "create",
  "session.replay_live": "replay_live",
  "sessions.list": "read",
  // A token reaches its own subject's resource only (routes/resources.ts).
  "memory.read": "read",
  "memory.write": "submit",
};

/** Why no token may do a permission, where the generic refusal would not say. */
export const KEY_ONLY: Partial<Record<Permission, string>> = {
  "session.schedule": "a schedule runs on after the token expires, so schedules are made and deleted with an API key",
  "resource.delete": "erasing a resource (and its sessions) is the tenant's decision, so it takes an API key",
};

/** The token scope a permission needs; undefined for what no token may do. */
export function scopeFor(permission: Permission): TokenScope | undefined {
  return SCOPE_OF[permission];
}

/** Whether `principal` may do `permission`; for a token also on which session or agent (checked per request). */
export function allows(principal: Principal, permission: Permission): boolean {
  if (principal.kind === "key") return roleAllows(principal.role, permission);
  const scope = scopeFor(permission);
  if (!scope || !principal.scopes.includes(scope)) return false;
  // A token bound to one session opens none; only an agent-bound token creates or lists (its own) sessions.
  return principal.agent !== null || (permission !== "sessions.create" && permission !== "sessions.list");
}

/** What a token's reach is checked against: the session's id, owner and the agent it was opened with. */
export interface SessionAccess {
  session_id: string;
  owner: string | null;
  opened_agent: string;
}

/** A token reaches its one session, or the sessions its subject owns of its agent; anything else is 403. */
export function checkTokenReach(token: Pick<Extract<Principal, { kind: "token" }>, "session_id" | "subject" | "agent">, access: SessionAccess): void {
  if (token.session_id) {
    if (access.session_id !== token.session_id) throw new ApiError("forbidden", "This token is for another session");
    return;
  }
  if (access.owner !== token.subject) throw new ApiError("forbidden", "This token's subject does not own this session");
  if (access.opened_agent !== token.agent) throw new ApiError("forbidden", `This token reaches sessions of agent "${token.agent}" only`);
}
