// Defects found by a hostile client and a first-time user, each through the public surface.
import { env, runInDurableObject, SELF } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { upsertSession } from "../../src/objects/index/index-shard-tables";
import { indexShard } from "../../src/objects/index/index-shards";
import { MAX_METADATA_BYTES, MAX_METADATA_DEPTH, MAX_METADATA_ENTRIES } from "../../src/protocol/metadata";
import { MAX_JSON_DEPTH } from "../../src/routes/json-depth";
import { api, createAgent, createSession, KEY, submitTurn, waitForTurnEnd } from "../support/api";
import { toolURL } from "../support/fake-model";
import { wsFetch } from "../support/ws";

const nested = (depth: number): unknown => {
  let v: unknown = "leaf";
  for (let i = 0; i < depth; i++) v = { a: v };
  return v;
};

describe("JSON nesting", () => {
  it(`refuses bodies nested deeper than ${MAX_JSON_DEPTH} levels with 422 naming the field, touching nothing`, async () => {
    const before = (await api("GET", "/v1/agents")).body.agents?.length ?? (await api("GET", "/v1/agents")).body.length;
    const cases: [string, string, unknown, string][] = [
      ["POST", "/v1/sessions", { agent: { name: "deep", model: "demo:fast" }, metadata: nested(3000) }, "metadata"],
      ["PUT", "/v1/agents/deep", { model: "demo:fast", output_schema: { type: "object", properties: nested(3000) } }, "output_schema"],
      [
        "POST",
        "/v1/sessions",
        { agent: { name: "deep", model: "demo:fast", http_tools: [{ name: "t", url: toolURL("echo"), parameters: nested(3000) }] } },
        "agent",
      ],
    ];
    for (const [method, path, body, field] of cases) {
      const res = await api(method, path, body);
      expect(res.status, `${method} ${path}`).toBe(422);
      expect(res.body.error.details).toEqual([{ path: field, reason: `nests deeper than ${MAX_JSON_DEPTH} levels` }]);
    }
    expect((await api("GET", "/v1/agents/deep")).status).toBe(404);
    const after = (await api("GET", "/v1/agents")).body.agents?.length ?? (await api("GET", "/v1/agents")).body.length;
    expect(after).toBe(before);
    // Exactly at the limit is accepted: the body, output_schema, then 31 levels of (properties, property).
    const schema = (levels: number): unknown => (levels === 0 ? { type: "string" } : { type: "object", properties: { a: schema(levels - 1) } });
    const atLimit = { model: "demo:fast", output_schema: schema((MAX_JSON_DEPTH - 2) / 2) };
    expect((await api("PUT", "/v1/agents/deep-ok", atLimit)).status).toBe(201);
  });

  it("applies to every body read as JSON, whatever the media type says; other media types are 415", async () => {
    const source = await createSession({ name: "deep-source", model: "demo:fast" });
    const deep: [string, string, unknown, string][] = [
      ["PUT", "/v1/agents/deep-media", { model: "demo:fast", output_schema: { type: "object", properties: nested(3000) } }, "output_schema"],
      ["POST", "/v1/sessions", { agent: { model: "demo:fast" }, metadata: nested(3000) }, "metadata"],
      ["POST", `/v1/sessions/${source}/fork`, { at_sequence: 1, metadata: nested(3000) }, "metadata"],
    ];
    for (const mediaType of ["Application/JSON", "application/vnd.api+json", "APPLICATION/JSON; charset=utf-8"]) {
      for (const [method, path, body, field] of deep) {
        const res = await api(method, path, body, { "content-type": mediaType });
        expect(res.status, `${method} ${path} as ${mediaType}`).toBe(422);
        expect(res.body.error.details).toEqual([{ path: field, reason: `nests deeper than ${MAX_JSON_DEPTH} levels` }]);
      }
    }
    const raw = (method: string, path: string, body: BodyInit, headers: Record<string, string>) =>
      SELF.fetch(`https://runtime.test${path}`, { method, headers: { authorization: `Bearer ${KEY}`, ...headers }, body });
    const agent = JSON.stringify({ model: "demo:fast" });
    for (const [name, headers] of [
      ["text/plain", { "content-type": "text/plain" }],
      ["application/x-www-form-urlencoded", { "content-type": "application/x-www-form-urlencoded" }],
      ["application/jsonx", { "content-type": "application/jsonx" }],
      ["no content-type", {}],
    ] as const) {
      // A Uint8Array body is sent with no content-type of its own.
      const res = await raw("PUT", "/v1/agents/wrong-media", new TextEncoder().encode(agent), headers);
      expect(res.status, name).toBe(415);
      expect(((await res.json()) as any).error).toEqual({
        code: "unsupported_media_type",
        message: "Content-Type must be application/json (or application/<type>+json) for a request with a body",
      });
      // A route with no body of its own refuses one under another media type too.
      expect((await raw("POST", `/v1/sessions/${source}/interrupt`, new TextEncoder().encode("{}"), headers)).status, name).toBe(415);
    }
    expect((await api("GET", "/v1/agents/wrong-media")).status).toBe(404);
    expect((await api("GET", "/v1/agents/deep-media")).status).toBe(404);
    expect((await api("PUT", "/v1/agents/right-media", agent, { "content-type": "application/vnd.api+json" })).status).toBe(201);
    expect((await api("POST", `/v1/sessions/${source}/interrupt`)).status).toBe(200);
  });
});

