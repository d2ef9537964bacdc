// Tokens are bound to the deployment that minted them and name the key that minted it. Other deployments are
// this Worker answering under other settings (the same TOKEN_SIGNING_SECRET, as a hostile client would find
// two deployments configured): a token of one is refused by the other, 401 `token_audience_mismatch`.
import { createExecutionContext, env, SELF } from "cloudflare:test";
import { decode, sign } from "hono/jwt";
import { describe, expect, it } from "vitest";
import type { Env } from "../../../src/env";
import worker from "../../../src/worker";
import { createSession } from "../../support/api";

const BASE = "https://runtime.test";
/** The test deployment's settings (vitest.config.ts). */
const SECRET = "test-signing-secret";
const KEYS = ["test-key", "second-key", "operator-key", "read-key"];

type Deployment = (method: string, path: string, credential: string, body?: unknown) => Promise<{ status: number; body: any }>;

/** A deployment: the test one (SELF), or this Worker with some settings changed (its storage is the same). */
function deployment(settings?: Partial<Record<keyof Env, string>>): Deployment {
  return async (method, path, credential, body) => {
    const request = new Request(`${BASE}${path}`, {
      method,
      headers: { authorization: `Bearer ${credential}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const res = settings ? await worker.fetch(request, { ...(env as unknown as Env), ...settings }, createExecutionContext()) : await SELF.fetch(request);
    return { status: res.status, body: await res.json() };
  };
}

const here = deployment();

async function mint(on: Deployment, key: string, sid: string, subject = "user-1"): Promise<string> {
  const res = await on("POST", "/v1/tokens", key, { subject, session_id: sid, scopes: ["read"], ttl_s: 600 });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.token;
}

const claims = (token: string) => decode(token).payload as Record<string, unknown>;

describe("tokens bound to their deployment", () => {
  it("a token names this deployment (aud) and its minting key (key), and neither holds a key", async () => {
    const sid = await createSession({ name: "aud-claims", model: "demo:fast" });
    const first = claims(await mint(here, "test-key", sid));
    const second = claims(await mint(here, "second-key", sid));
    // Unset DEPLOYMENT_ID: a digest of the key set, the same for every key of it.
    expect(first.aud).toMatch(/^keys_[0-9a-f]{32}$/);
    expect(second.aud).toBe(first.aud);
    expect(first.key).toMatch(/^key_[0-9a-f]{16}$/);
    expect(second.key).toMatch(/^key_[0-9a-f]{16}$/);
    expect(first.key).not.toBe(second.key);
    const text = JSON.stringify([first, second]);
    for (const key of KEYS) expect(text).not.toContain(key);

    // The key set's digest does not depend on the keys' order or roles; DEPLOYMENT_ID replaces it.
    const reordered = deployment({ API_KEYS: "read-key:admin, second-key,operator-key,test-key" });
    expect(claims(await mint(reordered, "test-key", sid)).aud).toBe(first.aud);
    expect(claims(await mint(deployment({ DEPLOYMENT_ID: "acme-prod" }), "test-key", sid)).aud).toBe("acme-prod");
  });

  it("a token of another deployment sharing the signing secret is 401 token_audience_mismatch, both ways", async () => {
    const sid = await createSession({ name: "aud-other", model: "demo:fast" });
    const ours = await mint(here, "test-key", sid);
    expect((await here("GET", `/v1/sessions/${sid}/thread`, ours)).status).toBe(200);

    // Same keys, same secret, another DEPLOYMENT_ID.
    const named = deployment({ DEPLOYMENT_ID: "deployment-b" });
    const theirs = await mint(named, "test-key", sid);
    expect((await named("GET", `/v1/sessions/${sid}/thread`, theirs)).status).toBe(200);
    for (const [on, token] of [
      [here, theirs],
      [named, ours],
    ] as const) {
      const res = await on("GET", `/v1/sessions/${sid}/thread`, token);
      expect(res.status).toBe(401);
      expect(res.body.error).toMatchObject({ code: "token_audience_mismatch", message: expect.stringContaining("another deployment") });
    }

    // No DEPLOYMENT_ID anywhere, another key set, the same secret.
    const otherKeys = deployment({ API_KEYS: "other-deployment-key" });
    const fromOtherKeys = await mint(otherKeys, "other-deployment-key", sid);
    expect((await otherKeys("GET", `/v1/sessions/${sid}/thread`, fromOtherKeys)).status).toBe(200);
    const res = await here("GET", `/v1/sessions/${sid}/thread`, fromOtherKeys);
    expect(res.status).toBe(401);
    expect(res.body.error.code).toBe("token_audience_mismatch");
  });

  it("setting DEPLOYMENT_ID logs out the tokens minted before; so does changing the key set when it is unset", async () => {
    const sid = await createSession({ name: "aud-rotate", model: "demo:fast" });
    const before = await mint(here, "test-key", sid);
    expect((await deployment({ DEPLOYMENT_ID: "acme-prod" })("GET", `/v1/sessions/${sid}/thread`, before)).body.error.code).toBe("token_audience_mismatch");
    expect((await deployment({ API_KEYS: `${KEYS.join(",")},new-key` })("GET", `/v1/sessions/${sid}/thread`, before)).body.error.code).toBe(
      "token_audience_mismatch",
    );
  });

  it("a signed token that names no deployment (as tokens did before) is 401 token_audience_mismatch", async () => {
    const sid = await createSession({ name: "aud-missing", model: "demo:fast" });
    const { aud: _aud, ...unbound } = claims(await mint(here, "test-key", sid));
    const res = await here("GET", `/v1/sessions/${sid}/thread`, await sign(unbound, SECRET, "HS256"));
    expect(res.status).toBe(401);
    expect(res.body.error).toMatchObject({ code: "token_audience_mismatch", message: expect.stringContaining("names no deployment") });
  });

  it("a token whose minting key is not a configured key of the deployment, or that names none, is 401 invalid_token", async () => {
    const sid = await createSession({ name: "aud-key", model: "demo:fast" });
    const twoKeys = deployment({ DEPLOYMENT_ID: "acme-prod", API_KEYS: "test-key,second-key" });
    const oneRemoved = deployment({ DEPLOYMENT_ID: "acme-prod", API_KEYS: "test-key" });
    const bySecond = await mint(twoKeys, "second-key", sid);
    const byFirst = await mint(twoKeys, "test-key", sid);
    expect((await oneRemoved("GET", `/v1/sessions/${sid}/thread`, byFirst)).status).toBe(200);
    const removed = await oneRemoved("GET", `/v1/sessions/${sid}/thread`, bySecond);
    expect(removed.status).toBe(401);
    expect(removed.body.error).toMatchObject({ code: "invalid_token", message: expect.stringContaining("no longer configured") });

    const { key: _key, ...keyless } = claims(await mint(here, "test-key", sid));
    const res = await here("GET", `/v1/sessions/${sid}/thread`, await sign(keyless, SECRET, "HS256"));
    expect(res.status).toBe(401);
    expect(res.body.error.code).toBe("invalid_token");
  });
});
