// The runtime as an MCP server: `POST /mcp` speaks Streamable HTTP (stateless: every POST is answered on its
// own, so any Worker instance can serve it) and exposes each registered agent as a tool `run_agent_<name>`
// that runs one turn in a session and returns its output. While the turn runs, its events flow back as
// notifications/progress when the caller sent a progress token, and its questions as elicitation requests
// when the client can answer them (mcp-elicitation.ts).
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import { type CallToolResult, isInitializeRequest, type JSONRPCMessage, type ServerNotification } from "@modelcontextprotocol/sdk/types.js";
// The SDK's default validator (ajv) generates code, which Workers forbid.
import { CfWorkerJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/cfworker";
import { every } from "hono/combine";
import { z } from "zod";
import { sseEvents } from "../engine/sse-read";
import type { Env } from "../env";
import { randomId } from "../ids";
import { openAgent } from "../objects/registry/agent-resolve";
import { registry } from "../objects/registry/registry-object";
import type { AgentConfig } from "../protocol/agent-config";
import { ApiError, unwrap } from "../protocol/errors";
import type { RuntimeEvent } from "../protocol/events";
import { inputText } from "../protocol/input-parts";
import { system } from "../protocol/operations";
import type { Principal } from "../protocol/permissions";
import { SubmitTurnBody } from "../protocol/wire";
import { followTurn, type TerminalEvent, turnOutcome } from "../views/turn-outcome";
import { authenticate } from "./auth";
import { callSession, router, sessionStub } from "./http";
import { askingClient, clientElicits, mcpSessionId, recordAnswers } from "./mcp-elicitation";
import { checkMayOpen, dropRefused, newSession, ownerOf } from "./open-session";
import { guards, route } from "./operation-route";

export const RUN_AGENT_PREFIX = "run_agent_";

export const mcp = router();

// The transport reads the request's body itself, so the route is a plain one; /openapi.json still has it.
const { middleware: _, ...documented } = route(system.mcp);
mcp.openAPIRegistry.registerPath(documented);

mcp.post(system.mcp.path, every(...guards(system.mcp, { readsBody: false })), async (c) => {
  // Answers to our elicitation requests are recorded here; the transport gets the rest (an invalid body whole).
  const body: unknown = await c.req.raw
    .clone()
    .json()
    .catch(() => undefined);
  const rest = body === undefined ? undefined : await recordAnswers(c.env, c.get("principal"), body);
  if (rest === null) return c.body(null, 202);
  const initialize = (Array.isArray(rest) ? rest : [rest]).find(isInitializeRequest);
  const server = await agentServer(c.env, c.get("principal"), (work) => c.executionCtx.waitUntil(work), clientElicits(c.req.raw));
  // Nothing is kept between requests: the session id handed out at initialize only carries what the client can
  // answer, and a later request is served whatever session id it sends.
  const transport = new WebStandardStreamableHTTPServerTransport({
    sessionIdGenerator: initialize ? () => mcpSessionId(initialize.params.capabilities) : undefined,
  });
  await server.connect(transport);
  // A caller that goes away (the enable_request_signal flag) closes the transport, which aborts the running
  // tool calls' signals: their turns are cancelled instead of running on for nobody.
  c.req.raw.signal.addEventListener("abort", () => void transport.close(), { once: true });
  return transport.handleRequest(c.req.raw, rest === body ? undefined : { parsedBody: rest });
});

// No standalone notification stream (GET) and no session to end (DELETE).
mcp.on(["GET", "DELETE"], system.mcp.path, authenticate(undefined), (c) =>
  c.json({ jsonrpc: "2.0", error: { code: -32000, message: "Method not allowed: this server is stateless; use POST" }, id: null }, 405, { allow: "POST" }),
);

/**
 * A server whose tools are the registered agents, as they are now, for the caller `principal` (the key its
 * sessions are opened and its turns submitted by, which quotas count). `waitUntil` keeps work alive past the request.
 */
async function agentServer(env: Env, principal: Principal, waitUntil: (work: Promise<unknown>) => void, elicits: boolean): Promise<McpServer> {
  const server = new McpServer(
    { name: "agent-runtime", version: "0.1.0" },
    { capabilities: { tools: {} }, jsonSchemaValidator: new CfWorkerJsonSchemaValidator() },
  );
  const agents: AgentConfig[] = await registry(env).list();
  for (const agent of agents) {
    const summary = (agent.instructions.split("\n")[0] ?? "").slice(0, 300);
    server.registerTool(
      `${RUN_AGENT_PREFIX}${agent.name}`,
      {
        title: agent.name,
        description: `Runs the agent "${agent.name}" for one turn and returns its final output.${summary ? ` The agent: ${summary}` : ""}`,
        inputSchema: {
          input: SubmitTurnBody.shape.input.describe(
            "The user message for the turn: text, or parts: {type: text, text} and {type: file, data (base64) | file_id | url, media_type, filename?}, e.g. images",
          ),
          session_id: z.string().optional().describe("Continue this session (from an earlier result); a new session is opened when absent"),
          on_busy: SubmitTurnBody.shape.on_busy,
          debounce_ms: SubmitTurnBody.shape.debounce_ms,
        },
        outputSchema: {
          session_id: z.string(),
          turn_id: z.string(),
          status: z.enum(["completed", "failed", "cancelled"]),
          stop_reason: z.string().nullable(),
          output: z.unknown(),
        },
      },
      async ({ session_id, ...body }, extra) => {
        const token = extra._meta?.progressToken;
        const progress =
          token === undefined
            ? undefined
            : (params: { progress: number; message: string }) =>
                extra.sendNotification({ method: "notifications/progress", params: { progressToken: token, ...params } } as ServerNotification);
        // On the stream of this tools/call, which the client reads until the result.
        const elicit = elicits ? async (message: JSONRPCMessage) => server.server.transport?.send(message, { relatedRequestId: extra.requestId }) : undefined;
        try {
          return await runAgentTurn(env, agent.name, body, session_id, { principal, progress, elicit, signal: extra.signal, waitUntil });
        } catch (err) {
          const message = err instanceof ApiError ? `${err.code}: ${err.message}` : err instanceof Error ? err.message : String(err);
          return { content: [{ type: "text", text: message }], isError: true };
        }
      },
    );
  }
  return server;
}

interface Follow {
  /** Who opens the session and submits the turn. */
  principal: Principal;
  progress?: (params: { progress: number; message: string }) => Promise<void>;
  /** Sends elicitation requests (and their cancellations) to the client; absent when it cannot answer one. */
  elicit?: (message: JSONRPCMessage) => Promise<void>;
  /** Aborted when the caller goes away. */
  signal: AbortSignal;
  waitUntil: (work: Promise<unknown>) => void;
}

/**
 * A new session of agent `name` for the call's first input, opened as every surface opens one (open-session.ts):
 * the version the agent's traffic routes to, and an input refused before it is opened opens nothing.
 */
async function openSession(env: Env, principal: Principal, name: string, input: SubmitTurnBody["input"]): Promise<string> {
  checkMayOpen(principal, name);
  const sid = randomId("ses");
  const opened = await openAgent(env, name, ownerOf(principal));
  const first = { input: { text: inputText(input), path: "input" }, turn: input };
  unwrap(await sessionStub(env, sid).create(await newSession(env, principal, sid, opened, { metadata: { source: "mcp" }, ...first })));
  return sid;
}

/** Runs one turn (in `sessionId`, or a new session of agent `name`) and follows its events to the end. */
async function runAgentTurn(
  env: Env,
  name: string,
  body: Omit<SubmitTurnBody, "idempotency_key">,
  sessionId: string | undefined,
  { principal, progress, elicit, signal, waitUntil }: Follow,
): Promise<CallToolResult> {
  const by = principal.id;
  const sid = sessionId ?? (await openSession(env, principal, name, body.input));
  const stub = sessionStub(env, sid);
  if (sessionId) {
    // run_agent_<name> runs <name>: a session of another agent is refused, not run with that agent.
    const { access } = unwrap(await stub.access());
    if (access.agent !== name) {
      return {
        isError: true,
        content: [{ type: "text", text: `Session ${sid} runs agent "${access.agent}", not "${name}"; call run_agent_${access.agent}` }],
      };
    }
  }
  let last_sequence: number;
  try {
    ({ last_sequence } = await callSession(env, sid, "getSession", { by }));
    signal.throwIfAborted();
  } catch (err) {
    // Nothing was submitted to the session this call opened (the caller went away): it goes with the call.
    if (!sessionId) await stub.erase(true).catch(noop);
    throw err;
  }
  const submitted = callSession(env, sid, "submitTurn", { body, by });
  // From here on, a turn nobody follows any more (the caller went away, or following it failed) is cancelled;
  // waitUntil keeps the cancellation alive past the request. A message injected into a running turn leaves
  // that turn to whoever started it.
  const cancelTurn = (reason: string) =>
    waitUntil(submitted.then((t) => (t.status === "injected" ? undefined : stub.cancelTurn(t.turn_id, reason))).catch(() => {}));
  let reader: ReadableStreamDefaultReader<string> | undefined;
  const onAbort = () => {
    cancelTurn("the MCP client disconnected");
    void reader?.cancel().catch(() => {});
  };
  signal.addEventListener("abort", onAbort, { once: true });
  let count = 0;
  const questions = elicit && askingClient(sid, elicit);
  try {
    const { turn_id } = await submitted;
    // The session's log from before the submission, replayed then live: nothing of the turn is missed.
    const res = await stub.fetch(`https://session/v1/sessions/${sid}/events?after=${last_sequence}`, { headers: { accept: "text/event-stream" } });
    if (!res.ok || !res.body) throw new Error(`Following session ${sid} failed (HTTP ${res.status})`);
    reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
    signal.throwIfAborted();
    const end = await followTurn(logEvents(reader), turn_id, async (event) => {
      const message = describe(event);
      if (progress && message) await progress({ progress: ++count, message }).catch(() => {});
      await questions?.(event);
    });
    if (!end) throw new Error(`The event stream of session ${sid} ended before turn ${turn_id} did`);
    return turnResult(sid, turn_id, end);
  } catch (err) {
    if (!signal.aborted) cancelTurn(`the MCP call could not follow the turn: ${err instanceof Error ? err.message : String(err)}`);
    // An input refused in the session this call opened (a file the session does not take) leaves no session.
    if (!sessionId) await submitted.then(noop, (refusal: unknown) => dropRefused(env, sid, refusal));
    throw err;
  } finally {
    signal.removeEventListener("abort", onAbort);
    await reader?.cancel().catch(() => {});
  }
}

const noop = () => {};

/** The events of an SSE stream of the log. */
async function* logEvents(reader: ReadableStreamDefaultReader<string>): AsyncGenerator<RuntimeEvent> {
  for await (const e of sseEvents(reader)) yield JSON.parse(e.data) as RuntimeEvent;
}

function turnResult(session_id: string, turn_id: string, end: TerminalEvent): CallToolResult {
  const { status, output, stop_reason, error, reason } = turnOutcome(end);
  const structuredContent = { session_id, turn_id, status, stop_reason, output };
  if (status === "completed") {
    return { content: [{ type: "text", text: typeof output === "string" ? output : JSON.stringify(output) }], structuredContent };
  }
  const why = status === "failed" ? `The turn failed (${error?.code ?? "error"}): ${error?.message ?? ""}` : `The turn was cancelled: ${reason ?? ""}`;
  return { content: [{ type: "text", text: why.trim() }], structuredContent, isError: true };
}

/** One line per event of interest (streamed text is left out: the result carries it). */
function describe(e: RuntimeEvent): string | null {
  const where = e.depth ? ` (sub-agent, depth ${e.depth})` : "";
  switch (e.type) {
    case "turn.started":
      return `turn started: agent ${e.payload.agent}`;
    case "model.requested":
      return `model call (${e.payload.phase})${where}`;
    case "tool.started":
      return `tool ${e.payload.name} started${where}`;
    case "tool.result":
      return `tool ${e.payload.name} ${e.payload.is_error ? "failed" : "finished"}${where}`;
    case "mcp.progress": {
      const p = e.payload;
      return `${p.server}/${p.tool}: ${p.progress}${p.total != null ? `/${p.total}` : ""}${p.message ? ` ${p.message}` : ""}`;
    }
    case "action.required":
      return e.payload.kind === "user_input"
        ? `waiting for an answer to "${e.payload.question}" (action ${e.action_id})`
        : `waiting for approval of ${e.payload.tool_name} (action ${e.action_id})`;
    case "action.resolved":
      return `action ${e.action_id} ${e.payload.decision}`;
    case "subagent.spawned":
      return `sub-agent started: ${e.payload.title}`;
    case "subagent.completed":
      return "sub-agent finished";
    case "subagent.failed":
      return "sub-agent failed";
    case "runtime.warning":
      return `warning: ${e.payload.message}`;
    default:
      return null;
  }
}
