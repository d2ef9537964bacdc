// Authentication and authorization of every /v1 request and POST /mcp: API keys (with roles, compared in
// constant time against their hashes) and signed short-lived tokens for browsers (bound to one session or
// one agent, with scopes), checked against the permission table in permissions.ts.
import type { Context, MiddlewareHandler } from "hono";
import { verify } from "hono/jwt";
import type { Env } from "../env";
import { ApiError, unwrap } from "../runtime/errors";
import { sessionStub } from "./http";
import { KEY_ONLY, type Permission, type Principal, permissionFor, ROLES, type Role, roleAllows, scopeFor, type TokenScope } from "./permissions";

/** Routes a browser reaches without setting headers: WebSocket, EventSource (SSE only) and the chat transport's resume. */
const QUERY_TOKEN_ROUTES = [/^\/v1\/sessions\/[^/]+\/ws$/, /^\/v1\/chat\/[^/]+\/stream$/];
const SSE_ROUTE = /^\/v1\/sessions\/[^/]+\/events$/;

export const TOKEN_ISSUER = "agent-runtime";
/** /v1 routes anyone may read (like /openapi.json): the event catalog describes the API, not a tenant's data. */
const PUBLIC_ROUTES = new Set(["/v1/events/schema"]);

interface StoredKey {
  hash: Uint8Array;
  role: Role;
}

const encoder = new TextEncoder();
let keyCache: { source: string; keys: Promise<StoredKey[]> } | null = null;

async function sha256(text: string): Promise<Uint8Array> {
  return new Uint8Array(await crypto.subtle.digest("SHA-256", encoder.encode(text)));
}

/** `API_KEYS` entries are `key` (admin) or `key:role`; only their hashes are kept. */
function storedKeys(source: string): Promise<StoredKey[]> {
  if (keyCache?.source !== source) {
    const entries = source
      .split(",")
      .map((k) => k.trim())
      .filter(Boolean)
      .map((entry) => {
        const at = entry.lastIndexOf(":");
        const role = entry.slice(at + 1) as Role;
        return at > 0 && ROLES.includes(role) ? { key: entry.slice(0, at), role } : { key: entry, role: "admin" as Role };
      });
    keyCache = { source, keys: Promise.all(entries.map(async (e) => ({ hash: await sha256(e.key), role: e.role }))) };
  }
  return keyCache.keys;
}

/** Who a key is in logs and on decisions, without the key: the first 16 hex digits of its SHA-256. */
function keyId(hash: Uint8Array): string {
  return `key_${[...hash.slice(0, 8)].map((b) => b.toString(16).padStart(2, "0")).join("")}`;
}

async function keyPrincipal(env: Env, presented: string): Promise<Principal> {
  const keys = await storedKeys(env.API_KEYS ?? "");
  if (keys.length === 0) throw new ApiError("unauthorized", "No API keys are configured for this deployment");
  const hash = await sha256(presented);
  // Every stored hash is compared, in constant time, so the time taken says nothing about which matched.
  let match: StoredKey | null = null;
  for (const k of keys) if (crypto.subtle.timingSafeEqual(k.hash, hash)) match = k;
  if (!match) throw new ApiError("unauthorized", "Missing or invalid API key");
  return { kind: "key", id: keyId(hash), role: match.role };
}

async function tokenPrincipal(env: Env, token: string): Promise<Principal> {
  if (!env.TOKEN_SIGNING_SECRET) throw new ApiError("invalid_token", "This deployment issues no tokens (TOKEN_SIGNING_SECRET is not set)");
  let claims: Record<string, unknown>;
  try {
    claims = await verify(token, env.TOKEN_SIGNING_SECRET, { alg: "HS256", iss: TOKEN_ISSUER });
  } catch (err) {
    const name = (err as Error).name;
    if (name === "JwtTokenExpired") throw new ApiError("token_expired", "The token has expired; ask for a new one");
    throw new ApiError("invalid_token", "The token is malformed, tampered with, or not signed by this deployment");
  }
  const subject = String(claims.sub ?? "");
  return {
    kind: "token",
    id: `tok_${subject}`,
    subject,
    session_id: typeof claims.sid === "string" ? claims.sid : null,
    agent: typeof claims.agt === "string" ? claims.agt : null,
    scopes: Array.isArray(claims.scp) ? (claims.scp as TokenScope[]) : [],
    expires_at: typeof claims.exp === "number" ? claims.exp * 1000 : null,
  };
}

