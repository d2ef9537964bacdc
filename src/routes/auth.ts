// Who a request comes from (authenticate) and whether it may do what its operation declares (authorize):
// API keys (with roles, compared in constant time against their hashes) and signed short-lived tokens for
// browsers (bound to one session or one agent, with scopes, to this deployment and to the key that minted
// them). Each operation's route runs both (operation-route.ts); a request no operation matches is
// authenticated before its 404.
import type { Context, MiddlewareHandler } from "hono";
import { verify } from "hono/jwt";
import type { Env } from "../env";
import { ApiError, unwrap } from "../protocol/errors";
import type { Operation } from "../protocol/operations/operation";
import { allows, checkTokenReach, KEY_ONLY, type Permission, type Principal, ROLES, type Role, type TokenScope } from "../protocol/permissions";
import { KEY_ID, subjectFlaw, tokenPrincipalId } from "../protocol/principal-id";
import { type AppEnv, sessionStub } from "./http";

export const TOKEN_ISSUER = "agent-runtime";

interface StoredKey {
  hash: Uint8Array;
  /** keyId(hash): what tokens minted with the key name in their `key` claim. */
  id: string;
  role: Role;
}

const encoder = new TextEncoder();
let keyCache: { source: string; keys: Promise<StoredKey[]>; keySet: Promise<string> } | null = null;

async function sha256(text: string): Promise<Uint8Array> {
  return new Uint8Array(await crypto.subtle.digest("SHA-256", encoder.encode(text)));
}

/** `API_KEYS` entries are `key` (admin) or `key:role`; only their hashes are kept (with the key set's digest). */
function keyTable(source: string): { keys: Promise<StoredKey[]>; keySet: Promise<string> } {
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
    const keys = Promise.all(entries.map(async (e) => ({ ...(await hashed(e.key)), role: e.role })));
    keyCache = { source, keys, keySet: keys.then(keySetDigest) };
  }
  return keyCache;
}

const storedKeys = (source: string): Promise<StoredKey[]> => keyTable(source).keys;

async function hashed(key: string): Promise<{ hash: Uint8Array; id: string }> {
  const hash = await sha256(key);
  return { hash, id: keyId(hash) };
}

const hex = (bytes: Uint8Array) => [...bytes].map((b) => b.toString(16).padStart(2, "0")).join("");

/**
 * The deployment id of a deployment without DEPLOYMENT_ID: `keys_` and 32 hex digits of a SHA-256 over the
 * sorted SHA-256 digests of its API keys (roles left out), so it is the same whatever their order, changes
 * when a key is added or removed, and says nothing of the keys.
 */
async function keySetDigest(keys: StoredKey[]): Promise<string> {
  const digests = [...new Set(keys.map((k) => hex(k.hash)))].sort();
  return `keys_${hex(await sha256(`agent-runtime deployment\n${digests.join("\n")}`)).slice(0, 32)}`;
}

/**
 * Who tokens are for: DEPLOYMENT_ID when set, otherwise a digest of the configured API key set. Every token
 * names it in its `aud` claim, and a token naming another is refused, so a token of one deployment does not
 * open another that shares its TOKEN_SIGNING_SECRET.
 */
export async function deploymentId(env: Env): Promise<string> {
  const configured = env.DEPLOYMENT_ID?.trim();
  if (configured) return configured;
  return keyTable(env.API_KEYS ?? "").keySet;
}

/** The ids of the deployment's API keys (a quota's key scope must name one). */
export async function configuredKeyIds(env: Env): Promise<string[]> {
  return (await storedKeys(env.API_KEYS ?? "")).map((k) => k.id);
}

/** Who a key is in logs and on decisions, without the key: the first 16 hex digits of its SHA-256. */
function keyId(hash: Uint8Array): string {
  return `key_${hex(hash.slice(0, 8))}`;
}

