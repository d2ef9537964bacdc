// Secrets are write-only. An agent holding a distinct secret in every secret-bearing field (MCP
// server headers and URL, a webhook tool's URL, its subscription's secret and URL) and a session subscription
// with its own run a turn, are forked and replayed; then every GET route of /openapi.json, the events as JSON,
// SSE and WebSocket, the export, the MCP server's answers, /openapi.json and the subscriptions' deliveries are
// searched for the secrets, for every key role and token kind. The runtime itself still uses the real values.
// (The inspector is a static page that shows only what these routes and streams give it; this pool does not
// serve its assets, the browser tests do.)
import { env, SELF } from "cloudflare:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { CfWorkerJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/cfworker";
import { afterEach, describe, expect, it } from "vitest";
import { api, submitTurn, waitForTurnEnd } from "../../support/api";
import { baseURL, script, toolURL, uniqueId } from "../../support/fake-model";
import { closeAllSockets, openWs, until } from "../../support/ws";

const BASE = "https://runtime.test";
const MCP_BASE = (env as unknown as { MCP_TEST_BASE_URL: string }).MCP_TEST_BASE_URL;
const REDACTED = "[redacted]";

/** One distinct string per secret-bearing field, so that a leak names its field. */
const SECRETS = {
  mcp_header: `mcp-header-${crypto.randomUUID()}`,
  mcp_bearer: `mcp-bearer-${crypto.randomUUID()}`,
  mcp_url_token: `mcp-url-token-${crypto.randomUUID()}`,
  tool_url_key: `tool-url-key-${crypto.randomUUID()}`,
  agent_subscription_secret: `agent-sub-secret-${crypto.randomUUID()}`,
  agent_subscription_url: `agent-sub-url-${crypto.randomUUID()}`,
  session_subscription_secret: `session-sub-secret-${crypto.randomUUID()}`,
  session_subscription_url: `session-sub-url-${crypto.randomUUID()}`,
};

/** The names of the secrets `text` holds. */
const leaks = (text: string) =>
  Object.entries(SECRETS)
    .filter(([, secret]) => text.includes(secret))
    .map(([field]) => field);

const get = (path: string, credential: string, headers: Record<string, string> = {}) =>
  SELF.fetch(`${BASE}${path}`, { headers: { authorization: `Bearer ${credential}`, ...headers } });

async function token(body: Record<string, unknown>): Promise<string> {
  const res = await api("POST", "/v1/tokens", { ttl_s: 600, ...body });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.token;
}

/** The agent's config with a secret in every secret-bearing field; its model answers from `scriptId`. */
function secretAgent(name: string, scriptId: string, mcpUrl: string, receiver: string) {
  return {
    name,
    model: `openai-compatible:${scriptId}`,
    http_tools: [{ name: "lookup", url: `${toolURL("echo")}?api_key=${SECRETS.tool_url_key}` }],
    mcp_servers: [
      {
        name: "files",
        url: `${mcpUrl}?access_token=${SECRETS.mcp_url_token}`,
        headers: { "x-test-header": SECRETS.mcp_header, authorization: `Bearer ${SECRETS.mcp_bearer}` },
      },
    ],
    tools: ["mcp:files/*"],
    subscriptions: [{ url: `${receiver}?auth=${SECRETS.agent_subscription_url}`, secret: SECRETS.agent_subscription_secret }],
  };
}

/** Every write-only field of a config read back holds the placeholder. */
function expectPlaceholders(config: any, where: string): void {
  expect(config.mcp_servers[0].headers, where).toEqual({ "x-test-header": REDACTED, authorization: REDACTED });
  expect(config.mcp_servers[0].url, where).toMatch(/\?access_token=\[redacted\]$/);
  expect(config.http_tools[0].url, where).toBe(`${toolURL("echo")}?api_key=${REDACTED}`);
  expect(config.subscriptions[0].secret, where).toBe(REDACTED);
  expect(config.subscriptions[0].url, where).toMatch(/\?auth=\[redacted\]$/);
}

/** A turn that calls the webhook tool and the MCP tool, then answers. */
const TURN = [
  {
    tool_calls: [
      { name: "lookup", arguments: { q: "x" } },
      { name: "files__count", arguments: { to: 1 } },
    ],
  },
  { text: "Done." },
];

