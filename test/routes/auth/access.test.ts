// Access per tenant through the public surface: every declared operation with each key role and token kind,
// browser tokens bound to a session or an agent, their failures, command frames under a read-only grant, and
// the socket cap.
import { SELF } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { OPERATIONS } from "../../../src/protocol/operations";
import { allows, type Principal, TOKEN_SCOPES, type TokenScope } from "../../../src/protocol/permissions";
import { api, apiAs, createAgent, createSession, submitTurn, waitForTurnEnd } from "../../support/api";
import { openWs, until, wsFetch } from "../../support/ws";

const BASE = "https://runtime.test";
const KEYS = { admin: "test-key", operator: "operator-key", read: "read-key" } as const;

async function token(body: Record<string, unknown>, key: string = KEYS.admin): Promise<string> {
  const res = await apiAs("POST", "/v1/tokens", key, { ttl_s: 600, ...body });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.token;
}

/** Every declared operation called by `credential` (no body; other path ids unknown): 403 exactly where `principal` is not allowed. */
async function walk(principal: Principal, credential: string, sid: string): Promise<number> {
  let checked = 0;
  for (const op of OPERATIONS) {
    if (op.permission === "public") continue;
    const path = op.path.replace("{sid}", sid).replace(/\{[^}]+\}/g, "x");
    const res = await apiAs(op.method.toUpperCase(), path, credential);
    const who = `${principal.kind === "key" ? principal.role : `token(${principal.session_id ? "session" : "agent"}; ${principal.scopes})`} ${op.operationId}`;
    if (allows(principal, op.permission)) expect(res.status, who).not.toBe(403);
    else expect(res.body?.error?.code === "forbidden" && res.status === 403, `${who} -> ${res.status}`).toBe(true);
    checked += 1;
  }
  return checked;
}

describe("key roles", () => {
  it("/openapi.json describes exactly the declared operations", async () => {
    const doc = (await (await SELF.fetch(`${BASE}/openapi.json`)).json()) as { paths: Record<string, Record<string, { operationId: string }>> };
    const described = Object.entries(doc.paths).flatMap(([path, ops]) => Object.entries(ops).map(([method, op]) => `${method} ${path} ${op.operationId}`));
    expect(described.sort()).toEqual(OPERATIONS.map((op) => `${op.method} ${op.path} ${op.operationId}`).sort());
  });

  it("every declared operation allows or refuses (403) each role as its permission says", async () => {
    for (const [role, key] of Object.entries(KEYS) as [keyof typeof KEYS, string][]) {
      // A session of its own per role: the walk erases it.
      const sid = await createSession({ name: `roles-${role}`, model: "demo:fast" });
      expect(await walk({ kind: "key", id: key, role }, key, sid)).toBeGreaterThan(30);
    }
  });

  it("a read key reads and streams but cannot submit, even as a WebSocket command frame", async () => {
    const sid = await createSession({ name: "read-only", model: "demo:fast" });
    expect((await apiAs("GET", `/v1/sessions/${sid}/thread`, KEYS.read)).status).toBe(200);
    expect((await apiAs("POST", `/v1/sessions/${sid}/turns`, KEYS.read, { input: "hi" })).status).toBe(403);
    const ws = await openWs(sid, "", { authorization: `Bearer ${KEYS.read}` });
    const reply = await ws.command({ type: "submit_turn", input: "hi", request_id: 1 });
    expect(reply).toMatchObject({ ok: false, error: { code: "forbidden" } });
    await ws.close();
    expect((await api("GET", `/v1/sessions/${sid}/thread`)).body.last_sequence).toBe(1);
  });
});

