// Rate limits per caller, on a runtime process started with RATE_LIMIT_TURNS_PER_MIN and
// RATE_LIMIT_REQUESTS_PER_MIN set: a flood of turns from one token subject gets 429 with Retry-After and the
// JSON envelope; another subject is unaffected; a public route, which has no caller, is answered.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type DevRuntime, startRuntime } from "./support/wrangler-dev";

const KEY = "rate-test-key";
let rt: DevRuntime;

beforeAll(async () => {
  rt = await startRuntime({ API_KEYS: KEY, TOKEN_SIGNING_SECRET: "rate-test-secret", RATE_LIMIT_TURNS_PER_MIN: "3", RATE_LIMIT_REQUESTS_PER_MIN: "100" });
}, 90_000);
afterAll(() => rt?.stop());

const call = (method: string, path: string, credential: string, body?: unknown) => rt.callAs(credential, method, path, body);

describe("rate limits", () => {
  it("answers a flood of turns from one subject with 429 and Retry-After, and leaves another subject alone", async () => {
    expect((await call("PUT", "/v1/agents/flood", KEY, { model: "demo:fast" })).status).toBe(201);
    const tokenFor = async (subject: string) => (await call("POST", "/v1/tokens", KEY, { subject, agent: "flood", ttl_s: 600 })).body.token as string;
    const [alice, bob] = [await tokenFor("alice"), await tokenFor("bob")];
    const sid = (await call("POST", "/v1/sessions", alice, { agent: "flood" })).body.session_id as string;
    const answers = [];
    for (let i = 0; i < 6; i++) answers.push(await call("POST", `/v1/sessions/${sid}/turns`, alice, { input: `turn ${i}` }));
    expect(answers.map((a) => a.status)).toEqual([202, 202, 202, 429, 429, 429]);
    const refused = answers[3]!;
    expect(refused.body.error.code).toBe("rate_limited");
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);

    const bobs = (await call("POST", "/v1/sessions", bob, { agent: "flood" })).body.session_id as string;
    expect((await call("POST", `/v1/sessions/${bobs}/turns`, bob, { input: "hello" })).status).toBe(202);
    // Reads are not turns: alice can still watch her session.
    expect((await call("GET", `/v1/sessions/${sid}/thread`, alice)).status).toBe(200);
  }, 60_000);

  it("answers the public event catalog with or without a key", async () => {
    for (const headers of [{}, { authorization: `Bearer ${KEY}` }] as Record<string, string>[]) {
      const res = await fetch(`${rt.base}/v1/events/schema`, { headers });
      expect(res.status).toBe(200);
      expect(((await res.json()) as { $schema?: string }).$schema).toContain("json-schema.org");
    }
  });
});
