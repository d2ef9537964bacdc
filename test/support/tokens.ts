// Browser tokens that expire within seconds, for tests of what happens at a token's expiry. POST /v1/tokens
// issues no token shorter than 60 s, so the test takes one it issued and signs its claims again with an
// earlier `exp`, with the test deployment's TOKEN_SIGNING_SECRET (vitest.config.ts).
import { decode, sign } from "hono/jwt";
import { expect } from "vitest";
import { api } from "./api";

const SECRET = "test-signing-secret";

/** A token of `binding` ({subject, session_id or agent, scopes?}) that expires `seconds` from now (to the second). */
export async function shortLivedToken(binding: Record<string, unknown>, seconds: number): Promise<{ token: string; expiresAt: number }> {
  const issued = await api("POST", "/v1/tokens", { ttl_s: 60, ...binding });
  expect(issued.status, JSON.stringify(issued.body)).toBe(201);
  const exp = Math.floor(Date.now() / 1000) + seconds;
  const token = await sign({ ...decode(issued.body.token).payload, exp }, SECRET, "HS256");
  return { token, expiresAt: exp * 1000 };
}