const looksLikeJwt = (s: string) => /^[\w-]+\.[\w-]+\.[\w-]+$/.test(s);

/** The credential of a request: the bearer header, or `access_token` where browsers cannot set headers. */
function presented(c: Context): string | null {
  const bearer = /^Bearer\s+(.+)$/i.exec(c.req.header("authorization") ?? "")?.[1]?.trim();
  if (bearer) return bearer;
  const { method, path } = c.req;
  const sse = SSE_ROUTE.test(path) && (c.req.header("accept") ?? "").includes("text/event-stream");
  if (method === "GET" && (sse || QUERY_TOKEN_ROUTES.some((r) => r.test(path)))) return c.req.query("access_token") ?? null;
  return null;
}

/** Whether `principal` may do `permission`; for a token also on which session or agent (checked by the route). */
export function allows(principal: Principal, permission: Permission): boolean {
  if (principal.kind === "key") return roleAllows(principal.role, permission);
  const scope = scopeFor(permission);
  if (!scope || !principal.scopes.includes(scope)) return false;
  // A token bound to one session opens none; only an agent-bound token creates or lists (its own) sessions.
  return principal.agent !== null || (permission !== "sessions.create" && permission !== "sessions.list");
}

/** The session part of a session route's path, for the token binding check. */
const SESSION_IN_PATH = /^\/v1\/(?:sessions|chat|replays)\/(ses_[^/]+)/;

export const authenticate: MiddlewareHandler<{ Bindings: Env; Variables: { principal: Principal; keyHash: string } }> = async (c, next) => {
  if (PUBLIC_ROUTES.has(c.req.path)) return next();
  const credential = presented(c);
  if (credential === null) throw new ApiError("unauthorized", "Missing or invalid API key");
  const principal = looksLikeJwt(credential) ? await tokenPrincipal(c.env, credential) : await keyPrincipal(c.env, credential);
  const permission = permissionFor(c.req.method, c.req.path);
  if (permission && !allows(principal, permission)) {
    const who = principal.kind === "key" ? `a ${principal.role} key` : "this token";
    const why = principal.kind === "token" && KEY_ONLY[permission] ? `: ${KEY_ONLY[permission]}` : "";
    throw new ApiError("forbidden", `${who} may not do ${permission}${why}`);
  }
  const sid = SESSION_IN_PATH.exec(c.req.path)?.[1];
  if (principal.kind === "token" && sid) await checkTokenSession(c.env, principal, sid);
  c.set("principal", principal);
  c.set("keyHash", principal.id);
  await next();
};

/** A token reaches one session: the one it is bound to, or (bound to an agent) its subject's sessions of that agent. */
export async function checkTokenSession(env: Env, token: Extract<Principal, { kind: "token" }>, sid: string): Promise<void> {
  if (token.session_id) {
    if (sid !== token.session_id) throw new ApiError("forbidden", "This token is for another session");
    return;
  }
  const { access } = unwrap(await sessionStub(env, sid).access());
  if (access.owner !== token.subject) throw new ApiError("forbidden", "This token's subject does not own this session");
  if (access.agent !== token.agent) throw new ApiError("forbidden", `This token reaches sessions of agent "${token.agent}" only`);
}

/** What a principal may do on a session's WebSocket (sent to the object with the upgrade). */
export function socketGrants(principal: Principal): TokenScope[] {
  const grants: TokenScope[] = ["read"];
  for (const [scope, permission] of [
    ["submit", "session.submit"],
    ["interrupt", "session.interrupt"],
    ["approve", "session.approve"],
  ] as const) {
    if (allows(principal, permission)) grants.push(scope);
  }
  return grants;
}
