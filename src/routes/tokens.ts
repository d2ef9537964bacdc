// POST /v1/tokens: a tenant's backend asks for a short-lived token to hand to a browser (the inspector, a
// useChat page), bound to one session or to one agent, with scopes that narrow what it may do. It names the
// deployment it is for (`aud`, see deploymentId) and the key that minted it (`key`, the key's id, never the key).
import { sign } from "hono/jwt";
import { agentConfig } from "../objects/registry/agent-cache";
import { ApiError, unwrap } from "../protocol/errors";
import { tokens as ops } from "../protocol/operations";
import { defaultScopes } from "../protocol/permissions";
import { deploymentId, TOKEN_ISSUER } from "./auth";
import { router, sessionStub } from "./http";
import { route } from "./operation-route";

export const tokens = router().openapi(route(ops.createToken), async (c) => {
  const body = c.req.valid("json");
  const secret = c.env.TOKEN_SIGNING_SECRET;
  if (!secret) throw new ApiError("conflict", "This deployment issues no tokens: set the TOKEN_SIGNING_SECRET secret");
  if (body.session_id !== undefined) unwrap(await sessionStub(c.env, body.session_id).access());
  if (body.agent !== undefined && !(await agentConfig(c.env, body.agent))) throw ApiError.notFound("Agent", body.agent);
  const scopes = body.scopes ?? defaultScopes(body.agent !== undefined);
  const now = Math.floor(Date.now() / 1000);
  const expires_at = now + body.ttl_s;
  // Only keys mint tokens (no token scope grants tokens.create), so the principal's id is the key's id.
  const minter = c.get("principal");
  if (minter.kind !== "key") throw new ApiError("forbidden", "only an API key issues tokens");
  const claims = {
    iss: TOKEN_ISSUER,
    aud: await deploymentId(c.env),
    key: minter.id,
    sub: body.subject,
    iat: now,
    exp: expires_at,
    scp: scopes,
    ...(body.session_id ? { sid: body.session_id } : { agt: body.agent }),
  };
  const token = await sign(claims, secret, "HS256");
  return c.json({ token, expires_at, subject: body.subject, session_id: body.session_id ?? null, agent: body.agent ?? null, scopes }, 201);
});