describe("browser tokens", () => {
  it("every declared operation allows or refuses (403) session-bound, agent-bound and narrowed tokens as their scopes say", async () => {
    await createAgent({ name: "tok-walk", model: "demo:fast" });
    const bound = (subject: string, binding: { session_id: string } | { agent: string }, scopes: TokenScope[]) => ({
      kind: "token" as const,
      id: "",
      subject,
      session_id: "session_id" in binding ? binding.session_id : null,
      agent: "agent" in binding ? binding.agent : null,
      scopes,
      expires_at: null,
    });
    const sessionSid = await createSession({ name: "tok-walk-session", model: "demo:fast" });
    const sessionScopes = TOKEN_SCOPES.filter((s) => s !== "create");
    const bySession = bound("walker", { session_id: sessionSid }, sessionScopes);
    expect(await walk(bySession, await token({ subject: "walker", session_id: sessionSid }), sessionSid)).toBeGreaterThan(30);

    const agentToken = await token({ subject: "walker", agent: "tok-walk" });
    const owned = (await apiAs("POST", "/v1/sessions", agentToken, { agent: "tok-walk" })).body.session_id;
    expect(await walk(bound("walker", { agent: "tok-walk" }, [...TOKEN_SCOPES]), agentToken, owned)).toBeGreaterThan(30);

    const readSid = await createSession({ name: "tok-walk-read", model: "demo:fast" });
    const readOnly = await token({ subject: "viewer", session_id: readSid, scopes: ["read"] });
    expect(await walk(bound("viewer", { session_id: readSid }, ["read"]), readOnly, readSid)).toBeGreaterThan(30);
  }, 60_000); // three tokens over every declared operation: over 20 s on a loaded machine

  it("a token bound to a session reads, submits and interrupts there, and nothing else", async () => {
    const sid = await createSession({ name: "tok-session", model: "demo:fast" });
    const other = await createSession({ name: "tok-other", model: "demo:fast" });
    const t = await token({ subject: "user-1", session_id: sid });
    const { turn_id } = (await apiAs("POST", `/v1/sessions/${sid}/turns`, t, { input: "hello" })).body;
    expect((await waitForTurnEnd(sid, turn_id)).at(-1).type).toBe("turn.completed");
    expect((await apiAs("GET", `/v1/sessions/${sid}/thread`, t)).status).toBe(200);
    expect((await apiAs("POST", `/v1/sessions/${sid}/interrupt`, t, {})).body).toEqual({ interrupted: false, turn_id: null });
    // As access_token on the WebSocket, where a browser cannot set headers.
    const ws = await openWs(sid, `access_token=${t}`, {});
    await until(() => ws.events.length >= 1, "replay");
    await ws.close();
    for (const [method, path] of [
      ["GET", `/v1/sessions/${other}/thread`],
      ["POST", "/v1/sessions"],
      ["GET", "/v1/agents"],
      ["DELETE", `/v1/sessions/${sid}/queue/trn_x`],
    ] as const) {
      const res = await apiAs(method, path, t, method === "POST" ? { agent: "tok-session" } : undefined);
      expect(res.status, `${method} ${path}`).toBe(403);
      expect(res.body.error.code).toBe("forbidden");
    }
  });

  it("a token bound to an agent opens sessions of that agent owned by its subject, and only reaches those", async () => {
    await createAgent({ name: "tok-agent", model: "demo:fast" });
    await createAgent({ name: "tok-elsewhere", model: "demo:fast" });
    const alice = await token({ subject: "alice", agent: "tok-agent" });
    const bob = await token({ subject: "bob", agent: "tok-agent" });
    const created = await apiAs("POST", "/v1/sessions", alice, { agent: "tok-agent" });
    expect(created.status).toBe(201);
    const sid = created.body.session_id;
    expect((await api("GET", `/v1/sessions/${sid}`)).body.owner).toBe("alice");
    expect((await apiAs("GET", `/v1/sessions/${sid}/thread`, alice)).status).toBe(200);
    expect((await apiAs("GET", `/v1/sessions/${sid}/thread`, bob)).status).toBe(403);
    expect((await apiAs("POST", "/v1/sessions", alice, { agent: "tok-elsewhere" })).status).toBe(403);
    expect((await apiAs("POST", "/v1/sessions", alice, { agent: { name: "inline", model: "demo:fast" } })).status).toBe(403);
  });

  it("a token bound to an agent reaches none of its subject's sessions of another agent, on any route", async () => {
    await createAgent({ name: "tok-mine", model: "demo:fast" });
    await createAgent({ name: "tok-theirs", model: "demo:fast" });
    const mine = await token({ subject: "dana", agent: "tok-mine" });
    const theirs = await token({ subject: "dana", agent: "tok-theirs" });
    const sid = (await apiAs("POST", "/v1/sessions", theirs, { agent: "tok-theirs" })).body.session_id;
    const { turn_id } = (await apiAs("POST", `/v1/sessions/${sid}/turns`, theirs, { input: "hello" })).body;
    await waitForTurnEnd(sid, turn_id);
    const before = (await api("GET", `/v1/sessions/${sid}/events?limit=1000`)).body.events;
    const sessionsBefore = (await api("GET", "/v1/sessions?owner=dana")).body.sessions;
    const chat = { id: sid, messages: [{ id: "m1", role: "user", parts: [{ type: "text", text: "hi" }] }], trigger: "submit-message" };
    for (const [method, path, body] of [
      ["GET", `/v1/sessions/${sid}`],
      ["GET", `/v1/sessions/${sid}/thread`],
      ["GET", `/v1/sessions/${sid}/events`],
      ["GET", `/v1/sessions/${sid}/export`],
      ["GET", `/v1/sessions/${sid}/messages`],
      ["GET", `/v1/sessions/${sid}/tools`],
      ["GET", `/v1/sessions/${sid}/turns/${turn_id}/tree`],
      ["GET", `/v1/sessions/${sid}/schedules`],
      ["GET", `/v1/chat/${sid}/stream`],
      ["POST", `/v1/sessions/${sid}/turns`, { input: "mine now" }],
      ["POST", `/v1/sessions/${sid}/messages`, { content: "mine now" }],
      ["POST", `/v1/sessions/${sid}/interrupt`, {}],
      ["POST", `/v1/sessions/${sid}/schedules`, { input: "later", every_s: 3600 }],
      ["POST", `/v1/sessions/${sid}/fork`, { at_sequence: 1 }],
      ["POST", `/v1/sessions/${sid}/turns/${turn_id}/replay`, {}],
      ["POST", "/v1/chat", chat],
    ] as const) {
      const res = await apiAs(method, path, mine, body);
      expect(res.status, `${method} ${path}`).toBe(403);
      expect(res.body.error.code).toBe("forbidden");
    }
    const socket = await wsFetch(sid, `access_token=${mine}`, {});
    expect(socket.status).toBe(403);
    await socket.text();
    expect((await api("GET", `/v1/sessions/${sid}/events?limit=1000`)).body.events).toEqual(before);
    expect((await api("GET", "/v1/sessions?owner=dana")).body.sessions).toEqual(sessionsBefore);
    // Its own agent's token still reaches it.
    expect((await apiAs("GET", `/v1/sessions/${sid}/thread`, theirs)).status).toBe(200);
  });

  it("a token creates and deletes no schedules (they would outlive it); it may list them", async () => {
    await createAgent({ name: "tok-schedules", model: "demo:fast" });
    const sid = await createSession("tok-schedules");
    const made = await api("POST", `/v1/sessions/${sid}/schedules`, { input: "by the key", every_s: 3600 });
    expect(made.status).toBe(201);
    const before = (await api("GET", `/v1/sessions/${sid}/events`)).body.events;
    for (const t of [await token({ subject: "u", session_id: sid, ttl_s: 60 }), await token({ subject: "u", agent: "tok-schedules" })]) {
      const res = await apiAs("POST", `/v1/sessions/${sid}/schedules`, t, { input: "every minute", every_s: 60 });
      expect(res.status).toBe(403);
      expect(res.body.error).toMatchObject({ code: "forbidden", message: expect.stringContaining("API key") });
      expect((await apiAs("DELETE", `/v1/sessions/${sid}/schedules/${made.body.schedule_id}`, t)).status).toBe(403);
    }
    const listed = await apiAs("GET", `/v1/sessions/${sid}/schedules`, await token({ subject: "u", session_id: sid }));
    expect(listed.body.schedules.map((x: any) => x.schedule_id)).toEqual([made.body.schedule_id]);
    expect((await api("GET", `/v1/sessions/${sid}/events`)).body.events).toEqual(before);
  });

  it("scopes narrow a token; expired, tampered and wrongly signed tokens are 401 with their own codes", async () => {
    const sid = await createSession({ name: "tok-scopes", model: "demo:fast" });
    const readOnly = await token({ subject: "viewer", session_id: sid, scopes: ["read"] });
    expect((await apiAs("GET", `/v1/sessions/${sid}/thread`, readOnly)).status).toBe(200);
    expect((await apiAs("POST", `/v1/sessions/${sid}/turns`, readOnly, { input: "x" })).body.error.code).toBe("forbidden");

    const good = await token({ subject: "u", session_id: sid });
    const [h, p, s] = good.split(".") as [string, string, string];
    const claims = JSON.parse(atob(p.replace(/-/g, "+").replace(/_/g, "/")));
    const forged = `${h}.${btoa(JSON.stringify({ ...claims, sid: "ses_ffffffffffffffffffffffff" }))
      .replace(/=+$/, "")
      .replace(/\+/g, "-")
      .replace(/\//g, "_")}.${s}`;
    expect((await apiAs("GET", `/v1/sessions/${sid}/thread`, forged)).body.error.code).toBe("invalid_token");
    const expiredClaims = btoa(JSON.stringify({ ...claims, exp: 1 }))
      .replace(/=+$/, "")
      .replace(/\+/g, "-")
      .replace(/\//g, "_");
    const key = await crypto.subtle.importKey("raw", new TextEncoder().encode("test-signing-secret"), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
    const sig = new Uint8Array(await crypto.subtle.sign("HMAC", key, new TextEncoder().encode(`${h}.${expiredClaims}`)));
    const expired = `${h}.${expiredClaims}.${btoa(String.fromCharCode(...sig))
      .replace(/=+$/, "")
      .replace(/\+/g, "-")
      .replace(/\//g, "_")}`;
    const res = await apiAs("GET", `/v1/sessions/${sid}/thread`, expired);
    expect(res.status).toBe(401);
    expect(res.body.error.code).toBe("token_expired");
  });

  it("only admin and operator keys issue tokens; bad requests are 422 naming the field", async () => {
    const sid = await createSession({ name: "tok-issue", model: "demo:fast" });
    expect((await apiAs("POST", "/v1/tokens", KEYS.read, { subject: "x", session_id: sid, ttl_s: 600 })).status).toBe(403);
    expect((await apiAs("POST", "/v1/tokens", KEYS.operator, { subject: "x", session_id: sid, ttl_s: 600 })).status).toBe(201);
    const both = await apiAs("POST", "/v1/tokens", KEYS.admin, { subject: "x", session_id: sid, agent: "a", ttl_s: 600 });
    expect(both.status).toBe(422);
    expect(both.body.error.details[0].path).toBe("session_id");
    const ttl = await apiAs("POST", "/v1/tokens", KEYS.admin, { subject: "x", session_id: sid, ttl_s: 999_999 });
    expect(ttl.body.error.details[0].path).toBe("ttl_s");
    expect((await apiAs("POST", "/v1/tokens", KEYS.admin, { subject: "x", session_id: "ses_ffffffffffffffffffffffff", ttl_s: 600 })).status).toBe(404);
  });
});

describe("socket cap", () => {
  it("closes a socket over MAX_SOCKETS_PER_SESSION (10 here) with code 1013", async () => {
    const sid = await createSession({ name: "socket-cap", model: "demo:fast" });
    const sockets = [];
    for (let i = 0; i < 10; i++) sockets.push(await openWs(sid));
    const res = await wsFetch(sid);
    const extra = res.webSocket!;
    const closed = new Promise<number>((resolve) => extra.addEventListener("close", (e) => resolve(e.code)));
    extra.accept();
    expect(await closed).toBe(1013);
    for (const ws of sockets) await ws.close();
    await submitTurn(sid, "still works");
  });
});
