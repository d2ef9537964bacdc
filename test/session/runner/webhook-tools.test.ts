// Webhook tools against a local receiver (test/support/receiver.ts): every attempt of a call carries one
// Idempotency-Key, through retries, an interrupt and a crash of the session object mid-call; the call is signed per
// Standard Webhooks (checked by the `standardwebhooks` package), with two signatures during a secret's
// rotation; the call's receipt is in its tool.result, and the secrets are never read back.
import { abortAllDurableObjects } from "cloudflare:test";
import { Webhook } from "standardwebhooks";
import { describe, expect, it } from "vitest";
import { api, createSession, events, submitTurn, waitForEvent, waitForTurnEnd } from "../../support/api";
import { baseURL, script, uniqueId } from "../../support/fake-model";

const NEW_SECRET = `whsec_${btoa("the new key of 24 bytes!")}`;
const OLD_SECRET = "an-older-secret-of-some-length";

type Received = { idempotency_key: string; webhook: Record<string, string>; body: string; answered: number | "hung" };

async function receiver(plan: { fail_first?: number; hang_on?: number[]; retry_after?: number; answer?: unknown; length?: boolean }) {
  const url = `${baseURL}/_receiver/${uniqueId("hook")}`;
  await fetch(`${url}/plan`, { method: "PUT", body: JSON.stringify(plan) });
  return { url, requests: async () => (await fetch(`${url}/requests`)).json() as Promise<Received[]> };
}

async function hookSession(tool: Record<string, unknown>, calls = 1): Promise<string> {
  const scriptId = uniqueId("hook");
  const toolCalls = Array.from({ length: calls }, (_, i) => ({ id: `call_${i}`, name: "hook", arguments: { n: i } }));
  await script(scriptId, [{ tool_calls: toolCalls }, { text: "done" }]);
  return createSession({ name: uniqueId("hooked"), model: `openai-compatible:${scriptId}`, http_tools: [{ name: "hook", ...tool }] });
}

