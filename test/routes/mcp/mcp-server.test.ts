// The runtime's MCP server (POST /mcp) driven by the official SDK's Client over Streamable HTTP through SELF:
// ask_user as MCP elicitation (answered, declined, a client without the capability), images in a
// run_agent_<name> input, and on_busy inject on a call that continues a session (reject and interrupt: mcp.test.ts).
import { SELF } from "cloudflare:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { type ElicitRequest, ElicitRequestSchema, type ElicitResult } from "@modelcontextprotocol/sdk/types.js";
import { CfWorkerJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/cfworker";
import { describe, expect, it } from "vitest";
import { api, createAgent, events, KEY, submitTurn, waitForEvent } from "../../support/api";
import { requests, type Step, script, uniqueId } from "../../support/fake-model";
import { tinyPng, toBase64 } from "../../support/files";

const BASE = "https://runtime.test/mcp";

/** What the client POSTed (JSON-RPC bodies), so a test can see which answers it sent. */
function recordingFetch(posted: unknown[]): typeof fetch {
  return (async (input: string | URL | Request, init?: RequestInit) => {
    if (init?.method === "POST" && typeof init.body === "string") posted.push(JSON.parse(init.body));
    return SELF.fetch(input, init);
  }) as typeof fetch;
}

/**
 * A connected SDK client. With `answer`, it declares form elicitation and answers each elicitation/create
 * with it (keeping the requests in `asked`).
 */
async function connect(answer?: (req: ElicitRequest, signal: AbortSignal) => ElicitResult | Promise<ElicitResult>) {
  const asked: ElicitRequest[] = [];
  const posted: unknown[] = [];
  const client = new Client(
    { name: "test", version: "1.0.0" },
    { capabilities: answer ? { elicitation: { form: {} } } : {}, jsonSchemaValidator: new CfWorkerJsonSchemaValidator() },
  );
  if (answer) {
    client.setRequestHandler(ElicitRequestSchema, async (req, extra) => {
      asked.push(req);
      return answer(req, extra.signal);
    });
  }
  const transport = new StreamableHTTPClientTransport(new URL(BASE), {
    fetch: recordingFetch(posted),
    requestInit: { headers: { authorization: `Bearer ${KEY}` } },
  });
  await client.connect(transport);
  return { client, asked, posted };
}

/** A registered agent with ask_user whose model is scripted (or the demo model); its tool name. */
async function agent(prefix: string, model: string, extra: Record<string, unknown> = {}): Promise<string> {
  const name = uniqueId(prefix).replace(/-/g, "_").slice(0, 40);
  await createAgent({ name, model, tools: ["ask_user"], ...extra });
  return `run_agent_${name}`;
}

async function scripted(prefix: string, steps: Step[]): Promise<{ tool: string; scriptId: string }> {
  const scriptId = uniqueId(prefix);
  await script(scriptId, steps);
  return { tool: await agent(prefix, `openai-compatible:${scriptId}`), scriptId };
}

/** The (only) session of a run_agent tool's agent, once the call has opened it. */
async function sessionOf(tool: string): Promise<string> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const sessions = (await api("GET", `/v1/sessions?agent=${tool.slice("run_agent_".length)}`)).body.sessions;
    if (sessions.length > 0) return sessions[0].session_id as string;
    if (Date.now() > deadline) throw new Error(`no session of ${tool}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

type Out = { session_id: string; turn_id: string; status: string; output: unknown };
const toolMessage = (request: any) => request.messages.find((m: any) => m.role === "tool").content;
const ORDER = {
  type: "object",
  properties: {
    size: { type: "string", enum: ["S", "M", "L"], description: "shirt size" },
    quantity: { type: "integer", minimum: 1, maximum: 10 },
    gift: { type: "boolean" },
  },
  required: ["size", "quantity"],
};

describe("ask_user over MCP elicitation", () => {
  it("asks a client that declared elicitation with elicitation/create; its answer is recorded and the model uses it", async () => {
    const { tool, scriptId } = await scripted("mcpask", [
      { tool_calls: [{ name: "ask_user", arguments: { question: "What should I order?", response_schema: ORDER } }] },
      { text: "Ordered two M shirts." },
    ]);
    const { client, asked } = await connect(() => ({ action: "accept", content: { size: "M", quantity: 2 } }));
    const res = await client.callTool({ name: tool, arguments: { input: "order shirts" } });
    expect(res.isError).toBeFalsy();
    expect(res.structuredContent).toMatchObject({ status: "completed", output: "Ordered two M shirts." });

    // The form is the question's schema itself (a flat object of primitive fields).
    expect(asked).toHaveLength(1);
    expect(asked[0]!.params).toEqual({ mode: "form", message: "What should I order?", requestedSchema: ORDER });
    // The answer went through the action like any answer: recorded, by the caller's key, and given to the model.
    const { session_id, turn_id } = res.structuredContent as Out;
    const log = (await events(session_id)).filter((e) => e.turn_id === turn_id);
    const required = log.find((e) => e.type === "action.required");
    expect(log.find((e) => e.type === "action.resolved")).toMatchObject({
      action_id: required.action_id,
      payload: { decision: "answered", response: { size: "M", quantity: 2 }, by: expect.stringMatching(/^key_/) },
    });
    const [, second] = await requests(scriptId);
    expect(JSON.parse(toolMessage(second))).toEqual({ size: "M", quantity: 2 });
    await client.close();
  });

  it("wraps a question whose answer is not an object in one field and unwraps the answer (the demo model's choices)", async () => {
    const tool = await agent("mcpdemo", "demo:fast");
    const { client, asked } = await connect(() => ({ action: "accept", content: { answer: "L" } }));
    const res = await client.callTool({ name: tool, arguments: { input: "ask me: which size? [S|M|L]" } });
    expect(asked.map((r) => r.params)).toEqual([
      {
        mode: "form",
        message: "Which size?",
        requestedSchema: { type: "object", properties: { answer: { type: "string", enum: ["S", "M", "L"] } }, required: ["answer"] },
      },
    ]);
    expect(res.structuredContent).toMatchObject({ status: "completed", output: "You answered: L" });
    await client.close();
  });

  it("a declined form gives the model the declined result", async () => {
    const { tool, scriptId } = await scripted("mcpdecline", [
      { tool_calls: [{ name: "ask_user", arguments: { question: "Proceed?", choices: ["yes", "no"] } }] },
      { text: "I stopped." },
    ]);
    const { client } = await connect(() => ({ action: "decline" }));
    const res = await client.callTool({ name: tool, arguments: { input: "go" } });
    expect(res.structuredContent).toMatchObject({ status: "completed", output: "I stopped." });
    const [, second] = await requests(scriptId);
    expect(JSON.parse(toolMessage(second))).toEqual({ status: "rejected", message: "The user declined to answer. Declined in the MCP client." });
    const { session_id } = res.structuredContent as Out;
    expect((await events(session_id)).find((e) => e.type === "action.resolved").payload).toMatchObject({ decision: "rejected" });
    await client.close();
  });

  it("an answer the question's schema refuses is refused with nothing recorded, and the question still waits", async () => {
    const { tool } = await scripted("mcpbad", [
      { tool_calls: [{ name: "ask_user", arguments: { question: "What should I order?", response_schema: ORDER } }] },
      { text: "Ordered." },
    ]);
    const { client, asked } = await connect(() => ({ action: "accept", content: { size: "XL", quantity: 2 } }));
    const errors: Error[] = [];
    client.onerror = (e) => errors.push(e);
    const call = client.callTool({ name: tool, arguments: { input: "order" } });
    const deadline = Date.now() + 10_000;
    while (errors.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    expect(asked).toHaveLength(1);
    expect(String(errors[0])).toMatch(/validation_failed.*response\.size/);

    const sid = await sessionOf(tool);
    const thread = (await api("GET", `/v1/sessions/${sid}/thread`)).body;
    expect(thread.pending_actions).toHaveLength(1);
    expect((await events(sid)).some((e) => e.type === "action.resolved")).toBe(false);
    const answered = await api("POST", `/v1/sessions/${sid}/actions/${thread.pending_actions[0].action_id}`, { response: { size: "S", quantity: 1 } });
    expect(answered.status).toBe(200);
    expect((await call).structuredContent).toMatchObject({ status: "completed", output: "Ordered." });
    await client.close();
  });

  it("a client without the capability is not asked: the call waits for an answer through /v1, as before", async () => {
    const { tool, scriptId } = await scripted("mcpnoelicit", [
      { tool_calls: [{ name: "ask_user", arguments: { question: "Your name?" } }] },
      { text: "Hello, Grace." },
    ]);
    const { client, posted } = await connect();
    const progress: string[] = [];
    const call = client.callTool({ name: tool, arguments: { input: "greet me" } }, undefined, { onprogress: (p) => progress.push(p.message ?? "") });
    const sid = await sessionOf(tool);
    const required = await waitForEvent(sid, (e) => e.type === "action.required");
    expect((await api("POST", `/v1/sessions/${sid}/actions/${required.action_id}`, { response: "Grace" })).status).toBe(200);
    const res = await call;
    expect(res.structuredContent).toMatchObject({ status: "completed", output: "Hello, Grace." });
    expect(progress).toContain(`waiting for an answer to "Your name?" (action ${required.action_id})`);
    // The client never answered an elicitation (it was never asked one).
    expect(posted.some((m: any) => typeof m.id === "string" && m.id.startsWith("elicitation:"))).toBe(false);
    const [, second] = await requests(scriptId);
    expect(toolMessage(second)).toBe("Grace");
    await client.close();
  });

  it("a question answered through /v1 while the client's form is open withdraws the form (notifications/cancelled)", async () => {
    const { tool } = await scripted("mcpwithdraw", [{ tool_calls: [{ name: "ask_user", arguments: { question: "Your name?" } }] }, { text: "Hello, Ada." }]);
    let withdrawn: unknown;
    // The "user" never submits the form; it stays open until the server withdraws it.
    const { client, asked, posted } = await connect(
      (_req, signal) =>
        new Promise((resolve) =>
          signal.addEventListener("abort", () => {
            withdrawn = signal.reason;
            resolve({ action: "cancel" });
          }),
        ),
    );
    const call = client.callTool({ name: tool, arguments: { input: "greet me" } });
    const sid = await sessionOf(tool);
    const required = await waitForEvent(sid, (e) => e.type === "action.required");
    const deadline = Date.now() + 10_000;
    while (asked.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    expect((await api("POST", `/v1/sessions/${sid}/actions/${required.action_id}`, { response: "Ada" })).status).toBe(200);
    expect((await call).structuredContent).toMatchObject({ status: "completed", output: "Hello, Ada." });
    expect(withdrawn).toBe("The question was resolved elsewhere (answered)");
    // The withdrawn form sent no answer.
    expect(posted.some((m: any) => typeof m.id === "string" && m.id.startsWith("elicitation:"))).toBe(false);
    await client.close();
  });

  it("a question whose schema no MCP form can ask (a nested object) is not elicited: it waits for an answer through /v1", async () => {
    const ADDRESS = { type: "object", properties: { address: { type: "object", properties: { city: { type: "string" } } } } };
    const { tool } = await scripted("mcpnested", [
      { tool_calls: [{ name: "ask_user", arguments: { question: "Where to?", response_schema: ADDRESS } }] },
      { text: "Shipping to Oslo." },
    ]);
    const { client, asked } = await connect(() => ({ action: "decline" }));
    const call = client.callTool({ name: tool, arguments: { input: "ship it" } });
    const sid = await sessionOf(tool);
    const required = await waitForEvent(sid, (e) => e.type === "action.required");
    expect((await api("POST", `/v1/sessions/${sid}/actions/${required.action_id}`, { response: { address: { city: "Oslo" } } })).status).toBe(200);
    expect((await call).structuredContent).toMatchObject({ status: "completed", output: "Shipping to Oslo." });
    expect(asked).toEqual([]);
    await client.close();
  });
  it("a question whose field's type is named like an object's property (constructor) is not elicited: it waits for an answer through /v1", async () => {
    const ODD = { type: "object", properties: { pick: { type: "constructor" } } };
    const { tool } = await scripted("mcpodd", [{ tool_calls: [{ name: "ask_user", arguments: { question: "Which?", response_schema: ODD } }] }]);
    const { client, asked } = await connect(() => ({ action: "decline" }));
    const call = client.callTool({ name: tool, arguments: { input: "pick" } });
    const sid = await sessionOf(tool);
    const required = await waitForEvent(sid, (e) => e.type === "action.required");
    // No answer fits a type no schema knows: the question waits (not declined by a form), until the turn is stopped.
    const answered = await api("POST", `/v1/sessions/${sid}/actions/${required.action_id}`, { response: { pick: "a" } });
    expect(answered.body.error).toMatchObject({ code: "validation_failed", details: [{ path: "response.pick" }] });
    expect((await api("GET", `/v1/sessions/${sid}/thread`)).body.pending_actions).toHaveLength(1);
    await api("POST", `/v1/sessions/${sid}/interrupt`);
    expect((await call).structuredContent).toMatchObject({ status: "cancelled" });
    expect(asked).toEqual([]);
    await client.close();
  });
});

describe("run_agent_<name> opens a session as every surface does", () => {
  it("the version the agent's traffic routes to, with its limits, recorded on the session; a refused first input leaves none", async () => {
    const name = uniqueId("mcpver").replace(/-/g, "_").slice(0, 40);
    // Version 1 (where the traffic goes) has a small history budget; version 2, the newest, has none.
    await createAgent({ name, model: "demo:fast", instructions: "one", budget: { max_history_tokens: 100 } });
    await createAgent({ name, model: "demo:fast", instructions: "two" });
    await api("PUT", `/v1/agents/${name}/labels/production`, { version: 1 });
    await api("PUT", `/v1/agents/${name}/traffic`, { routes: [{ label: "production", weight: 1 }] });
    const { client } = await connect();
    const tool = `run_agent_${name}`;
    const res = await client.callTool({ name: tool, arguments: { input: "hello" } });
    const { session_id, status } = res.structuredContent as Out;
    expect(status).toBe("completed");
    const session = (await api("GET", `/v1/sessions/${session_id}`)).body;
    expect(session).toMatchObject({ agent_version: 1, agent: { instructions: "one" }, metadata: { source: "mcp" } });

    // Version 1's budget refuses a long first input before anything is opened (version 2 would take it).
    const long = await client.callTool({ name: tool, arguments: { input: "x ".repeat(400) } });
    expect(long.isError).toBe(true);
    expect((long.content as any[])[0].text).toMatch(/^validation_failed: .*input: is too long for this agent/);
    // Bytes that are not the PNG they claim are refused by the session once opened: it is erased with the refusal.
    const png = [{ type: "file", data: toBase64(new TextEncoder().encode("not a png")), media_type: "image/png" }];
    const bad = await client.callTool({ name: tool, arguments: { input: png } });
    expect((bad.content as any[])[0].text).toMatch(/^validation_failed: .*input\[0\]/);
    expect((await api("GET", `/v1/sessions?agent=${name}`)).body.sessions.map((s: any) => s.session_id)).toEqual([session_id]);
    await client.close();
  });
});

describe("run_agent_<name> input and on_busy", () => {
  it("takes image parts as base64 data and hands the model exactly those bytes; a part that is not what it claims is refused", async () => {
    const { tool, scriptId } = await scripted("mcpimg", [{ text: "A blue square." }]);
    const { client } = await connect();
    const listed = (await client.listTools()).tools.find((t) => t.name === tool)!;
    expect(Object.keys(listed.inputSchema.properties ?? {}).sort()).toEqual(["debounce_ms", "input", "on_busy", "session_id"]);

    const png = await tinyPng(3, [0, 0, 255]);
    const input = [
      { type: "text", text: "What is this?" },
      { type: "file", data: toBase64(png), media_type: "image/png", filename: "sq.png" },
    ];
    const res = await client.callTool({ name: tool, arguments: { input } });
    expect(res.structuredContent).toMatchObject({ status: "completed", output: "A blue square." });
    const [request] = await requests(scriptId);
    const content = request.messages.find((m: any) => m.role === "user").content;
    expect(content).toEqual([
      { type: "text", text: "What is this?" },
      { type: "image_url", image_url: { url: `data:image/png;base64,${toBase64(png)}` } },
    ]);
    const { session_id } = res.structuredContent as Out;
    const files = (await api("GET", `/v1/sessions/${session_id}/files`)).body.files;
    expect(files).toEqual([expect.objectContaining({ media_type: "image/png", filename: "sq.png", size: png.length })]);

    // The same checks as a turn over HTTP: bytes that are not a PNG are refused, and no turn is stored.
    const bad = await client.callTool({
      name: tool,
      arguments: { session_id, input: [{ type: "file", data: toBase64(new TextEncoder().encode("not a png")), media_type: "image/png" }] },
    });
    expect(bad.isError).toBe(true);
    expect((bad.content as any[])[0].text).toMatch(/^validation_failed: .*input\[0\]/);
    expect((await events(session_id)).filter((e) => e.type === "turn.submitted")).toHaveLength(1);
    // Refused in a new session: the call leaves no session behind.
    const refused = await client.callTool({ name: tool, arguments: { input: [{ type: "file", data: "%%%", media_type: "image/png" }] } });
    expect((refused.content as any[])[0].text).toMatch(/^validation_failed: .*input\[0\]\.data: is not valid base64/);
    expect((await api("GET", `/v1/sessions?agent=${tool.slice("run_agent_".length)}`)).body.sessions.map((s: any) => s.session_id)).toEqual([session_id]);
    await client.close();
  });

  it("on_busy inject joins the running turn as a live message, and the call returns that turn's result", async () => {
    const { tool, scriptId } = await scripted("mcpinject", [
      { text: "A slow first answer, streamed two characters at a time.", chunk_size: 2, delay_ms: 60 },
      { text: "With the follow-up." },
    ]);
    const sid = (await api("POST", "/v1/sessions", { agent: tool.slice("run_agent_".length) })).body.session_id as string;
    const { client } = await connect();
    const first = await submitTurn(sid, "question");
    await waitForEvent(sid, (e) => e.type === "model.delta" && e.turn_id === first.turn_id);
    const res = await client.callTool({ name: tool, arguments: { input: "follow-up", session_id: sid, on_busy: "inject" } });
    expect(res.structuredContent).toMatchObject({ turn_id: first.turn_id, status: "completed", output: "With the follow-up." });
    const log = await events(sid);
    expect(log.filter((e) => e.type === "turn.submitted")).toHaveLength(1);
    expect(log.find((e) => e.type === "message.injected")).toMatchObject({ turn_id: first.turn_id, payload: { content: "follow-up" } });
    const [, second] = await requests(scriptId);
    expect(second.messages.at(-1)).toEqual({ role: "user", content: "follow-up" });
    await client.close();
  });
});