describe("session metadata", () => {
  const entries = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, i]));
  const within = (depth: number) => nested(depth) as Record<string, unknown>;

  it("a browser token cannot store metadata that breaks listings for everyone", async () => {
    await createAgent({ name: "meta_agent", model: "demo:fast" });
    const token = (await api("POST", "/v1/tokens", { subject: "mallory", agent: "meta_agent", ttl_s: 600 })).body.token as string;
    const auth = { authorization: `Bearer ${token}` };
    for (const mediaType of ["application/json", "Application/JSON"]) {
      const res = await api("POST", "/v1/sessions", { agent: "meta_agent", metadata: nested(3000) }, { ...auth, "content-type": mediaType });
      expect(res.status, mediaType).toBe(422);
      expect(res.body.error.details[0].path).toBe("metadata");
    }
    const ok = await api("POST", "/v1/sessions", { agent: "meta_agent", metadata: { a: "x" } }, auth);
    expect(ok.status).toBe(201);
    for (const headers of [auth, {}]) {
      const listed = await api("GET", "/v1/sessions?metadata.a=x&agent=meta_agent", undefined, headers);
      expect(listed.status).toBe(200);
      expect(listed.body.sessions.map((s: any) => s.session_id)).toEqual([ok.body.session_id]);
    }
  });

  it("a row stored before the bounds, nested past SQLite's JSON depth, does not fail metadata listings", async () => {
    const old = `ses_${crypto.randomUUID().replaceAll("-", "").slice(0, 24)}`;
    const row = { session_id: old, agent: "meta-old", owner: null, metadata: { a: "x", deep: nested(3000) }, created_at: Date.now() };
    const totals = {
      last_activity: Date.now(),
      status: "idle",
      turns: 0,
      input_tokens: 0,
      output_tokens: 0,
      cost_usd: 0,
      unpriced_model_calls: 0,
      log_events: 1,
    };
    await runInDurableObject(indexShard(env, old), (_o, state) => upsertSession(state.storage.sql, { ...row, ...totals } as never, [], row.agent));
    for (const query of ["metadata.a=x", "metadata.deep=1&agent=meta-old", "agent=meta-old"]) {
      const listed = await api("GET", `/v1/sessions?${query}`);
      expect(listed.status, query).toBe(200);
    }
    const listed = (await api("GET", "/v1/sessions?agent=meta-old")).body.sessions;
    expect(listed.map((s: any) => [s.session_id, s.metadata])).toEqual([[old, { a: "x", deep: "[too deep]" }]]);
  });

  it(`is bounded at write time (${MAX_METADATA_DEPTH} levels, ${MAX_METADATA_ENTRIES} entries, ${MAX_METADATA_BYTES} bytes): 422 naming the field`, async () => {
    const source = await createSession({ name: "meta-source", model: "demo:fast" });
    const bad: [unknown, string][] = [
      [within(MAX_METADATA_DEPTH + 1), `nests deeper than ${MAX_METADATA_DEPTH} levels`],
      [entries(MAX_METADATA_ENTRIES + 1), `has more than ${MAX_METADATA_ENTRIES} keys and array items in all`],
      [{ list: Array.from({ length: MAX_METADATA_ENTRIES }, () => 1) }, `has more than ${MAX_METADATA_ENTRIES} keys and array items in all`],
      [{ big: "x".repeat(MAX_METADATA_BYTES) }, `is larger than ${MAX_METADATA_BYTES} bytes as JSON (${MAX_METADATA_BYTES + 10})`],
    ];
    for (const [metadata, reason] of bad) {
      const created = await api("POST", "/v1/sessions", { agent: { model: "demo:fast" }, metadata });
      expect(created.status, reason).toBe(422);
      expect(created.body.error.details).toEqual([{ path: "metadata", reason }]);
      const forked = await api("POST", `/v1/sessions/${source}/fork`, { at_sequence: 1, metadata });
      expect(forked.status, reason).toBe(422);
      expect(forked.body.error.details).toEqual([{ path: "metadata", reason }]);
    }
    for (const metadata of [within(MAX_METADATA_DEPTH), entries(MAX_METADATA_ENTRIES), { big: "x".repeat(MAX_METADATA_BYTES - 10) }]) {
      expect((await api("POST", "/v1/sessions", { agent: { model: "demo:fast" }, metadata })).status).toBe(201);
      expect((await api("POST", `/v1/sessions/${source}/fork`, { at_sequence: 1, metadata })).status).toBe(201);
    }
  });
});