async function mcpCalls(url: string): Promise<{ header: string | null }[]> {
  return (await fetch(`${url}/_calls`)).json();
}

/** The SSE stream of the log from the start, read until event `last`. */
async function sseText(sid: string, credential: string, last: number): Promise<string> {
  const res = await get(`/v1/sessions/${sid}/events?after=0`, credential, { accept: "text/event-stream" });
  expect(res.status).toBe(200);
  const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
  let text = "";
  while (!text.includes(`id: ${last}\n`)) {
    const { done, value } = await reader.read();
    if (done) break;
    text += value;
  }
  await reader.cancel();
  return text;
}

/** What the runtime's MCP server answers a client listing its tools. */
async function mcpAnswers(credential: string): Promise<string> {
  const client = new Client({ name: "test", version: "1.0.0" }, { jsonSchemaValidator: new CfWorkerJsonSchemaValidator() });
  const fetchFn = (input: string | URL | Request, init?: RequestInit) => SELF.fetch(input, init);
  const transport = new StreamableHTTPClientTransport(new URL(`${BASE}/mcp`), {
    fetch: fetchFn,
    requestInit: { headers: { authorization: `Bearer ${credential}` } },
  });
  try {
    await client.connect(transport);
    return JSON.stringify(await client.listTools());
  } catch (err) {
    return String(err);
  } finally {
    await client.close();
  }
}

/** Every GET route of /openapi.json, its path parameters filled in from `ids` ("x" otherwise), once per session. */
async function readRoutes(sessions: string[], ids: Record<string, string>): Promise<string[]> {
  const doc = (await (await SELF.fetch(`${BASE}/openapi.json`)).json()) as { paths: Record<string, Record<string, unknown>> };
  const reads = Object.entries(doc.paths)
    .filter(([, ops]) => "get" in ops)
    .map(([path]) => path);
  const fill = (path: string, sid: string) =>
    Object.entries({ sid, ...ids })
      .reduce((p, [name, value]) => p.replace(`{${name}}`, value), path)
      .replace(/\{[^}]+\}/g, "x");
  return [...new Set(reads.flatMap((path) => sessions.map((sid) => fill(path, sid))))];
}

afterEach(closeAllSockets);

