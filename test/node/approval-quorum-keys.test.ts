// A deployment that requires distinct keys for a quorum (APPROVAL_QUORUM_DISTINCT_KEYS=true), on a runtime
// process started with it: one operator key minting two subjects meets no quorum alone; tokens of two keys
// do. The process also sets DEPLOYMENT_ID, which its tokens name as their audience.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type DevRuntime, startRuntime } from "./support/wrangler-dev";

const [KEY_A, KEY_B] = ["quorum-key-a", "quorum-key-b"];
let rt: DevRuntime;

beforeAll(async () => {
  rt = await startRuntime({
    API_KEYS: `${KEY_A},${KEY_B}`,
    TOKEN_SIGNING_SECRET: "quorum-test-secret",
    DEPLOYMENT_ID: "quorum-test",
    APPROVAL_QUORUM_DISTINCT_KEYS: "true",
  });
}, 90_000);
afterAll(() => rt?.stop());

const call = (method: string, path: string, credential: string, body?: unknown) => rt.callAs(credential, method, path, body);

/** A session whose demo model calls the calculator, which needs two approvals; and the action it waits on. */
async function waitingForTwo(): Promise<{ sid: string; action: string }> {
  expect(
    (await call("PUT", "/v1/agents/pair", KEY_A, { model: "demo:fast", tools: ["calculator"], hitl_tools: [{ name: "calculator", approvals: 2 }] })).status,
  ).toBeLessThan(300);
  const sid = (await call("POST", "/v1/sessions", KEY_A, { agent: "pair" })).body.session_id as string;
  expect((await call("POST", `/v1/sessions/${sid}/turns`, KEY_A, { input: "what is 6 * 7?" })).status).toBe(202);
  for (let i = 0; i < 300; i++) {
    const pending = (await call("GET", `/v1/sessions/${sid}/thread`, KEY_A)).body.pending_actions;
    if (pending.length > 0) return { sid, action: pending[0].action_id };
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error("the calculator call never asked for approval");
}

async function tokenOf(key: string, sid: string, subject: string): Promise<string> {
  const res = await call("POST", "/v1/tokens", key, { subject, session_id: sid, scopes: ["read", "approve"], ttl_s: 600 });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.token;
}

const approve = (sid: string, action: string, credential: string) => call("POST", `/v1/sessions/${sid}/actions/${action}`, credential, { decision: "approve" });

describe("APPROVAL_QUORUM_DISTINCT_KEYS=true", () => {
  it("counts two subjects of one key once, and tokens of two keys twice", async () => {
    const { sid, action } = await waitingForTwo();
    const alice = await tokenOf(KEY_A, sid, "alice");

    expect((await approve(sid, action, alice)).body).toMatchObject({ decision: "pending", approvals: { recorded: 1, required: 2 } });
    // bob's token and the key itself speak for the key alice's token was minted with.
    for (const credential of [await tokenOf(KEY_A, sid, "bob"), KEY_A]) {
      const again = await approve(sid, action, credential);
      expect(again.status).toBe(409);
      expect(again.body.error).toMatchObject({ code: "conflict", message: expect.stringContaining("same API key") });
    }

    const carol = await approve(sid, action, await tokenOf(KEY_B, sid, "carol"));
    expect(carol.status, JSON.stringify(carol.body)).toBe(200);
    expect(carol.body).toMatchObject({ decision: "approved", approvals: { recorded: 2, required: 2 } });
    const resolved = (await call("GET", `/v1/sessions/${sid}/events?limit=1000`, KEY_A)).body.events.find((e: any) => e.type === "action.resolved");
    expect(resolved.payload.approved_by).toEqual([
      expect.stringMatching(/^tok_alice@key_[0-9a-f]{16}$/),
      expect.stringMatching(/^tok_carol@key_[0-9a-f]{16}$/),
    ]);
    // DEPLOYMENT_ID is the tokens' audience.
    expect(JSON.parse(Buffer.from(alice.split(".")[1]!, "base64url").toString()).aud).toBe("quorum-test");
  });
});