describe("webhook tools", () => {
  it("sends every retry of a call under one Idempotency-Key, signed by both secrets of a rotation, and records the receipt", async () => {
    const rcv = await receiver({ fail_first: 2, retry_after: 0 });
    const sid = await hookSession({ url: rcv.url, secret: NEW_SECRET, previous_secret: OLD_SECRET, parallel_safe: false }, 2);
    const { turn_id } = await submitTurn(sid, "call it");
    const log = await waitForTurnEnd(sid, turn_id);
    const requests = await rcv.requests();
    expect(requests.map((r) => r.answered)).toEqual([503, 503, 200, 200]);
    const first = JSON.parse(requests[0]!.body).tool_call_id;
    const ofFirst = requests.filter((r) => JSON.parse(r.body).tool_call_id === first);
    expect(ofFirst).toHaveLength(3);
    const key = ofFirst[0]!.idempotency_key;
    expect(key).toMatch(/^idk_[0-9a-f]{32}$/);
    expect(new Set(ofFirst.map((r) => r.idempotency_key))).toEqual(new Set([key]));
    // The other call of the step has a key of its own.
    expect(requests.find((r) => JSON.parse(r.body).tool_call_id !== first)!.idempotency_key).not.toBe(key);
    for (const r of requests) {
      expect(r.webhook["webhook-id"]).toBe(r.idempotency_key);
      expect(r.webhook["webhook-signature"]!.split(" ")).toHaveLength(2);
      // A receiver that has either secret verifies the call: the rotation's overlap.
      expect(new Webhook(NEW_SECRET).verify(r.body, r.webhook)).toMatchObject({ tool: "hook", session_id: sid, turn_id });
      expect(new Webhook(OLD_SECRET, { format: "raw" }).verify(r.body, r.webhook)).toMatchObject({ tool: "hook" });
      expect(() => new Webhook(`whsec_${btoa("some other key entirely!")}`).verify(r.body, r.webhook)).toThrow();
    }
    const results = log.filter((e) => e.type === "tool.result");
    expect(results.find((e) => e.tool_call_id === first).payload.metadata.receipt).toEqual({ idempotency_key: key, status: 200, attempts: 3 });
    expect(results.map((e) => e.payload.is_error)).toEqual([false, false]);
    // Write-only: no event and no read of the session shows the secrets.
    const reads = JSON.stringify([await events(sid), (await api("GET", `/v1/sessions/${sid}`)).body]);
    expect(reads).not.toContain(OLD_SECRET);
    expect(reads).not.toContain(NEW_SECRET.slice(6));
  });

  it("gives up after three attempts and says so in the receipt", async () => {
    const rcv = await receiver({ fail_first: 10, retry_after: 0 });
    const sid = await hookSession({ url: rcv.url });
    const { turn_id } = await submitTurn(sid, "call it");
    const result = (await waitForTurnEnd(sid, turn_id)).find((e) => e.type === "tool.result");
    expect(result.payload).toMatchObject({ is_error: true, output: "HTTP 503: unavailable" });
    expect(result.payload.metadata.receipt).toMatchObject({ status: 503, attempts: 3 });
    expect((await rcv.requests()).map((r) => r.webhook["webhook-signature"])).toEqual([undefined, undefined, undefined]);
  });

  it("reads an answer sent with its Content-Length as a chunked one, and at most 1 MB of a longer one", async () => {
    const small = await receiver({ answer: { found: "ünïcode" }, length: true });
    const sid = await hookSession({ url: small.url });
    const { turn_id } = await submitTurn(sid, "call it");
    const result = (await waitForTurnEnd(sid, turn_id)).find((e) => e.type === "tool.result");
    expect(result.payload).toMatchObject({ is_error: false, output: { found: "ünïcode" } });
    const long = await receiver({ answer: "x".repeat(1_500_000), length: true });
    const other = await hookSession({ url: long.url });
    const turn = await submitTurn(other, "call it");
    const spilled = (await waitForTurnEnd(other, turn.turn_id)).find((e) => e.type === "output.spilled");
    // The first 1,000,000 bytes of the JSON string (not valid JSON cut there: kept as text), spilled whole.
    expect(spilled.payload.bytes).toBeGreaterThanOrEqual(1_000_000);
    expect(spilled.payload.bytes).toBeLessThan(1_000_100);
  });

  it("resends an idempotent webhook's call cut by a crash under the same key", async () => {
    const rcv = await receiver({ hang_on: [1] });
    const sid = await hookSession({ url: rcv.url, idempotent: true, secret: NEW_SECRET });
    const { turn_id } = await submitTurn(sid, "call it");
    const deadline = Date.now() + 5000;
    while ((await rcv.requests()).length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    await abortAllDurableObjects(); // the session object dies with the call in flight
    const log = await waitForTurnEnd(sid, turn_id);
    const requests = await rcv.requests();
    expect(requests.map((r) => r.answered)).toEqual(["hung", 200]);
    expect(requests[1]!.idempotency_key).toBe(requests[0]!.idempotency_key);
    expect(requests[1]!.webhook["webhook-id"]).toBe(requests[0]!.idempotency_key);
    expect(log.some((e) => e.type === "run.status" && e.payload.phase === "recovering")).toBe(true);
    const result = log.find((e) => e.type === "tool.result");
    expect(result.payload).toMatchObject({ is_error: false, metadata: { receipt: { idempotency_key: requests[0]!.idempotency_key, status: 200 } } });
  });

  it("keeps retrying a call that outlives an interrupt under the same key, and records its receipt late", async () => {
    const rcv = await receiver({ fail_first: 1, retry_after: 1 });
    const sid = await hookSession({ url: rcv.url });
    const { turn_id } = await submitTurn(sid, "call it");
    const deadline = Date.now() + 5000;
    while ((await rcv.requests()).length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    // The call waits out its Retry-After while the turn is interrupted.
    expect((await api("POST", `/v1/sessions/${sid}/interrupt`)).status).toBe(200);
    await waitForTurnEnd(sid, turn_id);
    const late = await waitForEvent(sid, (e) => e.type === "tool.result.late");
    const requests = await rcv.requests();
    expect(requests.map((r) => r.answered)).toEqual([503, 200]);
    expect(requests[1]!.idempotency_key).toBe(requests[0]!.idempotency_key);
    expect(late.payload).toMatchObject({
      turn_id,
      is_error: false,
      metadata: { receipt: { idempotency_key: requests[0]!.idempotency_key, status: 200, attempts: 2 } },
    });
  });

  it("reads the secrets of a stored agent as placeholders, and keeps them when the config is written back", async () => {
    const name = uniqueId("signed");
    const tool = { name: "hook", url: `${baseURL}/_receiver/x`, secret: NEW_SECRET, previous_secret: OLD_SECRET };
    const put = await api("PUT", `/v1/agents/${name}`, { model: "demo:fast", http_tools: [tool] });
    expect(put.status, JSON.stringify(put.body)).toBe(201);
    expect(put.body.http_tools[0]).toMatchObject({ secret: "[redacted]", previous_secret: "[redacted]" });
    // The rotation ends: the read config goes back without the previous secret, the current one kept.
    const { previous_secret: _, ...kept } = put.body.http_tools[0];
    const again = await api("PUT", `/v1/agents/${name}`, { ...put.body, http_tools: [kept] });
    expect(again.status, JSON.stringify(again.body)).toBe(200);
    expect(again.body.http_tools[0].secret).toBe("[redacted]");
    expect(again.body.http_tools[0].previous_secret).toBeUndefined();
    const refused = await api("PUT", `/v1/agents/${uniqueId("nothing-stored")}`, { model: "demo:fast", http_tools: [{ ...tool, secret: "[redacted]" }] });
    expect(refused.status).toBe(422);
    expect(refused.body.error.details[0].path).toBe("http_tools.0.secret");
  });
});
