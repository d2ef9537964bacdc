// The HTTP surface: auth, the error envelope for every error code, the agent registry, sessions, OpenAPI.
import { SELF } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { AGENT_DEFAULTS, api, createAgent, createSession, KEY } from "../support/api";
import { baseURL } from "../support/fake-model";

describe("auth", () => {
  it("answers /healthz without a key", async () => {
    const res = await SELF.fetch("https://runtime.test/healthz");
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ ok: true });
  });

  it("refuses /v1 without a key, with a wrong key, and with access_token on a JSON route", async () => {
    for (const headers of [{}, { authorization: "Bearer nope" }, { authorization: "Basic dGVzdA==" }] as Record<string, string>[]) {
      const res = await SELF.fetch("https://runtime.test/v1/agents", { headers });
      expect(res.status).toBe(401);
      expect(await res.json()).toEqual({ error: { code: "unauthorized", message: "Missing or invalid API key" } });
    }
    const res = await SELF.fetch(`https://runtime.test/v1/agents?access_token=${KEY}`);
    expect(res.status).toBe(401);
  });

  it("accepts every configured key", async () => {
    for (const key of ["test-key", "second-key"]) {
      const res = await SELF.fetch("https://runtime.test/v1/agents", { headers: { authorization: `Bearer ${key}` } });
      expect(res.status).toBe(200);
    }
  });
});

describe("errors", () => {
  it("400 for malformed JSON and 415 for a non-JSON content type, changing nothing", async () => {
    const bad = await api("PUT", "/v1/agents/broken", "{not json");
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe("malformed_body");
    const form = await api("PUT", "/v1/agents/broken", "name=x", { "content-type": "application/x-www-form-urlencoded" });
    expect(form.status).toBe(415);
    expect(form.body.error).toEqual({
      code: "unsupported_media_type",
      message: "Content-Type must be application/json (or application/<type>+json) for a request with a body",
    });
    expect((await api("GET", "/v1/agents/broken")).status).toBe(404);
  });

  it("404 for unknown agents, sessions, turns and routes", async () => {
    const agent = await api("GET", "/v1/agents/nobody");
    expect(agent.status).toBe(404);
    expect(agent.body).toEqual({ error: { code: "not_found", message: "Agent 'nobody' was not found" } });
    const session = await api("GET", "/v1/sessions/ses_000000000000000000000000");
    expect(session.status).toBe(404);
    expect(session.body.error.code).toBe("not_found");
    expect((await api("GET", "/v1/sessions/not-a-session/thread")).status).toBe(404);
    expect((await api("POST", "/v1/sessions", { agent: "nobody" })).body.error.message).toBe("Agent 'nobody' was not found");
    await createAgent({ name: "errs", model: "demo:x" });
    const sid = await createSession("errs");
    const turn = await api("DELETE", `/v1/sessions/${sid}/queue/trn_missing`);
    expect(turn.status).toBe(404);
    expect(turn.body.error.message).toBe("Turn 'trn_missing' was not found");
    const route = await api("GET", "/v1/nothing-here");
    expect(route.status).toBe(404);
    expect(route.body.error.code).toBe("not_found");
  });

  it("413 for a body over 1 MiB", async () => {
    const res = await api("PUT", "/v1/agents/big", { name: "big", model: "demo:x", instructions: "x".repeat(1_100_000) });
    expect(res.status).toBe(413);
    expect(res.body.error.code).toBe("body_too_large");
    expect((await api("GET", "/v1/agents/big")).status).toBe(404);
  });

  it("422 lists every failing field with its reason", async () => {
    const res = await api("PUT", "/v1/agents/bad", {
      model: "nope",
      max_steps: 0,
      temperature: 3,
      tools: ["calculator", "calculator", "teleport"],
      surprise: true,
    });
    expect(res.status).toBe(422);
    expect(res.body.error.code).toBe("validation_failed");
    const paths = res.body.error.details.map((d: { path: string }) => d.path);
    expect(paths).toEqual(expect.arrayContaining(["model", "max_steps", "temperature"]));
    expect(res.body.error.details.every((d: { reason: string }) => typeof d.reason === "string" && d.reason.length > 0)).toBe(true);
    expect(res.body.error.message).toContain("max_steps");
    // The deployment checks run once the JSON itself is valid.
    const tools = await api("PUT", "/v1/agents/bad", { model: "demo:x", tools: ["calculator", "calculator", "teleport"] });
    expect(tools.status).toBe(422);
    expect(tools.body.error.details).toEqual([
      { path: "tools.1", reason: 'duplicate tool name "calculator"' },
      { path: "tools.2", reason: 'unknown tool "teleport"' },
    ]);
    expect((await api("GET", "/v1/agents/bad")).status).toBe(404);
  });
});

