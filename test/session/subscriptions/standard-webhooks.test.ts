// Subscription deliveries signed per Standard Webhooks, checked by the `standardwebhooks` package: a generated
// `whsec_` secret, a secret given before the runtime spoke Standard Webhooks (its bytes, `format: "raw"`), and a
// rotation (PATCH {secret}: both secrets sign during the overlap, only the new one after it).
import { Webhook } from "standardwebhooks";
import { describe, expect, it } from "vitest";
import { api, submitTurn, waitForTurnEnd } from "../../support/api";
import { baseURL, script, uniqueId } from "../../support/fake-model";

type Received = { signature: string; batch_id: string; webhook: Record<string, string>; body: string; answered: number | "hung" };

async function watchedSession(turns: number): Promise<{ sid: string; url: string; requests: () => Promise<Received[]> }> {
  const url = `${baseURL}/_receiver/${uniqueId("std")}`;
  await fetch(`${url}/plan`, { method: "PUT", body: JSON.stringify({}) });
  const scriptId = uniqueId("std");
  await script(
    scriptId,
    Array.from({ length: turns }, (_, i) => ({ text: `Answer ${i}.` })),
  );
  const res = await api("POST", "/v1/sessions", { agent: { name: "watched", model: `openai-compatible:${scriptId}` } });
  return { sid: res.body.session_id, url, requests: async () => (await fetch(`${url}/requests`)).json() as Promise<Received[]> };
}

/** Runs a turn and waits until the subscription has delivered all of it; answers the requests it took. */
async function deliveredTurn(sid: string, requests: () => Promise<Received[]>, since: number): Promise<Received[]> {
  const { turn_id } = await submitTurn(sid, "hello");
  const last = (await waitForTurnEnd(sid, turn_id)).at(-1).sequence;
  const deadline = Date.now() + 10_000;
  while ((await api("GET", `/v1/sessions/${sid}/subscriptions`)).body.subscriptions[0].cursor !== last) {
    if (Date.now() > deadline) throw new Error("the turn was not delivered");
    await new Promise((r) => setTimeout(r, 25));
  }
  return (await requests()).slice(since);
}

const verifies = (webhook: Webhook, r: Received) => {
  try {
    webhook.verify(r.body, r.webhook);
    return true;
  } catch {
    return false;
  }
};

describe("Standard Webhooks signatures of deliveries", () => {
  it("signs with a generated whsec_ secret, and with both secrets while a rotation overlaps", async () => {
    const { sid, url, requests } = await watchedSession(3);
    const created = await api("POST", `/v1/sessions/${sid}/subscriptions`, { url });
    expect(created.status).toBe(201);
    const first: string = created.body.secret;
    expect(first).toMatch(/^whsec_[A-Za-z0-9+/]{32}$/);
    const before = await deliveredTurn(sid, requests, 0);
    expect(before.length).toBeGreaterThan(0);
    for (const r of before) {
      expect(r.webhook["webhook-id"]).toBe(r.batch_id);
      expect(new Webhook(first).verify(r.body, r.webhook)).toMatchObject({ session_id: sid, batch_id: r.batch_id });
      expect(r.signature).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/); // the deprecated header, still sent
    }

    const second = `whsec_${btoa("the second key, 24 bytes")}`;
    const rotated = await api("PATCH", `/v1/sessions/${sid}/subscriptions/${created.body.subscription_id}`, { secret: second });
    expect(rotated.status).toBe(200);
    expect(rotated.body.previous_secret_until).toBeGreaterThan(Date.now() + 86_000_000);
    expect(rotated.body.secret).toBeUndefined();
    const during = await deliveredTurn(sid, requests, before.length);
    for (const r of during) {
      expect(r.webhook["webhook-signature"]!.split(" ")).toHaveLength(2);
      expect([verifies(new Webhook(first), r), verifies(new Webhook(second), r)]).toEqual([true, true]);
    }

    const third = `whsec_${btoa("the third key of 24 byte")}`;
    const ended = await api("PATCH", `/v1/sessions/${sid}/subscriptions/${created.body.subscription_id}`, { secret: third, overlap_s: 0 });
    expect(ended.body.previous_secret_until).toBeNull();
    const after = await deliveredTurn(sid, requests, before.length + during.length);
    for (const r of after) {
      expect(r.webhook["webhook-signature"]!.split(" ")).toHaveLength(1);
      expect([verifies(new Webhook(second), r), verifies(new Webhook(third), r)]).toEqual([false, true]);
    }
  });

  it("signs with the bytes of a secret that is not whsec_<base64>, as the package's raw format reads it", async () => {
    const { sid, url, requests } = await watchedSession(1);
    const secret = "a-test-secret-of-some-length";
    expect((await api("POST", `/v1/sessions/${sid}/subscriptions`, { url, secret, after: 0 })).status).toBe(201);
    const delivered = await deliveredTurn(sid, requests, 0);
    for (const r of delivered) expect(verifies(new Webhook(secret, { format: "raw" }), r)).toBe(true);
  });

  it("refuses a rotation without a secret's worth of fields, naming them", async () => {
    const { sid, url } = await watchedSession(0);
    const { subscription_id } = (await api("POST", `/v1/sessions/${sid}/subscriptions`, { url })).body;
    const path = `/v1/sessions/${sid}/subscriptions/${subscription_id}`;
    const cases: [unknown, string][] = [
      [{}, ""],
      [{ overlap_s: 60 }, "overlap_s"],
      [{ secret: "short" }, "secret"],
      [{ secret: `whsec_${btoa("the second key, 24 bytes")}`, overlap_s: -1 }, "overlap_s"],
    ];
    for (const [body, field] of cases) {
      const res = await api("PATCH", path, body);
      expect(res.status, JSON.stringify(body)).toBe(422);
      expect(res.body.error.details.map((d: any) => d.path)).toContain(field);
    }
    expect((await api("GET", `/v1/sessions/${sid}/subscriptions`)).body.subscriptions[0].previous_secret_until).toBeNull();
  });
});
