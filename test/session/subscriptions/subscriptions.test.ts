// Outbound subscriptions through the public surface, against a local receiver (test/support/receiver.ts)
// that fails, hangs, and sees the runtime crash mid-request: every matching event arrives, in order, in
// signed batches of at most 100, each batch under one id however often it is resent.
import { abortAllDurableObjects } from "cloudflare:test";
import { describe, expect, it, vi } from "vitest";
import { api, events, submitTurn, waitForTurnEnd } from "../../support/api";
import { baseURL, script, uniqueId } from "../../support/fake-model";

const SECRET = "a-test-secret-of-some-length";

type Received = { signature: string; batch_id: string; body: string; answered: number | "hung" };

async function receiver(plan: { fail_first?: number; hang_on?: number[] } = {}): Promise<{ url: string; requests: () => Promise<Received[]> }> {
  const url = `${baseURL}/_receiver/${uniqueId("rcv")}`;
  await fetch(`${url}/plan`, { method: "PUT", body: JSON.stringify(plan) });
  return { url, requests: async () => (await fetch(`${url}/requests`)).json() as Promise<Received[]> };
}

async function session(steps: unknown[] = [{ text: "Done." }]): Promise<string> {
  const scriptId = uniqueId("subs");
  await script(scriptId, steps as never);
  const res = await api("POST", "/v1/sessions", { agent: { name: "watched", model: `openai-compatible:${scriptId}` } });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.session_id;
}

const subscribe = (sid: string, body: unknown) => api("POST", `/v1/sessions/${sid}/subscriptions`, body);
const list = async (sid: string) => (await api("GET", `/v1/sessions/${sid}/subscriptions`)).body.subscriptions as any[];