describe("agent registry", () => {
  it("PUT creates (201) then replaces (200); GET round-trips with defaults; DELETE removes", async () => {
    const created = await api("PUT", "/v1/agents/roundtrip", { model: "demo:x", instructions: "Be brief.", tools: ["clock"] });
    expect(created.status).toBe(201);
    const expected = { ...AGENT_DEFAULTS, name: "roundtrip", model: "demo:x", instructions: "Be brief.", tools: ["clock"] };
    expect(created.body).toEqual(expected);
    expect((await api("GET", "/v1/agents/roundtrip")).body).toEqual(expected);
    const replaced = await api("PUT", "/v1/agents/roundtrip", { ...expected, max_steps: 3 });
    expect(replaced.status).toBe(200);
    expect((await api("GET", "/v1/agents/roundtrip")).body.max_steps).toBe(3);
    const list = await api("GET", "/v1/agents");
    expect(list.body.agents.map((a: { name: string }) => a.name)).toContain("roundtrip");
    expect((await api("DELETE", "/v1/agents/roundtrip")).body).toEqual({ deleted: true, name: "roundtrip" });
    expect((await api("DELETE", "/v1/agents/roundtrip")).status).toBe(404);
  });

  it("refuses a body name other than the path name, and a bad path name", async () => {
    const res = await api("PUT", "/v1/agents/alpha", { name: "beta", model: "demo:x" });
    expect(res.status).toBe(422);
    expect(res.body.error.details).toEqual([{ path: "name", reason: 'must equal the name in the path ("alpha")' }]);
    const bad = await api("PUT", "/v1/agents/has%20space", { model: "demo:x" });
    expect(bad.status).toBe(422);
    expect(bad.body.error.details[0].path).toBe("name");
  });

  it("refuses an unconfigured provider at save time (no OPENAI_API_KEY here), including the default model", async () => {
    for (const body of [{ model: "openai:gpt-4o" }, {}]) {
      const res = await api("PUT", "/v1/agents/noprov", body);
      expect(res.status).toBe(422);
      expect(res.body.error.details).toEqual([
        { path: "model", reason: 'provider "openai" is not configured in this deployment: set the OPENAI_API_KEY secret' },
      ]);
    }
    expect((await api("PUT", "/v1/agents/noprov", { model: "workers-ai:@cf/meta/llama" })).status).toBe(422);
    expect((await api("PUT", "/v1/agents/noprov", { model: "openai-compatible:local" })).status).toBe(201);
  });

  it("checks HTTP tool URLs against TOOL_URL_ALLOWLIST and names against built-ins", async () => {
    const res = await api("PUT", "/v1/agents/hooks", {
      model: "demo:x",
      http_tools: [
        { name: "outside", url: "https://evil.example/hook" },
        { name: "clock", url: `${allowlisted()}/hook` },
      ],
    });
    expect(res.status).toBe(422);
    expect(res.body.error.details).toEqual([
      { path: "http_tools.0.url", reason: "is not under any TOOL_URL_ALLOWLIST prefix" },
      { path: "http_tools.1.name", reason: '"clock" clashes with a built-in tool' },
    ]);
    const ok = await api("PUT", "/v1/agents/hooks", { model: "demo:x", http_tools: [{ name: "echo", url: `${allowlisted()}/hook` }] });
    expect(ok.status).toBe(201);
    expect(ok.body.http_tools[0]).toEqual({
      name: "echo",
      description: "",
      parameters: { type: "object", properties: {} },
      url: `${allowlisted()}/hook`,
      permission_class: "network",
      parallel_safe: true,
      timeout_ms: 10000,
    });
  });
});

