// Who may call what: every route of the API and the permission it needs, in one table next to the routes.
// API keys carry a role; browser tokens carry a binding (one session, or one agent) and scopes.

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
  | "session.subscribe"
  | "session.schedule"
  | "tokens.create"
  | "usage.read"
  | "mcp";

export type Role = "admin" | "operator" | "read";
export const ROLES: readonly Role[] = ["admin", "operator", "read"];

/** Method and OpenAPI path (`{param}` segments) of every authenticated route, with its permission. */
export const ROUTE_PERMISSIONS: Record<string, Permission> = {
  "GET /v1/agents": "agents.read",
  "GET /v1/agents/{name}": "agents.read",
  "PUT /v1/agents/{name}": "agents.write",
  "DELETE /v1/agents/{name}": "agents.write",
  "POST /v1/sessions": "sessions.create",
  "GET /v1/sessions": "sessions.list",
  "GET /v1/sessions/{sid}": "session.read",
  "DELETE /v1/sessions/{sid}": "session.delete",
  "GET /v1/sessions/{sid}/thread": "session.read",
  "GET /v1/sessions/{sid}/events": "session.read",
  "GET /v1/sessions/{sid}/ws": "session.read",
  "GET /v1/sessions/{sid}/messages": "session.read",
  "GET /v1/sessions/{sid}/export": "session.read",
  "GET /v1/sessions/{sid}/tools": "session.read",
  "GET /v1/sessions/{sid}/artifacts/{artifact_id}": "session.read",
  "GET /v1/sessions/{sid}/turns/{turn_id}/tree": "session.read",
  "POST /v1/sessions/{sid}/turns": "session.submit",
  "POST /v1/sessions/{sid}/fork": "sessions.create",
  "POST /v1/sessions/{sid}/turns/{turn_id}/replay": "sessions.create",
  "GET /v1/replays/{exec_id}": "session.read",
  "POST /v1/sessions/{sid}/messages": "session.submit",
  "POST /v1/sessions/{sid}/interrupt": "session.interrupt",
  "POST /v1/sessions/{sid}/actions/{action_id}": "session.approve",
  "DELETE /v1/sessions/{sid}/queue/{turn_id}": "session.queue",
  "POST /v1/sessions/{sid}/schedules": "session.schedule",
  "GET /v1/sessions/{sid}/schedules": "session.read",
  "DELETE /v1/sessions/{sid}/schedules/{schedule_id}": "session.schedule",
  "POST /v1/sessions/{sid}/subscriptions": "session.subscribe",
  "GET /v1/sessions/{sid}/subscriptions": "session.subscribe",
  "PATCH /v1/sessions/{sid}/subscriptions/{subscription_id}": "session.subscribe",
  "DELETE /v1/sessions/{sid}/subscriptions/{subscription_id}": "session.subscribe",
  "POST /v1/sessions/{sid}/queue/{turn_id}/promote": "session.queue",
  "POST /v1/chat": "session.submit",
  "GET /v1/chat/{sid}/stream": "session.read",
  "POST /v1/tokens": "tokens.create",
  "GET /v1/usage": "usage.read",
  "POST /mcp": "mcp",
};

const READ: readonly Permission[] = ["agents.read", "sessions.list", "session.read", "usage.read"];

/** What each key role allows: admin everything, operator everything but registry writes, read only reads. */
export function roleAllows(role: Role, permission: Permission): boolean {
  if (role === "admin") return true;
  if (role === "operator") return permission !== "agents.write";
  return READ.includes(permission);
}

/** Who made a request: a key with its role, or a browser token with its binding and scopes. */
export type Principal =
  | { kind: "key"; id: string; role: Role }
  | {
      kind: "token";
      id: string;
      subject: string;
      session_id: string | null;
      agent: string | null;
      scopes: TokenScope[];
      /** When the token expires (ms since the epoch; every issued token has one): streams it opened end then. */
      expires_at: number | null;
    };

/** Scopes a browser token may carry; `scopes` narrows a token to some of them (default: all its binding allows). */
export const TOKEN_SCOPES = ["read", "submit", "interrupt", "approve", "create"] as const;
export type TokenScope = (typeof TOKEN_SCOPES)[number];

const SCOPE_OF: Partial<Record<Permission, TokenScope>> = {
  "session.read": "read",
  "session.submit": "submit",
  "session.interrupt": "interrupt",
  "session.approve": "approve",
  "sessions.create": "create",
  "sessions.list": "read",
};

/** Why no token may do a permission, where the generic refusal would not say. */
export const KEY_ONLY: Partial<Record<Permission, string>> = {
  "session.schedule": "a schedule runs on after the token expires, so schedules are made and deleted with an API key",
};

/** The token scope a permission needs; undefined for what no token may do. */
export function scopeFor(permission: Permission): TokenScope | undefined {
  return SCOPE_OF[permission];
}

const PATTERNS = Object.entries(ROUTE_PERMISSIONS).map(([route, permission]) => {
  const [method, path] = route.split(" ") as [string, string];
  return { method, regex: new RegExp(`^${path.replace(/\{[^}]+\}/g, "[^/]+")}$`), permission };
});

/** The permission a request needs, or undefined for a route the table does not name (it then 404s). */
export function permissionFor(method: string, path: string): Permission | undefined {
  return PATTERNS.find((p) => p.method === method && p.regex.test(path))?.permission;
}