describe("secrets are write-only", () => {
  it("no read route, stream, export, delivery or MCP answer shows a secret, to any key role or token", { timeout: 120_000 }, async () => {
    const name = uniqueId("secret-agent");
    const scriptId = uniqueId("secrets");
    const mcpUrl = `${MCP_BASE}/${uniqueId("sp")}`;
    const receiver = `${baseURL}/_receiver/${uniqueId("rcv")}`;
    await script(scriptId, TURN);
    const put = await api("PUT", `/v1/agents/${name}`, secretAgent(name, scriptId, mcpUrl, receiver));
    expect(put.status, JSON.stringify(put.body)).toBe(201);
    expect(leaks(JSON.stringify(put.body))).toEqual([]);
    expectPlaceholders(put.body, "PUT's answer");

    // The session belongs to the agent token's subject, so that token reaches it too.
    const agentToken = await token({ subject: "alice", agent: name });
    const created = await SELF.fetch(`${BASE}/v1/sessions`, {
      method: "POST",
      headers: { authorization: `Bearer ${agentToken}`, "content-type": "application/json" },
      body: JSON.stringify({ agent: name }),
    });
    expect(created.status).toBe(201);
    const sid = ((await created.json()) as { session_id: string }).session_id;
    const subscribed = await api("POST", `/v1/sessions/${sid}/subscriptions`, {
      url: `${receiver}-session?token=${SECRETS.session_subscription_url}`,
      secret: SECRETS.session_subscription_secret,
    });
    expect(subscribed.status, JSON.stringify(subscribed.body)).toBe(201);

    const { turn_id } = await submitTurn(sid, "go");
    const log = await waitForTurnEnd(sid, turn_id);
    expect(log.at(-1).type).toBe("turn.completed");
    expect(log.filter((e) => e.type === "tool.result").map((e) => e.payload.is_error)).toEqual([false, false]);
    // The runtime used the real header, not what readers see.
    expect((await mcpCalls(mcpUrl)).map((c) => c.header)).toEqual([SECRETS.mcp_header]);

    const fork = await api("POST", `/v1/sessions/${sid}/fork`, { at_sequence: log.at(-1).sequence });
    expect(fork.status, JSON.stringify(fork.body)).toBe(201);
    const replay = await api("POST", `/v1/sessions/${sid}/turns/${turn_id}/replay`, {});
    expect(replay.status, JSON.stringify(replay.body)).toBe(201);
    const execId: string = replay.body.exec_id;
    await waitForTurnEnd(execId, replay.body.turn_id);
    const sessions = [sid, fork.body.session_id as string, execId];

    const principals: [string, string][] = [
      ["admin key", "test-key"],
      ["operator key", "operator-key"],
      ["read key", "read-key"],
      ["session token", await token({ subject: "alice", session_id: sid })],
      ["read-only session token", await token({ subject: "alice", session_id: sid, scopes: ["read"] })],
      ["agent token", agentToken],
    ];

    expect(leaks(await (await SELF.fetch(`${BASE}/openapi.json`)).text()), "/openapi.json").toEqual([]);
    const paths = await readRoutes(sessions, { name, turn_id, exec_id: execId });
    expect(paths).toEqual(
      expect.arrayContaining([`/v1/sessions/${sid}`, `/v1/sessions/${sid}/export`, `/v1/agents/${name}`, `/v1/sessions/${sid}/subscriptions`]),
    );

    for (const [who, credential] of principals) {
      let read = 0;
      for (const path of paths) {
        const res = await get(path, credential);
        const text = await res.text();
        expect(leaks(text), `${who}: GET ${path} (${res.status})`).toEqual([]);
        if (res.status === 200) read += 1;
      }
      expect(read, `${who} read something`).toBeGreaterThan(5);

      // Every principal reads the snapshot and the export of the session, with the placeholders.
      const snapshot = await get(`/v1/sessions/${sid}`, credential);
      expect(snapshot.status, who).toBe(200);
      expectPlaceholders(((await snapshot.json()) as { agent: unknown }).agent, `${who}: snapshot`);
      const exported = await (await get(`/v1/sessions/${sid}/export`, credential)).text();
      expectPlaceholders(JSON.parse(exported.split("\n")[0]!).agent, `${who}: export header`);

      const last: number = (await api("GET", `/v1/sessions/${sid}/thread`)).body.last_sequence;
      expect(leaks(await sseText(sid, credential, last)), `${who}: SSE`).toEqual([]);
      const ws = await openWs(sid, "after=0", { authorization: `Bearer ${credential}` });
      await ws.waitForCount(last);
      expect(leaks(JSON.stringify([ws.events, ws.replies, ws.other])), `${who}: WebSocket`).toEqual([]);
      await ws.close();

      expect(leaks(await mcpAnswers(credential)), `${who}: POST /mcp`).toEqual([]);
    }

    // The registry's readers (keys only) show the placeholders too.
    expectPlaceholders((await api("GET", `/v1/agents/${name}`)).body, "GET agent");
    expectPlaceholders(
      (await api("GET", "/v1/agents")).body.agents.find((a: { name: string }) => a.name === name),
      "GET agents",
    );
    const subscriptions = (await api("GET", `/v1/sessions/${sid}/subscriptions`)).body.subscriptions;
    expect(subscriptions.map((s: { url: string }) => s.url.split("?")[1])).toEqual(["auth=[redacted]", "token=[redacted]"]);
    // What the subscriptions delivered is the same log, without secrets.
    for (const url of [receiver, `${receiver}-session`]) {
      const delivered = await until(async () => {
        const text = await (await fetch(`${url}/requests`)).text();
        return text !== "[]" && text;
      }, `deliveries to ${url}`);
      expect(leaks(delivered), `deliveries to ${url}`).toEqual([]);
    }
  });

  it("a config read, edited and written back keeps its secrets; a placeholder with nothing stored behind it is 422", async () => {
    const name = uniqueId("secret-roundtrip");
    const scriptId = uniqueId("secrets");
    const mcpUrl = `${MCP_BASE}/${uniqueId("sp")}`;
    const receiver = `${baseURL}/_receiver/${uniqueId("rcv")}`;
    expect((await api("PUT", `/v1/agents/${name}`, secretAgent(name, scriptId, mcpUrl, receiver))).status).toBe(201);
    const read = (await api("GET", `/v1/agents/${name}`)).body;
    const written = await api("PUT", `/v1/agents/${name}`, { ...read, instructions: "Edited." });
    expect(written.status, JSON.stringify(written.body)).toBe(200);
    expectPlaceholders(written.body, "PUT of the read config");

    // The servers get the stored values, not the placeholders.
    await script(scriptId, TURN);
    const sid = (await api("POST", "/v1/sessions", { agent: name })).body.session_id;
    const { turn_id } = await submitTurn(sid, "go");
    const log = await waitForTurnEnd(sid, turn_id);
    expect(log.filter((e) => e.type === "tool.result").map((e) => e.payload.is_error)).toEqual([false, false]);
    expect((await mcpCalls(mcpUrl)).map((c) => c.header)).toEqual([SECRETS.mcp_header]);

    // A replay given the servers as the snapshot shows them runs with the source session's values.
    const { agent } = (await api("GET", `/v1/sessions/${sid}`)).body;
    await script(scriptId, [{ text: "Done." }]); // live tool results differ from the recorded ones: the model answers live
    const replay = await api("POST", `/v1/sessions/${sid}/turns/${turn_id}/replay`, { agent: { mcp_servers: agent.mcp_servers }, tools: "live" });
    expect(replay.status, JSON.stringify(replay.body)).toBe(201);
    const replayed = await waitForTurnEnd(replay.body.exec_id, replay.body.turn_id);
    expect(replayed.filter((e) => e.type === "turn.completed")).toHaveLength(1);
    expect((await mcpCalls(mcpUrl)).map((c) => c.header)).toEqual([SECRETS.mcp_header, SECRETS.mcp_header]);

    // Another agent has nothing stored: its placeholders are refused, each named, and nothing is stored.
    const other = uniqueId("secret-copy");
    const copy = await api("PUT", `/v1/agents/${other}`, { ...read, name: other });
    expect(copy.status).toBe(422);
    expect(copy.body.error.details.map((d: { path: string }) => d.path).sort()).toEqual([
      "http_tools.0.url",
      "mcp_servers.0.headers.authorization",
      "mcp_servers.0.headers.x-test-header",
      "mcp_servers.0.url",
      "subscriptions.0.secret",
      "subscriptions.0.url",
    ]);
    expect((await api("GET", `/v1/agents/${other}`)).status).toBe(404);

    // A placeholder under a header name every object has a member of finds nothing stored either.
    const server = read.mcp_servers[0];
    const inherited = { ...server, headers: { ...server.headers, constructor: server.headers.authorization, toString: server.headers.authorization } };
    const odd = await api("PUT", `/v1/agents/${name}`, { ...read, mcp_servers: [inherited] });
    expect(odd.status, JSON.stringify(odd.body)).toBe(422);
    const refusals = odd.body.error.details.map((d: { path: string; reason: string }) => `${d.path}: ${d.reason.includes("nothing stored matches it")}`);
    expect(refusals.sort()).toEqual(["mcp_servers.0.headers.constructor: true", "mcp_servers.0.headers.toString: true"]);
  });

  it("validation errors do not echo a secret back", async () => {
    const userinfo = `userinfo-${crypto.randomUUID()}`;
    const res = await api("PUT", `/v1/agents/${uniqueId("secret-bad")}`, {
      model: "demo:fast",
      http_tools: [{ name: "t", url: `http://user:${userinfo}@127.0.0.1:1/hook?api_key=${SECRETS.tool_url_key}` }],
      mcp_servers: [{ name: "m", url: "ftp://nowhere", headers: { authorization: SECRETS.mcp_bearer } }],
      subscriptions: [{ url: `http://127.0.0.1:1/?token=${SECRETS.session_subscription_url}`, secret: "short" }],
    });
    expect(res.status).toBe(422);
    const text = JSON.stringify(res.body);
    expect(leaks(text)).toEqual([]);
    expect(text).not.toContain(userinfo);
  });
});