/** Polls the subscription until `done` holds for it. */
async function waitForSubscription(sid: string, done: (s: any) => boolean, timeoutMs = 10_000): Promise<any> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const sub = (await list(sid))[0];
    if (done(sub)) return sub;
    if (Date.now() > deadline) throw new Error(`subscription did not settle: ${JSON.stringify(sub)}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** Checks `t=<s>,v1=<hex>` independently of the runtime's code: HMAC-SHA256 of "<t>.<body>". */
async function signatureValid(header: string, body: string): Promise<boolean> {
  const { t, v1 } = Object.fromEntries(header.split(",").map((p) => p.split("=")));
  const key = await crypto.subtle.importKey("raw", new TextEncoder().encode(SECRET), { name: "HMAC", hash: "SHA-256" }, false, ["verify"]);
  const mac = Uint8Array.from((v1 as string).match(/../g) ?? [], (h) => Number.parseInt(h, 16));
  const fresh = Math.abs(Date.now() / 1000 - Number(t)) < 300;
  return fresh && (await crypto.subtle.verify("HMAC", key, mac, new TextEncoder().encode(`${t}.${body}`)));
}

/** The events the receiver accepted (2xx), each batch once, in the order they were accepted. */
async function accepted(requests: Received[]): Promise<any[]> {
  const out: any[] = [];
  const seen = new Set<string>();
  for (const r of requests) {
    expect(await signatureValid(r.signature, r.body), `signature of ${r.batch_id}`).toBe(true);
    const body = JSON.parse(r.body);
    expect(body.batch_id).toBe(r.batch_id);
    expect(body.events.length).toBeLessThanOrEqual(100);
    if (r.answered === 200 && !seen.has(r.batch_id)) {
      seen.add(r.batch_id);
      out.push(...body.events);
    }
  }
  return out;
}

describe("subscriptions", () => {
  it("delivers every matching event in order through failures and a timeout, signed, one id per batch", async () => {
    const rcv = await receiver({ fail_first: 2, hang_on: [3] });
    const sid = await session();
    const types = ["session.created", "turn.submitted", "turn.started", "model.completed", "turn.completed"];
    const created = await subscribe(sid, { url: rcv.url, types, secret: SECRET, after: 0 });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body).toMatchObject({ url: rcv.url, types, format: "events", cursor: 0, status: "active", secret: SECRET });
    const { turn_id } = await submitTurn(sid, "hello");
    const log = await waitForTurnEnd(sid, turn_id);
    const last = log.at(-1).sequence;
    const sub = await waitForSubscription(sid, (s) => s.cursor === last);
    expect(sub).toMatchObject({ status: "active", attempts: 0, last_error: null });
    expect(sub.secret).toBeUndefined();

    const requests = await rcv.requests();
    expect(requests.slice(0, 4).map((r) => r.answered)).toEqual([503, 503, "hung", 200]);
    // The failed and timed-out attempts resent the same batch under the same id.
    expect(new Set(requests.slice(0, 4).map((r) => r.batch_id)).size).toBe(1);
    const got = await accepted(requests);
    const matching = log.filter((e) => types.includes(e.type));
    expect(got.map((e) => e.sequence)).toEqual(matching.map((e) => e.sequence));
    expect(got).toEqual(matching);
    expect(JSON.parse(requests[0]!.body)).toMatchObject({ subscription_id: sub.subscription_id, session_id: sid });
  });

  it("sends a long turn in batches of at most 100 events, from now when no after is given", async () => {
    const rcv = await receiver();
    const sid = await session([{ text: "x".repeat(300), chunk_size: 1 }]);
    expect((await subscribe(sid, { url: rcv.url, secret: SECRET })).body.cursor).toBe(1);
    const { turn_id } = await submitTurn(sid, "talk");
    const log = await waitForTurnEnd(sid, turn_id);
    await waitForSubscription(sid, (s) => s.cursor === log.at(-1).sequence);
    const requests = await rcv.requests();
    expect(requests.length).toBeGreaterThanOrEqual(3);
    expect(await accepted(requests)).toEqual(log.slice(1));
  });

  it("is marked failing after the maximum attempts, with its last error, and resumes when re-enabled", async () => {
    const rcv = await receiver({ fail_first: 5 });
    const sid = await session();
    await subscribe(sid, { url: rcv.url, secret: SECRET, after: 0 });
    const failing = await waitForSubscription(sid, (s) => s.status === "failing");
    expect(failing).toMatchObject({ attempts: 5, last_error: "HTTP 503", cursor: 0 });
    expect((await rcv.requests()).length).toBe(5);

    const { turn_id } = await submitTurn(sid, "hello");
    const log = await waitForTurnEnd(sid, turn_id);
    const patched = await api("PATCH", `/v1/sessions/${sid}/subscriptions/${failing.subscription_id}`, { enabled: true });
    expect(patched.status).toBe(200);
    await waitForSubscription(sid, (s) => s.status === "active" && s.cursor === log.at(-1).sequence);
    expect(await accepted(await rcv.requests())).toEqual(await events(sid));
  });

  it("resends the same batch id after a crash between sending and advancing the cursor", async () => {
    const rcv = await receiver({ hang_on: [1] });
    const sid = await session();
    await subscribe(sid, { url: rcv.url, secret: SECRET, after: 0 });
    const deadline = Date.now() + 5000;
    while ((await rcv.requests()).length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    await abortAllDurableObjects();
    // The next request starts the object again; its delivery goes on with the stored batch.
    await waitForSubscription(sid, (s) => s.cursor === 1);
    const requests = await rcv.requests();
    expect(requests.map((r) => r.answered)).toEqual(["hung", 200]);
    expect(requests[1]!.batch_id).toBe(requests[0]!.batch_id);
    expect(await accepted(requests)).toEqual(await events(sid));
  });

  it("gives every session of an agent the agent's subscriptions, from the start of its log", async () => {
    const rcv = await receiver();
    const scriptId = uniqueId("subs");
    await script(scriptId, [{ text: "One." }, { text: "Two." }]);
    const name = uniqueId("watched-agent");
    const put = await api("PUT", `/v1/agents/${name}`, {
      name,
      model: `openai-compatible:${scriptId}`,
      subscriptions: [{ url: rcv.url, secret: SECRET, types: ["session.created", "turn.completed"] }],
    });
    expect(put.status, JSON.stringify(put.body)).toBeLessThan(300);
    const sids: string[] = [];
    for (const _ of [1, 2]) {
      const sid = (await api("POST", "/v1/sessions", { agent: name })).body.session_id;
      const { turn_id } = await submitTurn(sid, "hi");
      const log = await waitForTurnEnd(sid, turn_id);
      await waitForSubscription(sid, (s) => s?.cursor === log.at(-1).sequence);
      sids.push(sid);
    }
    const got = await accepted(await rcv.requests());
    expect(got.map((e) => [e.session_id, e.type])).toEqual(
      sids.flatMap((sid) => [
        [sid, "session.created"],
        [sid, "turn.completed"],
      ]),
    );
    const bad = await api("PUT", `/v1/agents/${name}`, {
      name,
      model: `openai-compatible:${scriptId}`,
      subscriptions: [{ url: "https://elsewhere.example/" }],
    });
    expect(bad.status).toBe(422);
    expect(bad.body.error.details.map((d: any) => d.path)).toContain("subscriptions.0.url");
  });

  it("refuses URLs off the allowlist, unknown types and cursors past the log; read keys may not subscribe", async () => {
    const sid = await session();
    const cases: [unknown, string][] = [
      [{ url: "https://elsewhere.example/hook" }, "url"],
      [{ url: `${baseURL}/_receiver/x`, types: ["no.such.type"] }, "types.0"],
      [{ url: `${baseURL}/_receiver/x`, after: 99 }, "after"],
      [{ url: `${baseURL}/_receiver/x`, secret: "short" }, "secret"],
      [{ url: `${baseURL}/_receiver/x`, format: "xml" }, "format"],
    ];
    for (const [body, field] of cases) {
      const res = await subscribe(sid, body);
      expect(res.status, JSON.stringify(body)).toBe(422);
      expect(res.body.error.details.map((d: any) => d.path)).toContain(field);
    }
    const read = await api("POST", `/v1/sessions/${sid}/subscriptions`, { url: `${baseURL}/_receiver/x` }, { authorization: "Bearer read-key" });
    expect(read.status).toBe(403);
    expect(await list(sid)).toEqual([]);
  });

  it("stops a delivery that was on its way when the session is erased, without touching the dropped tables", async () => {
    const errors = vi.spyOn(console, "error");
    const rcv = await receiver({ hang_on: [1] });
    const sid = await session();
    expect((await subscribe(sid, { url: rcv.url, secret: SECRET, after: 0 })).status).toBe(201);
    const deadline = Date.now() + 10_000;
    while ((await rcv.requests()).length === 0) {
      if (Date.now() > deadline) throw new Error("the receiver got no request");
      await new Promise((r) => setTimeout(r, 10));
    }
    expect((await api("DELETE", `/v1/sessions/${sid}`)).status).toBe(204);
    // The hung request times out (SUBSCRIPTION_TIMEOUT_MS is 500 here) after the session is gone.
    await new Promise((r) => setTimeout(r, 1000));
    expect(errors.mock.calls.map((c) => String(c[0]))).not.toContain("subscription delivery failed");
    expect(await rcv.requests()).toHaveLength(1);
    errors.mockRestore();
  });
});
