// MCP end to end: tools of a real MCP server (test/support/mcp-server.ts, built with the official SDK and
// started by global-setup) discovered, named, classed, called with progress, gated by HITL and left out
// when their server is down; and the runtime's own /mcp endpoint driven by the SDK's Client through SELF.
import { env, SELF } from "cloudflare:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { CfWorkerJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/cfworker";
import { describe, expect, it } from "vitest";
import { api, createAgent, events, KEY, submitTurn, waitForEvent, waitForTurnEnd } from "../../support/api";
import { requests, type Step, script, uniqueId } from "../../support/fake-model";

const testEnv = env as unknown as { MCP_TEST_BASE_URL: string; MCP_DOWN_URL: string };
const ALL_CLASSES = ["safe", "knowledge", "network", "workspace_write", "external_mutate", "subagent", "secrets"];

/** A fresh space of the test MCP server: the same tools, its own call log and added tools. */
function space(): string {
  return `${testEnv.MCP_TEST_BASE_URL}/${uniqueId("sp")}`;
}

async function serverCalls(url: string): Promise<any[]> {
  return (await fetch(`${url}/_calls`)).json();
}

async function serverLists(url: string): Promise<number> {
  return ((await (await fetch(`${url}/_lists`)).json()) as { lists: number }).lists;
}

function mcpClient(fetchFn: typeof fetch, url: string, headers: Record<string, string> = {}) {
  const client = new Client({ name: "test", version: "1.0.0" }, { jsonSchemaValidator: new CfWorkerJsonSchemaValidator() });
  const transport = new StreamableHTTPClientTransport(new URL(url), { fetch: fetchFn, requestInit: { headers } });
  return { client, connect: () => client.connect(transport) };
}

/** A session on an inline agent whose model follows `steps` and whose MCP server "files" is `url`. */
async function mcpSession(
  url: string,
  steps: Step[],
  agent: Record<string, unknown> = {},
  policy?: Record<string, unknown>,
): Promise<{ sid: string; scriptId: string }> {
  const scriptId = uniqueId("mcp");
  await script(scriptId, steps);
  const res = await api("POST", "/v1/sessions", {
    agent: { name: "mcp-user", model: `openai-compatible:${scriptId}`, mcp_servers: [{ name: "files", url }], tools: ["mcp:files/*"], ...agent },
    ...(policy ? { policy } : {}),
  });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return { sid: res.body.session_id, scriptId };
}

async function runTurn(sid: string, input = "go"): Promise<{ turn_id: string; log: any[] }> {
  const { turn_id } = await submitTurn(sid, input);
  const log = (await waitForTurnEnd(sid, turn_id)).filter((e) => e.turn_id === turn_id);
  return { turn_id, log };
}

const call = (name: string, args: Record<string, unknown> = {}) => ({ name, arguments: args });

describe("MCP servers in the agent configuration", () => {
  it("accepts servers with defaults filled in, and refuses references to servers that are not configured", async () => {
    const url = space();
    const name = uniqueId("mcpcfg");
    const put = await api("PUT", `/v1/agents/${name}`, { model: "demo:x", mcp_servers: [{ name: "files", url }], tools: ["mcp:files/count"] });
    expect(put.status, JSON.stringify(put.body)).toBe(201);
    expect(put.body.mcp_servers).toEqual([{ name: "files", url, permission_class: "network", trusted: false }]);
    expect((await api("GET", `/v1/agents/${name}`)).body).toEqual(put.body);

    const refused = await api("PUT", `/v1/agents/${name}`, {
      model: "demo:x",
      mcp_servers: [
        { name: "files", url },
        { name: "files", url },
        { name: "far", url: "https://mcp.example.com/mcp" },
      ],
      tools: ["mcp:nowhere/*", "mcp:files", "mcp:files/count"],
      hitl_tools: ["mcp:files/delete_file", "mcp:files/count"],
    });
    expect(refused.status).toBe(422);
    expect(refused.body.error.details).toEqual(
      expect.arrayContaining([
        { path: "mcp_servers.1.name", reason: 'duplicate MCP server name "files"' },
        { path: "mcp_servers.2.url", reason: "is not under any TOOL_URL_ALLOWLIST prefix" },
        { path: "tools.0", reason: 'names MCP server "nowhere", which is not in mcp_servers' },
        { path: "tools.1", reason: 'must be "mcp:<server>/<tool>" or "mcp:<server>/*"' },
        { path: "hitl_tools.0", reason: '"mcp:files/delete_file" is not a tool of this agent' },
      ]),
    );
    // The tool the agent does reference may be gated.
    expect(refused.body.error.details.some((d: any) => d.path === "hitl_tools.1")).toBe(false);
    const bad = await api("PUT", `/v1/agents/${name}`, { model: "demo:x", mcp_servers: [{ name: "files", url, permission_class: "root" }] });
    expect(bad.status).toBe(422);
    expect(bad.body.error.details[0].path).toBe("mcp_servers.0.permission_class");
  });
});

