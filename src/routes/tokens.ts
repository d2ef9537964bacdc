// POST /v1/tokens: a tenant's backend asks for a short-lived token to hand to a browser (the inspector, a
// useChat page), bound to one session or to one agent, with scopes that narrow what it may do.
import { createRoute, z } from "@hono/zod-openapi";
import { sign } from "hono/jwt";
import { agentConfig } from "../durable/agent-cache";
import { ApiError, unwrap } from "../runtime/errors";
import { TOKEN_ISSUER } from "./auth";
import { errorResponses, router, sessionStub } from "./http";
import { TOKEN_SCOPES } from "./permissions";

const MAX_TTL_S = 24 * 3600;

const TokenRequest = z
  .strictObject({
    subject: z.string().min(1).max(200).openapi({ description: "Who the token is for (an end user's id in the tenant's product)" }),
    session_id: z.string().optional(),
    agent: z.string().optional(),
    scopes: z.array(z.enum(TOKEN_SCOPES)).min(1).optional().openapi({ description: "Narrows the token (default: all its binding allows)" }),
    ttl_s: z.int().min(60).max(MAX_TTL_S),
  })
  .superRefine((body, ctx) => {
    if ((body.session_id === undefined) === (body.agent === undefined)) {
      ctx.addIssue({ code: "custom", path: ["session_id"], message: "give exactly one of session_id and agent" });
    }
    if (body.session_id !== undefined && body.scopes?.includes("create")) {
      ctx.addIssue({ code: "custom", path: ["scopes"], message: 'a token bound to a session cannot have "create"; bind it to an agent' });
    }
  })
  .openapi("TokenRequest");

const TokenResponse = z
  .object({
    token: z.string(),
    expires_at: z.int(),
    subject: z.string(),
    session_id: z.string().nullable(),
    agent: z.string().nullable(),
    scopes: z.array(z.enum(TOKEN_SCOPES)),
  })
  .openapi("Token");

export const tokens = router().openapi(
  createRoute({
    method: "post",
    path: "/v1/tokens",
    operationId: "createToken",
    summary: "Issue a short-lived token for a browser, bound to one session or one agent (admin and operator keys)",
    request: { body: { required: true, content: { "application/json": { schema: TokenRequest } } } },
    responses: { 201: { description: "Issued", content: { "application/json": { schema: TokenResponse } } }, ...errorResponses(401, 403, 404, 409, 422) },
  }),
  async (c) => {
    const body = c.req.valid("json");
    const secret = c.env.TOKEN_SIGNING_SECRET;
    if (!secret) throw new ApiError("conflict", "This deployment issues no tokens: set the TOKEN_SIGNING_SECRET secret");
    if (body.session_id !== undefined) unwrap(await sessionStub(c.env, body.session_id).access());
    if (body.agent !== undefined && !(await agentConfig(c.env, body.agent))) throw ApiError.notFound("Agent", body.agent);
    const scopes = body.scopes ?? TOKEN_SCOPES.filter((s) => body.agent !== undefined || s !== "create");
    const now = Math.floor(Date.now() / 1000);
    const expires_at = now + body.ttl_s;
    const claims = {
      iss: TOKEN_ISSUER,
      sub: body.subject,
      iat: now,
      exp: expires_at,
      scp: scopes,
      ...(body.session_id ? { sid: body.session_id } : { agt: body.agent }),
    };
    const token = await sign(claims, secret, "HS256");
    return c.json({ token, expires_at, subject: body.subject, session_id: body.session_id ?? null, agent: body.agent ?? null, scopes }, 201);
  },
);