describe("sessions", () => {
  it("creates a session from a registered agent and from an inline config", async () => {
    await createAgent({ name: "sess", model: "demo:x", tools: ["calculator"] });
    const sid = await createSession("sess");
    const snap = await api("GET", `/v1/sessions/${sid}`);
    expect(snap.status).toBe(200);
    expect(snap.body).toMatchObject({ session_id: sid, status: "idle", last_sequence: 1, turns: [], agent: { name: "sess", tools: ["calculator"] } });
    expect(snap.body.threads).toEqual([{ thread_id: expect.stringMatching(/^thr_/), status: "idle", active_turn_id: null }]);

    const inline = await api("POST", "/v1/sessions", { agent: { name: "inline", model: "demo:y" }, metadata: { user: "u1" } });
    expect(inline.status).toBe(201);
    // An inline config is no registered agent's version.
    expect(inline.body).toEqual({ session_id: expect.stringMatching(/^ses_/), thread_id: expect.stringMatching(/^thr_/), agent_version: null });
    const inlineSnap = await api("GET", `/v1/sessions/${inline.body.session_id}`);
    expect(inlineSnap.body.metadata).toEqual({ user: "u1" });
    expect(inlineSnap.body.agent.max_steps).toBe(10);
  });

  it("refuses an invalid inline config with 422 naming the nested field", async () => {
    const res = await api("POST", "/v1/sessions", { agent: { name: "inline", model: "demo:y", max_steps: 0 } });
    expect(res.status).toBe(422);
    expect(res.body.error.details.map((d: { path: string }) => d.path)).toContain("agent.max_steps");
  });

  it("keeps the config a session started with when the agent is replaced or deleted", async () => {
    await createAgent({ name: "pinned", model: "demo:x", max_steps: 4 });
    const sid = await createSession("pinned");
    await createAgent({ name: "pinned", model: "demo:x", max_steps: 9 });
    await api("DELETE", "/v1/agents/pinned");
    expect((await api("GET", `/v1/sessions/${sid}`)).body.agent.max_steps).toBe(4);
  });

  it("lists the agent's tools with their governance flags", async () => {
    await createAgent({ name: "inv", model: "demo:x", tools: ["clock"], http_tools: [{ name: "hook", url: `${allowlisted()}/h`, parallel_safe: false }] });
    const sid = await createSession("inv");
    const res = await api("GET", `/v1/sessions/${sid}/tools`);
    expect(res.status).toBe(200);
    expect(
      res.body.tools.map((t: { name: string; permission_class: string; parallel_safe: boolean }) => [t.name, t.permission_class, t.parallel_safe]),
    ).toEqual([
      ["clock", "safe", true],
      ["hook", "network", false],
    ]);
  });
});

describe("CORS and OpenAPI", () => {
  it("answers preflight for an allowed origin only", async () => {
    const ok = await SELF.fetch("https://runtime.test/v1/agents", {
      method: "OPTIONS",
      headers: { origin: "https://app.example", "access-control-request-method": "PUT" },
    });
    expect(ok.headers.get("access-control-allow-origin")).toBe("https://app.example");
    const other = await SELF.fetch("https://runtime.test/v1/agents", {
      method: "OPTIONS",
      headers: { origin: "https://other.example", "access-control-request-method": "PUT" },
    });
    expect(other.headers.get("access-control-allow-origin")).toBeNull();
  });

  it("describes every route in /openapi.json, generated from the schemas", async () => {
    const res = await SELF.fetch("https://runtime.test/openapi.json");
    expect(res.status).toBe(200);
    const doc = (await res.json()) as { openapi: string; paths: Record<string, Record<string, unknown>>; components: { schemas: Record<string, any> } };
    expect(doc.openapi).toBe("3.1.0");
    const routes = Object.entries(doc.paths).flatMap(([path, ops]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${path}`));
    expect(routes).toEqual(
      expect.arrayContaining([
        "GET /healthz",
        "PUT /v1/agents/{name}",
        "GET /v1/agents/{name}",
        "GET /v1/agents",
        "DELETE /v1/agents/{name}",
        "POST /v1/sessions",
        "GET /v1/sessions/{sid}",
        "GET /v1/sessions/{sid}/thread",
        "POST /v1/sessions/{sid}/turns",
        "POST /v1/sessions/{sid}/interrupt",
        "DELETE /v1/sessions/{sid}/queue/{turn_id}",
        "POST /v1/sessions/{sid}/queue/{turn_id}/promote",
        "GET /v1/sessions/{sid}/events",
        "GET /v1/sessions/{sid}/ws",
        "GET /v1/sessions/{sid}/tools",
      ]),
    );
    expect(doc.components.schemas.AgentConfig.properties.max_steps).toMatchObject({ type: "integer", minimum: 1, default: 10 });
  });
});

function allowlisted(): string {
  // TOOL_URL_ALLOWLIST in the test config is the fake server's origin (see vitest.config.ts).
  return new URL(baseURL).origin;
}