describe("MCP tools in a turn", () => {
  it("discovers the server's tools under provider-safe names, with their schemas unchanged and their classes from annotations", async () => {
    const url = space();
    // What the server itself lists, through the SDK's own client.
    const direct = mcpClient((u, i) => fetch(u, i), url);
    await direct.connect();
    const listed = (await direct.client.listTools()).tools;
    await direct.client.close();

    const { sid } = await mcpSession(url, [{ text: "ok" }]);
    const inventory = (await api("GET", `/v1/sessions/${sid}/tools`)).body.tools;
    const byName = new Map<string, any>(inventory.map((t: any) => [t.name, t]));
    // delete_file is destructive (external_mutate), which the default policy does not enable.
    expect([...byName.keys()].sort()).toEqual(["files__count", "files__explode", "files__notes_search"]);
    for (const t of listed.filter((t) => t.name !== "delete_file")) {
      const exposed = byName.get(`files__${t.name.replace(".", "_")}`);
      expect(exposed.parameters).toEqual(t.inputSchema);
      expect(exposed.description).toBe(t.description);
      expect(exposed.mcp).toEqual({ server: "files", tool: t.name });
    }
    // readOnlyHint is not believed from an untrusted server.
    expect(byName.get("files__notes_search").permission_class).toBe("network");

    // A trusted server's read-only tool is safe; the destructive one is external_mutate and shows when enabled.
    const trusted = await mcpSession(url, [{ text: "ok" }], { mcp_servers: [{ name: "files", url, trusted: true }] }, { classes: ALL_CLASSES });
    const classes = Object.fromEntries((await api("GET", `/v1/sessions/${trusted.sid}/tools`)).body.tools.map((t: any) => [t.name, t.permission_class]));
    expect(classes).toEqual({ files__count: "network", files__explode: "network", files__notes_search: "safe", files__delete_file: "external_mutate" });
    // A server-wide class applies to the tools without annotations.
    const knowledge = await mcpSession(url, [{ text: "ok" }], {
      mcp_servers: [{ name: "files", url, permission_class: "knowledge" }],
      tools: ["mcp:files/count"],
    });
    expect((await api("GET", `/v1/sessions/${knowledge.sid}/tools`)).body.tools.map((t: any) => [t.name, t.permission_class])).toEqual([
      ["files__count", "knowledge"],
    ]);
  });

  it("calls a tool by its exposed name, emitting each progress notification live as mcp.progress", async () => {
    const url = space();
    const { sid, scriptId } = await mcpSession(url, [{ tool_calls: [call("files__count", { to: 3, ui_request_id: "req-7" })] }, { text: "Counted." }], {
      injected_tool_args: { ui_request_id: "UI correlation id" },
    });
    const { log } = await runTurn(sid, "count to three");
    const types = log.map((e) => e.type);
    expect(types.slice(0, 3)).toEqual(["turn.submitted", "turn.started", "tool.catalog.resolved"]);
    const catalog = log.find((e) => e.type === "tool.catalog.resolved").payload.tools.map((t: any) => t.name);
    expect(catalog).toContain("files__count");

    const started = log.find((e) => e.type === "tool.started");
    const result = log.find((e) => e.type === "tool.result");
    const progress = log.filter((e) => e.type === "mcp.progress");
    expect(progress.map((e) => e.payload)).toEqual(
      [1, 2, 3].map((i) => ({ server: "files", tool: "count", progress: i, total: 3, message: `step ${i} of 3` })),
    );
    for (const e of progress) {
      expect(e).toMatchObject({ tool_call_id: started.tool_call_id, parent_id: null, depth: 0 });
      expect(e.sequence).toBeGreaterThan(started.sequence);
      expect(e.sequence).toBeLessThan(result.sequence);
    }
    expect(started.payload).toEqual({ name: "files__count", args: { to: 3 }, injected_args: { ui_request_id: "req-7" } });
    expect(result.payload).toMatchObject({
      name: "files__count",
      output: "counted to 3",
      is_error: false,
      metadata: { status: "success", approval_status: "not_required", injected_args: { ui_request_id: "req-7" } },
    });
    expect(log.at(-1)).toMatchObject({ type: "turn.completed", payload: { output: "Counted." } });

    // The server got the original tool name, the args without injected ones, and a progress token.
    expect(await serverCalls(url)).toEqual([{ tool: "count", args: { to: 3 }, progress_token: true, header: null }]);
    // The model saw the result under the exposed name.
    const [first, second] = await requests(scriptId);
    expect(first.tools.map((t: any) => t.function.name)).toEqual(expect.arrayContaining(["files__count", "files__notes_search"]));
    expect(second.messages.find((m: any) => m.role === "tool").content).toBe("counted to 3");
  });

  it("with emit_mcp_progress false emits no mcp.progress and changes nothing else", async () => {
    const steps: Step[] = [{ tool_calls: [call("files__count", { to: 3 })] }, { text: "Counted." }];
    const runs = [];
    for (const emit of [true, false]) {
      const url = space();
      const { sid } = await mcpSession(url, steps, { emit_mcp_progress: emit });
      const { log } = await runTurn(sid);
      runs.push({ log, calls: await serverCalls(url) });
    }
    const [on, off] = runs;
    expect(on!.log.filter((e) => e.type === "mcp.progress")).toHaveLength(3);
    expect(off!.log.filter((e) => e.type === "mcp.progress")).toHaveLength(0);
    // The same events otherwise, the same result, and the server was asked the same way (a token included).
    const shape = (log: any[]) => log.filter((e) => e.type !== "mcp.progress" && e.type !== "model.delta").map((e) => e.type);
    expect(shape(off!.log)).toEqual(shape(on!.log));
    const output = (log: any[]) => log.find((e) => e.type === "tool.result").payload.output;
    expect(output(off!.log)).toBe(output(on!.log));
    expect(off!.calls).toEqual(on!.calls);
  });

  it("an MCP error payload (isError) is an error result with its text", async () => {
    const url = space();
    const { sid } = await mcpSession(url, [{ tool_calls: [call("files__explode")] }, { text: "It exploded." }], {
      mcp_servers: [{ name: "files", url, headers: { "x-test-header": "hello" } }],
    });
    const { log } = await runTurn(sid);
    // The configured headers went with the call.
    expect(await serverCalls(url)).toEqual([{ tool: "explode", args: {}, progress_token: true, header: "hello" }]);
    expect(log.find((e) => e.type === "tool.result").payload).toMatchObject({
      name: "files__explode",
      output: "the widget exploded",
      is_error: true,
      metadata: { status: "error" },
    });
    expect(log.at(-1)).toMatchObject({ type: "turn.completed", payload: { output: "It exploded." } });
  });

  it("a call the server cannot take is an error result the model sees, and the loop goes on", async () => {
    const url = space();
    const { sid } = await mcpSession(url, [{ tool_calls: [call("files__count", { to: 1 })] }, { text: "It failed." }]);
    // Discovery succeeds, then the space refuses tools/call with HTTP 500.
    expect((await api("GET", `/v1/sessions/${sid}/tools`)).status).toBe(200);
    await fetch(`${url}/_break`, { method: "POST" });
    const { log } = await runTurn(sid);
    const result = log.find((e) => e.type === "tool.result").payload;
    expect(result).toMatchObject({ name: "files__count", is_error: true, metadata: { status: "error" } });
    expect(result.output).toMatch(/^MCP server "files" failed the call to "count": HTTP 500: .*the server is broken/);
    expect(log.at(-1)).toMatchObject({ type: "turn.completed", payload: { output: "It failed." } });
  });

  it("spilling and the turn budget apply to MCP tools as to any tool", async () => {
    const url = space();
    const { sid } = await mcpSession(
      url,
      [{ tool_calls: [call("files__count", { to: 1 })] }, { tool_calls: [call("files__count", { to: 1 })] }, { text: "unreached" }],
      { budget: { max_tool_result_bytes: 5, max_total_tool_calls: 1 } },
    );
    const { log } = await runTurn(sid);
    const spilled = log.find((e) => e.type === "output.spilled");
    const result = log.find((e) => e.type === "tool.result");
    expect(spilled.payload).toMatchObject({ bytes: "counted to 1".length, name: "files__count" });
    expect(result.payload.metadata.offloaded_artifact_id).toBe(spilled.payload.artifact_id);
    expect(result.payload.output).toMatch(/^count\n\[truncated: 12 bytes in all; the whole is artifact /);
    const artifact = await SELF.fetch(`https://runtime.test/v1/sessions/${sid}/artifacts/${spilled.payload.artifact_id}`, {
      headers: { authorization: `Bearer ${KEY}` },
    });
    expect(await artifact.text()).toBe("counted to 1");
    // The second call is over max_total_tool_calls: the turn ends there and the server saw one call.
    expect(log.find((e) => e.type === "budget.exceeded").payload).toMatchObject({ reason: "tool_calls", limit: 1 });
    expect(log.at(-1)).toMatchObject({ type: "turn.failed", payload: { error: { code: "budget_exceeded" } } });
    expect(await serverCalls(url)).toHaveLength(1);
  });

  it("a destructive MCP tool in hitl_tools waits for approval, then runs", async () => {
    const url = space();
    const { sid } = await mcpSession(
      url,
      [{ tool_calls: [call("files__delete_file", { path: "a.txt" })] }, { text: "Deleted." }],
      { hitl_tools: ["mcp:files/delete_file"] },
      { classes: ALL_CLASSES },
    );
    const { turn_id } = await submitTurn(sid, "delete a.txt");
    const required = await waitForEvent(sid, (e) => e.type === "action.required");
    expect(required.payload).toMatchObject({ kind: "tool_approval", tool_name: "files__delete_file", args: { path: "a.txt" } });
    expect((await api("GET", `/v1/sessions/${sid}/thread`)).body.status).toBe("waiting_permission");
    expect(await serverCalls(url)).toEqual([]); // nothing ran yet

    const decided = await api("POST", `/v1/sessions/${sid}/actions/${required.action_id}`, { decision: "approve" });
    expect(decided.status).toBe(200);
    const log = (await waitForTurnEnd(sid, turn_id)).filter((e) => e.turn_id === turn_id);
    expect(log.find((e) => e.type === "tool.result").payload).toMatchObject({
      name: "files__delete_file",
      output: "deleted a.txt",
      is_error: false,
      metadata: { status: "success", approval_status: "approved", approval_id: required.action_id },
    });
    expect((await serverCalls(url)).map((c) => c.tool)).toEqual(["delete_file"]);
  });

  it("a server that is down leaves its tools out of the turn with a runtime.warning; the others work", async () => {
    const url = space();
    const { sid } = await mcpSession(url, [{ tool_calls: [call("files__count", { to: 1 })] }, { text: "Done." }], {
      mcp_servers: [
        { name: "files", url },
        { name: "gone", url: testEnv.MCP_DOWN_URL },
      ],
      tools: ["mcp:files/count", "mcp:files/missing", "mcp:gone/*", "calculator"],
    });
    const { log } = await runTurn(sid);
    const warnings = log.filter((e) => e.type === "runtime.warning").map((e) => e.payload);
    expect(warnings).toEqual(
      expect.arrayContaining([
        { code: "mcp_server_unavailable", server: "gone", message: expect.stringMatching(/^MCP server "gone" is unavailable .*left out of this turn$/) },
        { code: "mcp_tool_not_found", server: "files", message: 'MCP server "files" does not offer a tool "missing"' },
      ]),
    );
    const catalog = log.find((e) => e.type === "tool.catalog.resolved");
    expect(catalog.payload.tools.map((t: any) => t.name).sort()).toEqual(["calculator", "files__count"]);
    expect(Math.max(...log.filter((e) => e.type === "runtime.warning").map((e) => e.sequence))).toBeLessThan(catalog.sequence);
    expect(log.find((e) => e.type === "tool.result").payload.output).toBe("counted to 1");
    expect(log.at(-1)).toMatchObject({ type: "turn.completed", payload: { output: "Done." } });
  });

  it("a server that never answers is left out after the discovery timeout, and the turn goes on without it", async () => {
    const url = space();
    const { sid } = await mcpSession(url, [{ tool_calls: [call("files__count", { to: 2 })] }, { text: "Done." }], {
      mcp_servers: [
        { name: "files", url },
        { name: "stuck", url: `${testEnv.MCP_TEST_BASE_URL}/hang-${crypto.randomUUID()}` },
      ],
      tools: ["mcp:files/count", "mcp:stuck/*"],
    });
    const { log } = await runTurn(sid);
    const warning = log.find((e) => e.type === "runtime.warning");
    expect(warning.payload).toMatchObject({ code: "mcp_server_unavailable", server: "stuck" });
    expect(log.find((e) => e.type === "tool.catalog.resolved").payload.tools.map((t: any) => t.name)).toEqual(["files__count"]);
    expect(log.find((e) => e.type === "tool.result").payload.output).toBe("counted to 2");
    expect(log.at(-1)).toMatchObject({ type: "turn.completed", payload: { output: "Done." } });
  });

  it("progress inside a sub-agent carries the sub-agent's parent_id", async () => {
    const url = space();
    const { sid } = await mcpSession(
      url,
      [
        { tool_calls: [call("run_subtask", { title: "count", instructions: "count to two", tools: ["files__count"] })] },
        { tool_calls: [call("files__count", { to: 2 })] },
        { text: "child done" },
        { text: "parent done" },
      ],
      { tools: ["mcp:files/count", "run_subtask"] },
    );
    const { log } = await runTurn(sid);
    const subtask = log.find((e) => e.type === "tool.started" && e.payload.name === "run_subtask");
    const progress = log.filter((e) => e.type === "mcp.progress");
    expect(progress).toHaveLength(2);
    for (const e of progress) expect(e).toMatchObject({ parent_id: subtask.tool_call_id, depth: 1, payload: { server: "files", tool: "count", total: 2 } });
    expect(log.at(-1)).toMatchObject({ type: "turn.completed", payload: { output: "parent done" } });
  });

  it("caches a server's tools per session and refreshes them on notifications/tools/list_changed", async () => {
    const url = space();
    const { sid } = await mcpSession(url, [{ text: "one" }, { text: "two" }, { text: "three" }]);
    const catalog = (log: any[]) => log.find((e) => e.type === "tool.catalog.resolved").payload.tools.map((t: any) => t.name);
    expect(catalog((await runTurn(sid)).log)).not.toContain("files__late_tool");
    expect(catalog((await runTurn(sid)).log)).not.toContain("files__late_tool");
    expect(await serverLists(url)).toBe(1); // the second turn used the cached listing

    await fetch(`${url}/_add_tool`, { method: "POST", body: JSON.stringify({ name: "late_tool" }) });
    // The notification reaches the session's open MCP connection and drops the cached listing; the next
    // discovery (here the tool inventory) lists again, once.
    const deadline = Date.now() + 5000;
    while (!(await api("GET", `/v1/sessions/${sid}/tools`)).body.tools.some((t: any) => t.name === "files__late_tool")) {
      if (Date.now() > deadline) throw new Error("the new tool never appeared");
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(await serverLists(url)).toBe(2);
    expect(catalog((await runTurn(sid)).log)).toContain("files__late_tool");
    expect(await serverLists(url)).toBe(2);
    const log = await events(sid);
    expect(log.filter((e) => e.type === "turn.completed")).toHaveLength(3);
  });
});

describe("the runtime as an MCP server (POST /mcp)", () => {
  const BASE = "https://runtime.test/mcp";
  const selfFetch = ((input: string | URL | Request, init?: RequestInit) => SELF.fetch(input, init)) as typeof fetch;

  it("lists each registered agent as run_agent_<name> and runs turns, with progress, for the SDK's Client", async () => {
    const name = uniqueId("mcpagent").replace(/-/g, "_").slice(0, 40);
    const scriptId = uniqueId("mcpsrv");
    await script(scriptId, [{ tool_calls: [call("calculator", { expression: "6 * 7" })] }, { text: "It is 42." }, { text: "You asked about 6 * 7." }]);
    await createAgent({ name, model: `openai-compatible:${scriptId}`, tools: ["calculator"], instructions: "Answers arithmetic.\nMore." });

    const { client, connect } = mcpClient(selfFetch, BASE, { authorization: `Bearer ${KEY}` });
    await connect();
    const tools = (await client.listTools()).tools;
    const tool = tools.find((t) => t.name === `run_agent_${name}`)!;
    expect(tool).toBeDefined();
    expect(tool.description).toContain("Answers arithmetic.");
    expect(Object.keys(tool.inputSchema.properties ?? {}).sort()).toEqual(["debounce_ms", "input", "on_busy", "session_id"]);
    expect(tool.inputSchema.required).toEqual(["input"]);

    const progress: { progress: number; message?: string }[] = [];
    const first = await client.callTool({ name: tool.name, arguments: { input: "What is 6 * 7?" } }, undefined, { onprogress: (p) => progress.push(p) });
    expect(first.isError).toBeFalsy();
    expect(first.content).toEqual([{ type: "text", text: "It is 42." }]);
    const out = first.structuredContent as { session_id: string; turn_id: string; status: string; stop_reason: string; output: unknown };
    expect(out).toMatchObject({ status: "completed", stop_reason: "final_answer", output: "It is 42." });
    expect(progress.map((p) => p.progress)).toEqual(progress.map((_, i) => i + 1));
    const messages = progress.map((p) => p.message);
    expect(messages).toEqual(expect.arrayContaining([`turn started: agent ${name}`, "tool calculator started", "tool calculator finished"]));

    // The session is a real one: its log has the turn; session_id continues it.
    const log = await events(out.session_id);
    expect(log.find((e) => e.type === "turn.completed")).toMatchObject({ turn_id: out.turn_id, payload: { output: "It is 42." } });
    const second = await client.callTool({ name: tool.name, arguments: { input: "What did I ask?", session_id: out.session_id } });
    expect(second.structuredContent).toMatchObject({ session_id: out.session_id, status: "completed", output: "You asked about 6 * 7." });
    const [, , third] = await requests(scriptId);
    expect(third.messages.some((m: any) => m.role === "user" && m.content === "What is 6 * 7?")).toBe(true);

    // An unknown session is an error result, not a protocol error.
    const missing = await client.callTool({ name: tool.name, arguments: { input: "hi", session_id: "ses_000000000000000000000000" } });
    expect(missing.isError).toBe(true);
    expect((missing.content as any[])[0].text).toMatch(/not found/i);
    await client.close();
  });

  it("takes on_busy: reject is an error result naming the running turn; interrupt supersedes it and answers from the new turn", async () => {
    const name = uniqueId("mcpbusy").replace(/-/g, "_").slice(0, 40);
    const scriptId = uniqueId("mcpbusy");
    await script(scriptId, [{ text: "an answer that never finishes", chunk_size: 4, hang: true }, { text: "Hi." }]);
    await createAgent({ name, model: `openai-compatible:${scriptId}` });
    const sid = (await api("POST", "/v1/sessions", { agent: name })).body.session_id as string;
    const running = await submitTurn(sid, "first");
    await waitForEvent(sid, (e) => e.type === "model.delta" && e.turn_id === running.turn_id);

    const { client, connect } = mcpClient(selfFetch, BASE, { authorization: `Bearer ${KEY}` });
    await connect();
    const tool = `run_agent_${name}`;
    const refused = await client.callTool({ name: tool, arguments: { input: "second", session_id: sid, on_busy: "reject" } });
    expect(refused.isError).toBe(true);
    expect((refused.content as any[])[0].text).toMatch(new RegExp(`^session_busy: Turn '${running.turn_id}' is running`));
    expect((await events(sid)).filter((e) => e.type === "turn.submitted")).toHaveLength(1);
    const bad = await client.callTool({ name: tool, arguments: { input: "second", session_id: sid, on_busy: "later" } });
    expect(bad.isError).toBe(true);

    const replaced = await client.callTool({ name: tool, arguments: { input: "just say hi", session_id: sid, on_busy: "interrupt" } });
    expect(replaced.structuredContent).toMatchObject({ session_id: sid, status: "completed", output: "Hi." });
    const log = await events(sid);
    const second = (replaced.structuredContent as { turn_id: string }).turn_id;
    expect(log.find((e) => e.type === "turn.cancelled" && e.turn_id === running.turn_id).payload).toEqual({ reason: "superseded", by_turn_id: second });
    expect(log.filter((e) => e.type === "turn.submitted").map((e) => e.turn_id)).toEqual([running.turn_id, second]);
    await client.close();
  });

  it("an input over the agent's max_history_tokens is an error result that opens no session", async () => {
    const name = uniqueId("mcptoolong").replace(/-/g, "_").slice(0, 40);
    await createAgent({ name, model: "demo:fast", budget: { max_history_tokens: 50 } });
    const { client, connect } = mcpClient(selfFetch, BASE, { authorization: `Bearer ${KEY}` });
    await connect();
    const refused = await client.callTool({ name: `run_agent_${name}`, arguments: { input: "x".repeat(2000) } });
    expect(refused.isError).toBe(true);
    expect((refused.content as any[])[0].text).toContain("max_history_tokens (50)");
    expect((await api("GET", `/v1/sessions?agent=${name}`)).body.sessions).toEqual([]);
    await client.close();
  });

  /** A registered agent whose model call never finishes, and a session of it. */
  async function hangingAgentSession(prefix: string): Promise<{ name: string; sid: string }> {
    const name = uniqueId(prefix).replace(/-/g, "_").slice(0, 40);
    const scriptId = uniqueId(prefix);
    await script(scriptId, [{ text: "an answer that never finishes", chunk_size: 4, hang: true }]);
    await createAgent({ name, model: `openai-compatible:${scriptId}` });
    const sid = (await api("POST", "/v1/sessions", { agent: name })).body.session_id as string;
    return { name, sid };
  }

  /** Calls run_agent_<name> as a raw Streamable HTTP POST that `gone` can cut off, as a client disconnecting would. */
  async function callRunAgent(name: string, args: Record<string, unknown>, gone: AbortController): Promise<void> {
    const res = await SELF.fetch(BASE, {
      signal: gone.signal,
      method: "POST",
      headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: `run_agent_${name}`, arguments: args } }),
    });
    expect(res.status).toBe(200);
    // Read until `gone` cuts it: a response left unread may be collected, which closes the request early (the turn
    // was once cancelled before its first delta so).
    void res.body?.pipeTo(new WritableStream()).catch(() => {});
  }

  it("a caller that disconnects while its turn runs cancels that turn", async () => {
    const { name, sid } = await hangingAgentSession("mcpgone");
    const gone = new AbortController();
    await callRunAgent(name, { input: "go", session_id: sid }, gone);
    const delta = await waitForEvent(sid, (e) => e.type === "model.delta");
    gone.abort();

    const log = await waitForTurnEnd(sid, delta.turn_id);
    expect(log.at(-1)).toMatchObject({ type: "turn.cancelled", turn_id: delta.turn_id, payload: { reason: "the MCP client disconnected" } });
  });

  it("a caller that disconnects while its turn waits in the queue removes only that turn", async () => {
    const { name, sid } = await hangingAgentSession("mcpqueue");
    const first = await submitTurn(sid, "first");
    await waitForEvent(sid, (e) => e.type === "model.delta" && e.turn_id === first.turn_id);

    const gone = new AbortController();
    await callRunAgent(name, { input: "second", session_id: sid }, gone);
    const queued = await waitForEvent(sid, (e) => e.type === "turn.submitted" && e.turn_id !== first.turn_id);
    expect(queued.payload.queued).toBe(true);
    gone.abort();

    const log = await waitForTurnEnd(sid, queued.turn_id);
    expect(log.filter((e) => e.turn_id === queued.turn_id).map((e) => e.type)).toEqual(["turn.submitted", "turn.cancelled"]);
    expect(log.find((e) => e.type === "turn.cancelled")!.payload.reason).toBe("the MCP client disconnected");
    expect(log.at(-1)).toMatchObject({ type: "queue.changed", payload: { queued: [] } });
    expect((await api("GET", `/v1/sessions/${sid}/thread`)).body).toMatchObject({ active_turn_id: first.turn_id });
    await api("POST", `/v1/sessions/${sid}/interrupt`, {});
  });

  it("requires a bearer key and answers GET with 405", async () => {
    const init = { method: "POST", headers: { "content-type": "application/json", accept: "application/json, text/event-stream" } };
    const body = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list", params: {} });
    expect((await SELF.fetch(BASE, { ...init, body })).status).toBe(401);
    expect((await SELF.fetch(BASE, { ...init, headers: { ...init.headers, authorization: "Bearer wrong" }, body })).status).toBe(401);
    const get = await SELF.fetch(BASE, { headers: { authorization: `Bearer ${KEY}` } });
    expect(get.status).toBe(405);
    await get.text();
    const { connect } = mcpClient(selfFetch, BASE, { authorization: "Bearer wrong" });
    await expect(connect()).rejects.toThrow();
  });
});