describe("provider error text", () => {
  it("a provider key or credential a provider echoes in its error reaches no read route, event, export or stream", { timeout: 120_000 }, async () => {
    const providerKey = (env as unknown as { ANTHROPIC_API_KEY: string }).ANTHROPIC_API_KEY;
    const shaped = `sk-proj-${crypto.randomUUID()}`;
    const echo = `key {header:x-api-key}, Authorization: Bearer ${shaped}, api_key=${shaped}`;
    const failing = (status: number) => ({ error: { status, message: `refused (${echo})`, retry_after_ms: 0 } });
    const primary = uniqueId("leaky");
    const backup = uniqueId("backup");
    const judge = uniqueId("leaky-judge");
    const passes = { text: '{"flagged": false}' };
    // Turn 1: the primary's 503s (the call and its retries), the backup answers. Turn 2: the primary's 401 fails
    // the turn. Turn 3: the judge's 401 fires its rule.
    await script(primary, [failing(503), failing(503), failing(503), failing(401)]);
    await script(backup, [{ text: "from the backup" }]);
    await script(judge, [passes, passes, failing(401)]);
    const created = await api("POST", "/v1/sessions", {
      agent: {
        model: `anthropic:${primary}`,
        fallback_models: [`openai-compatible:${backup}`],
        fallback_cooldown_ms: 0,
        guardrails: { input: [{ type: "model", name: "judge", model: `anthropic:${judge}`, instructions: "Flag nothing." }] },
      },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const sid: string = created.body.session_id;
    const ends: any[] = [];
    for (const input of ["one", "two", "three"]) {
      const { turn_id } = await submitTurn(sid, input);
      ends.push((await waitForTurnEnd(sid, turn_id)).find((e) => e.turn_id === turn_id && (e.type === "turn.completed" || e.type === "turn.failed")));
    }
    expect(ends.map((e) => e.type)).toEqual(["turn.completed", "turn.failed", "turn.failed"]);
    const log = (await api("GET", `/v1/sessions/${sid}/events?after=0&limit=1000`)).body.events as any[];
    const fallback = log.find((e) => e.type === "model.fallback");
    // The messages still say what happened, with the credentials replaced.
    expect(fallback.payload.reason).toContain(`key ${REDACTED}, Authorization: Bearer ${REDACTED}, api_key=${REDACTED}`);
    expect(ends[1].payload.error).toMatchObject({ code: "model_error", message: expect.stringContaining(`key ${REDACTED}`) });
    expect(log.find((e) => e.type === "guardrail.checked" && e.payload.failed === "error").payload.reason).toContain(`key ${REDACTED}`);

    const signingSecret = (env as unknown as { TOKEN_SIGNING_SECRET: string }).TOKEN_SIGNING_SECRET;
    const hidden = (text: string, where: string) => {
      expect(text.includes(providerKey), `${where} holds the provider key`).toBe(false);
      expect(text.includes(shaped), `${where} holds the credential`).toBe(false);
      expect(text.includes(signingSecret), `${where} holds the token signing secret`).toBe(false);
    };
    const readOnly = await token({ subject: "alice", session_id: sid, scopes: ["read"] });
    // Every read route, for each turn, to an admin key, a read key and a read-only token.
    const routes = (await Promise.all(ends.map((e) => readRoutes([sid], { turn_id: e.turn_id })))).flat();
    expect(routes).toEqual(expect.arrayContaining([`/v1/sessions/${sid}/thread`, `/v1/sessions/${sid}/turns/${ends[1].turn_id}/tree`, "/v1/sessions"]));
    for (const credential of ["test-key", "read-key", readOnly]) {
      let read = 0;
      for (const path of new Set(routes)) {
        const res = await get(path, credential);
        hidden(await res.text(), `GET ${path} (${res.status})`);
        if (res.status === 200) read += 1;
      }
      expect(read).toBeGreaterThan(5);
    }
    for (const credential of ["read-key", readOnly]) {
      hidden(await (await get(`/v1/sessions/${sid}/events?after=0&limit=1000`, credential)).text(), "events");
      hidden(await (await get(`/v1/sessions/${sid}/export`, credential)).text(), "export");
      const last = log.at(-1).sequence;
      hidden(await sseText(sid, credential, last), "SSE");
      const ws = await openWs(sid, "after=0", { authorization: `Bearer ${credential}` });
      await ws.waitForCount(last);
      hidden(JSON.stringify([ws.events, ws.replies, ws.other]), "WebSocket");
      await ws.close();
    }
  });
});
