// Browser tokens: a tenant's backend asks for a short-lived token to hand to a browser.
import { z } from "zod";
import { TOKEN_SCOPES } from "../permissions";
import { CanonicalId } from "../principal-id";
import { json, jsonBody, operation } from "./operation";

export const MAX_TOKEN_TTL_S = 24 * 3600;

export const TokenRequest = z
  .strictObject({
    subject: CanonicalId.meta({
      description:
        "Who the token is for (an end user's id in the tenant's product), compared exactly (case included) wherever it owns or reaches something. It must be canonical: no leading or trailing white space, no invisible or control characters, in Unicode NFKC form",
    }),
    session_id: z.string().optional(),
    agent: z.string().optional(),
    scopes: z
      .array(z.enum(TOKEN_SCOPES))
      .min(1)
      .optional()
      .meta({ description: "Narrows the token (default: all its binding allows but replay_live, which a token has only when named here)" }),
    ttl_s: z.int().min(60).max(MAX_TOKEN_TTL_S),
  })
  .superRefine((body, ctx) => {
    if ((body.session_id === undefined) === (body.agent === undefined)) {
      ctx.addIssue({ code: "custom", path: ["session_id"], message: "give exactly one of session_id and agent" });
    }
    // Both open sessions (a replay is one), which a session-bound token never does.
    for (const scope of ["create", "replay_live"] as const) {
      if (body.session_id !== undefined && body.scopes?.includes(scope)) {
        ctx.addIssue({ code: "custom", path: ["scopes"], message: `a token bound to a session cannot have "${scope}"; bind it to an agent` });
      }
    }
  })
  .meta({ id: "TokenRequest" });

export const TokenResponse = z
  .object({
    token: z.string(),
    expires_at: z.int(),
    subject: z.string(),
    session_id: z.string().nullable(),
    agent: z.string().nullable(),
    scopes: z.array(z.enum(TOKEN_SCOPES)),
  })
  .meta({ id: "Token" });

export const createToken = operation({
  method: "post",
  path: "/v1/tokens",
  operationId: "createToken",
  summary: "Issue a short-lived token for a browser, bound to one session or one agent (admin and operator keys)",
  permission: "tokens.create",
  rateLimit: "request",
  body: jsonBody(TokenRequest),
  responses: { 201: json(TokenResponse, "Issued") },
  errors: [404, 409, 422],
});