async function keyPrincipal(env: Env, presented: string): Promise<Principal> {
  const keys = await storedKeys(env.API_KEYS ?? "");
  if (keys.length === 0) throw new ApiError("unauthorized", "No API keys are configured for this deployment");
  const hash = await sha256(presented);
  // Every stored hash is compared, in constant time, so the time taken says nothing about which matched.
  let match: StoredKey | null = null;
  for (const k of keys) if (crypto.subtle.timingSafeEqual(k.hash, hash)) match = k;
  if (!match) throw new ApiError("unauthorized", "Missing or invalid API key");
  return { kind: "key", id: match.id, role: match.role };
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
  // Checked after the signature, so only a token signed with this deployment's secret learns this.
  if (claims.aud !== (await deploymentId(env))) {
    throw new ApiError(
      "token_audience_mismatch",
      typeof claims.aud === "string"
        ? "The token was issued for another deployment (its aud is not this deployment's id, or DEPLOYMENT_ID or the API key set changed since); ask for a new one"
        : "The token names no deployment (aud): it was issued before tokens were bound to their deployment; ask for a new one",
    );
  }
  const key = claims.key;
  if (typeof key !== "string" || !KEY_ID.test(key)) throw new ApiError("invalid_token", "The token names no key that minted it (key); ask for a new one");
  if (!(await storedKeys(env.API_KEYS ?? "")).some((k) => k.id === key)) {
    throw new ApiError("invalid_token", "The API key that minted this token is no longer configured; ask for a new one");
  }
  const subject = String(claims.sub ?? "");
  if (subject === "") throw new ApiError("invalid_token", "The token names no subject (sub); ask for a new one");
  // Owners are compared exactly; a subject minted before minting required canonical ones may look like another's.
  const flaw = subjectFlaw(subject);
  if (flaw !== null) throw new ApiError("invalid_token", `The token's subject (sub) is not canonical: it ${flaw}; ask for a new one`);
  return {
    kind: "token",
    id: tokenPrincipalId(subject, key),
    subject,
    session_id: typeof claims.sid === "string" ? claims.sid : null,
    agent: typeof claims.agt === "string" ? claims.agt : null,
    scopes: Array.isArray(claims.scp) ? (claims.scp as TokenScope[]) : [],
    expires_at: typeof claims.exp === "number" ? claims.exp * 1000 : null,
  };
}

const looksLikeJwt = (s: string) => /^[\w-]+\.[\w-]+\.[\w-]+$/.test(s);

/** The credential of a request: the bearer header, or `access_token` where the operation lets browsers send it so. */
function presented(c: Context, query: Operation["queryCredential"]): string | null {
  const bearer = /^Bearer\s+(.+)$/i.exec(c.req.header("authorization") ?? "")?.[1]?.trim();
  if (bearer) return bearer;
  const sse = query === "event-stream" && (c.req.header("accept") ?? "").includes("text/event-stream");
  if (c.req.method === "GET" && (query === "always" || sse)) return c.req.query("access_token") ?? null;
  return null;
}

async function principalOf(c: Context<AppEnv>, query: Operation["queryCredential"]): Promise<Principal> {
  const credential = presented(c, query);
  if (credential === null) throw new ApiError("unauthorized", "Missing or invalid API key");
  return looksLikeJwt(credential) ? tokenPrincipal(c.env, credential) : keyPrincipal(c.env, credential);
}

/** Who the caller is (401 when nobody), taking the credential where the operation allows it. */
export const authenticate =
  (query: Operation["queryCredential"]): MiddlewareHandler<AppEnv> =>
  async (c, next) => {
    const principal = await principalOf(c, query);
    c.set("principal", principal);
    c.set("keyHash", principal.id);
    await next();
  };

/** For a request no operation matches: 401 without a valid credential, so that a 404 tells strangers nothing. */
export const authenticateUnmatched = (c: Context<AppEnv>) => principalOf(c, undefined);

/** 403 naming `permission` unless `principal` may do it (also for what a route allows only for some bodies). */
export function requirePermission(principal: Principal, permission: Permission): void {
  if (allows(principal, permission)) return;
  const who = principal.kind === "key" ? `${/^[aeiou]/.test(principal.role) ? "an" : "a"} ${principal.role} key` : "this token";
  const why = principal.kind === "token" && KEY_ONLY[permission] ? `: ${KEY_ONLY[permission]}` : "";
  throw new ApiError("forbidden", `${who} may not do ${permission}${why}`);
}

/** Whether the caller may do `permission` (403 otherwise); a token also only on the session it may reach. */
export const authorize =
  (permission: Permission): MiddlewareHandler<AppEnv> =>
  async (c, next) => {
    const principal = c.get("principal");
    requirePermission(principal, permission);
    const sid = c.req.param("sid") ?? c.req.param("exec_id");
    if (principal.kind === "token" && sid?.startsWith("ses_")) await checkTokenSession(c.env, principal, sid);
    await next();
  };

/** A token reaches one session: the one it is bound to, or (bound to an agent) its subject's sessions opened with that agent. */
export async function checkTokenSession(env: Env, token: Extract<Principal, { kind: "token" }>, sid: string): Promise<void> {
  if (token.session_id) return checkTokenReach(token, { session_id: sid, owner: null, opened_agent: "" });
  const { access } = unwrap(await sessionStub(env, sid).access());
  checkTokenReach(token, { session_id: sid, ...access });
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
