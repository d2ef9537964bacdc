// Tokens the runtime would not mint: one that expires within seconds (POST /v1/tokens issues none shorter than
// 60 s), or one whose claims were minted before a rule on them held. The test takes a token it issued and signs
// its claims again, changed, with the test deployment's TOKEN_SIGNING_SECRET (vitest.config.ts).
import { decode, sign } from "hono/jwt";
import { expect } from "vitest";
import { api } from "./api";

const SECRET = "test-signing-secret";

/** A token of `binding` ({subject, session_id or agent, scopes?}), issued and signed again with `claims` over its own. */
export async function resignedToken(binding: Record<string, unknown>, claims: Record<string, unknown>): Promise<string> {
  const issued = await api("POST", "/v1/tokens", { ttl_s: 60, ...binding });
  expect(issued.status, JSON.stringify(issued.body)).toBe(201);
  return sign({ ...decode(issued.body.token).payload, ...claims }, SECRET, "HS256");
}

/** A token of `binding` that expires `seconds` from now (to the second). */
export async function shortLivedToken(binding: Record<string, unknown>, seconds: number): Promise<{ token: string; expiresAt: number }> {
  const exp = Math.floor(Date.now() / 1000) + seconds;
  return { token: await resignedToken(binding, { exp }), expiresAt: exp * 1000 };
}