describe("URL allowlist", () => {
  const SUFFIXES = [
    ...["..%2fsecret", "%2e%2e%2fsecret", "..%5csecret", "..;/secret", "%2E%2E%2Fsecret", "a;b/c"],
    // Double-encoded, overlong UTF-8, %u escapes, NUL and other controls, invalid escapes, deeper encodings.
    ...["%252e%252e%252fsecret", "..%c0%afsecret", "%u002e%u002e/secret", "..%00/secret", "a%00b", "a%0ab", "%e0%80%ae%e0%80%ae/x"],
    ...["a%zz", "%25", "%25252e%25252e/x", "%2525252e%2525252e/x", "..%255csecret", "a%253bb"],
  ];
  const refused = { reason: "is not under any TOOL_URL_ALLOWLIST prefix" };

  it("refuses traversal at any level of encoding, %u escapes, NUL and invalid encodings in tool, MCP and subscription URLs", async () => {
    const base = toolURL("");
    const mcpBase = `${(env as unknown as { MCP_TEST_BASE_URL: string }).MCP_TEST_BASE_URL}/`;
    const sid = await createSession({ name: "allowlist", model: "demo:fast" });
    for (const suffix of SUFFIXES) {
      const tool = await api("PUT", "/v1/agents/traversal", { model: "demo:fast", http_tools: [{ name: "t", url: `${base}${suffix}` }] });
      expect(tool.status, suffix).toBe(422);
      expect(tool.body.error.details).toContainEqual({ path: "http_tools.0.url", ...refused });
      const mcp = await api("PUT", "/v1/agents/traversal", { model: "demo:fast", mcp_servers: [{ name: "m", url: `${mcpBase}${suffix}` }] });
      expect(mcp.status, suffix).toBe(422);
      expect(mcp.body.error.details).toContainEqual({ path: "mcp_servers.0.url", ...refused });
      const sub = await api("POST", `/v1/sessions/${sid}/subscriptions`, { url: `${base}${suffix}` });
      expect(sub.status, suffix).toBe(422);
      expect(sub.body.error.details).toEqual([{ path: "url", ...refused }]);
    }
    expect((await api("GET", "/v1/agents/traversal")).status).toBe(404);
    expect((await api("GET", `/v1/sessions/${sid}/subscriptions`)).body.subscriptions).toEqual([]);
    // Plain paths, and an encoded character that decodes to nothing a server could read as a path, still pass.
    expect((await api("PUT", "/v1/agents/traversal", { model: "demo:fast", http_tools: [{ name: "t", url: `${base}echo` }] })).status).toBe(201);
    expect((await api("PUT", "/v1/agents/traversal2", { model: "demo:fast", mcp_servers: [{ name: "m", url: `${mcpBase}a%20b` }] })).status).toBe(201);
    expect((await api("POST", `/v1/sessions/${sid}/subscriptions`, { url: `${base}_receiver/a..b` })).status).toBe(201);
  });
});

describe("cursors", () => {
  it("accepts only plain non-negative decimal integers in after and Last-Event-ID", async () => {
    const sid = await createSession({ name: "cursors", model: "demo:fast" });
    for (const bad of ["0x10", "1e1", "", " 3 ", "017", "-1", "1.0"]) {
      const page = await api("GET", `/v1/sessions/${sid}/events?after=${encodeURIComponent(bad)}`);
      expect(page.status, `after=${JSON.stringify(bad)}`).toBe(422);
      expect(page.body.error.details[0].path).toBe("after");
      // HTTP trims header values, so " 3 " arrives as "3": a real cursor (beyond this log, and so refused too).
      const sse = await SELF.fetch(`https://runtime.test/v1/sessions/${sid}/events`, {
        headers: { authorization: `Bearer ${KEY}`, accept: "text/event-stream", "last-event-id": bad },
      });
      expect(sse.status, `Last-Event-ID ${JSON.stringify(bad)}`).toBe(422);
      expect(((await sse.json()) as any).error.details[0].path).toBe("Last-Event-ID");
      const ws = await wsFetch(sid, `after=${encodeURIComponent(bad)}`);
      expect(ws.status).toBe(422);
      await ws.text();
    }
    expect((await api("GET", `/v1/sessions/${sid}/events?after=0`)).body.events).toHaveLength(1);
  });
});

describe("agent configuration", () => {
  it("accepts spawn_subagents in tools when parallel sub-agents are allowed, and says what it needs otherwise", async () => {
    const ok = await api("PUT", "/v1/agents/spawner", { model: "demo:fast", tools: ["spawn_subagents"], allow_parallel_subagents: true });
    expect(ok.status).toBe(201);
    const refused = await api("PUT", "/v1/agents/spawner2", { model: "demo:fast", tools: ["spawn_subagents"] });
    expect(refused.status).toBe(422);
    expect(refused.body.error.details).toEqual([{ path: "tools.0", reason: "spawn_subagents needs allow_parallel_subagents: true" }]);
  });

  it("an inline config needs no name, and an unconfigured provider names what to set", async () => {
    const inline = await api("POST", "/v1/sessions", { agent: { model: "demo:fast" } });
    expect(inline.status).toBe(201);
    expect((await api("GET", `/v1/sessions/${inline.body.session_id}`)).body.agent.name).toBe("inline");
    const openai = await api("POST", "/v1/sessions", { agent: { model: "openai:gpt-4o" } });
    expect(openai.status).toBe(422);
    expect(openai.body.error.details).toEqual([{ path: "agent.model", reason: expect.stringContaining("set the OPENAI_API_KEY secret") }]);
  });
});

describe("MCP run_agent_<name>", () => {
  it("refuses a session of another agent instead of running that session's agent", async () => {
    await createAgent({ name: "mcp_owner", model: "demo:fast" });
    await createAgent({ name: "mcp_other", model: "demo:fast" });
    const sid = await createSession("mcp_other");
    const { turn_id } = await submitTurn(sid, "hello");
    await waitForTurnEnd(sid, turn_id);
    const rpc = async (body: unknown) => {
      const res = await SELF.fetch("https://runtime.test/mcp", {
        method: "POST",
        headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json", accept: "application/json, text/event-stream" },
        body: JSON.stringify(body),
      });
      const text = await res.text();
      const data = text.startsWith("{") ? text : (text.split("\n").find((l) => l.startsWith("data: ")) ?? "").slice(6);
      return JSON.parse(data);
    };
    const out = await rpc({
      jsonrpc: "2.0",
      id: 1,
      method: "tools/call",
      params: { name: "run_agent_mcp_owner", arguments: { input: "hi", session_id: sid } },
    });
    expect(out.result.isError).toBe(true);
    expect(out.result.content[0].text).toContain('runs agent "mcp_other", not "mcp_owner"');
    const turns = (await api("GET", `/v1/sessions/${sid}`)).body.turn_count;
    expect(turns).toBe(1);
  });
});
