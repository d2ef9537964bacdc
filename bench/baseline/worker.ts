// The baseline of the loop-overhead benchmark: the same scripted model (the fake Chat Completions server,
// through @ai-sdk/openai-compatible) and the same calculator, in a plain AI SDK loop inside the same
// runtime (workerd), with nothing durable and nothing streamed to anyone.
//
//   POST /run   {model, input, steps, mode: "generate" | "stream", tool?: "lookup"}  -> {ms, steps, tool_calls, text_chars}
//               (tool "lookup": the fake server's webhook tool, POSTed like the runtime's http_tools: the floor
//               of the end-to-end benchmark inside workerd)
//   POST /durable-run {model, steps, mode?}                          -> the same loop with the runtime's commits (durable-loop.ts)
//   POST /micro {op, n, k?, bytes?, clients?}                        -> timings of storage primitives (Micro)
//   GET  /micro/ws                                                   -> a WebSocket attached to Micro

import { DurableObject } from "cloudflare:workers";
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { generateText, jsonSchema, stepCountIs, streamText, type ToolSet, tool } from "ai";
import { evaluateExpression } from "../../src/engine/tools/calculator-parser";
import { lookupTool } from "../lib/lookup-tool.mjs";
import type { DurableLoop } from "./durable-loop";

export { DurableLoop } from "./durable-loop";

interface Env {
  OPENAI_COMPATIBLE_BASE_URL: string;
  MICRO: DurableObjectNamespace<Micro>;
  DURABLE_LOOP: DurableObjectNamespace<DurableLoop>;
}

// The runtime's calculator, as an AI SDK tool with execute (same description and schema).
const calculator = tool({
  description:
    "Evaluates an arithmetic expression: + - * / % ^, parentheses, constants pi e tau, and functions " +
    "sqrt abs sin cos tan asin acos atan ln log log2 exp floor ceil round min max pow hypot.",
  inputSchema: jsonSchema<{ expression: string }>({
    type: "object",
    properties: { expression: { type: "string", description: "for example (2 + 3) * sqrt(16)" } },
    required: ["expression"],
    additionalProperties: false,
  }),
  execute: async ({ expression }) => String(evaluateExpression(expression)),
});

async function runLoop(env: Env, body: { model: string; input?: string; steps: number; mode?: string; tool?: string }) {
  const provider = createOpenAICompatible({ name: "openai-compatible", baseURL: env.OPENAI_COMPATIBLE_BASE_URL, includeUsage: true });
  const options = {
    model: provider.chatModel(body.model),
    messages: [{ role: "user" as const, content: body.input ?? "go" }],
    tools: (body.tool === "lookup" ? { lookup: lookupTool({ tool, jsonSchema }, env.OPENAI_COMPATIBLE_BASE_URL) } : { calculator }) as ToolSet,
    stopWhen: stepCountIs(body.steps),
  };
  const t0 = performance.now();
  if (body.mode === "stream") {
    const result = streamText(options);
    let deltas = 0;
    for await (const part of result.fullStream) if (part.type === "text-delta") deltas += 1;
    const steps = await result.steps;
    return { ms: performance.now() - t0, steps: steps.length, tool_calls: steps.reduce((n, s) => n + s.toolCalls.length, 0), deltas };
  }
  const result = await generateText(options);
  return {
    ms: performance.now() - t0,
    steps: result.steps.length,
    tool_calls: result.steps.reduce((n, s) => n + s.toolCalls.length, 0),
    text_chars: result.text.length,
  };
}

export default {
  async fetch(request: Request, env: Env): Promise<Response> {
    const url = new URL(request.url);
    if (url.pathname === "/healthz") return new Response("ok");
    if (url.pathname === "/run" && request.method === "POST") {
      return Response.json(await runLoop(env, await request.json()));
    }
    // One object for every run, as the runtime's session exists before its turn is timed.
    if (url.pathname === "/durable-run") return env.DURABLE_LOOP.get(env.DURABLE_LOOP.idFromName("floor")).fetch(request);
    if (url.pathname.startsWith("/micro")) {
      return env.MICRO.get(env.MICRO.idFromName(url.searchParams.get("name") ?? "micro")).fetch(request);
    }
    return new Response("not found", { status: 404 });
  },
};

/**
 * Storage and delivery primitives, timed inside one Durable Object with the runtime's SQLite usage
 * patterns: an event row per transaction vs several per transaction, the turn-checkpoint rewrite, and
 * sending one frame to many WebSockets. The client times the whole request and subtracts `noop`, so the
 * numbers do not depend on the clock resolution inside workerd.
 */
export class Micro extends DurableObject<Env> {
  private seq = 0;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    ctx.storage.sql.exec(`CREATE TABLE IF NOT EXISTS events (sequence INTEGER PRIMARY KEY, event_id TEXT NOT NULL UNIQUE, type TEXT NOT NULL, turn_id TEXT, body TEXT NOT NULL);
      CREATE INDEX IF NOT EXISTS events_turn ON events (turn_id, sequence);
      CREATE TABLE IF NOT EXISTS turn_state (turn_id TEXT PRIMARY KEY, state TEXT NOT NULL);
      CREATE TABLE IF NOT EXISTS turn_messages (turn_id TEXT NOT NULL, idx INTEGER NOT NULL, message TEXT NOT NULL, PRIMARY KEY (turn_id, idx));`);
    this.seq = ctx.storage.sql.exec<{ s: number | null }>("SELECT max(sequence) AS s FROM events").one().s ?? 0;
  }

  override async fetch(request: Request): Promise<Response> {
    const url = new URL(request.url);
    if (url.pathname === "/micro/ws") {
      const pair = new WebSocketPair();
      this.ctx.acceptWebSocket(pair[1]);
      return new Response(null, { status: 101, webSocket: pair[0] });
    }
    const { op, n, k = 1, bytes = 300, state_bytes = 1500, messages = 0 } = (await request.json()) as Record<string, any>;
    const sql = this.ctx.storage.sql;
    const body = "x".repeat(bytes);
    const state = JSON.parse(JSON.stringify({ turn_id: "trn_bench", blob: "s".repeat(state_bytes) }));
    const insert = () => {
      this.seq += 1;
      sql.exec(
        "INSERT INTO events (sequence, event_id, type, turn_id, body) VALUES (?, ?, ?, ?, ?)",
        this.seq,
        `evt_${this.seq}_${Math.random()}`,
        "model.delta",
        "trn_bench",
        body,
      );
    };
    const checkpoint = () => {
      // What SessionStore.saveTurnState does: count the stored messages, then rewrite the scalar state.
      sql.exec<{ n: number }>("SELECT count(*) AS n FROM turn_messages WHERE turn_id = ?", "trn_bench").one();
      sql.exec("INSERT OR REPLACE INTO turn_state (turn_id, state) VALUES (?, ?)", "trn_bench", JSON.stringify(state));
    };
    if (op === "seed_messages") {
      sql.exec("DELETE FROM turn_messages");
      for (let i = 0; i < messages; i++) sql.exec("INSERT INTO turn_messages (turn_id, idx, message) VALUES (?, ?, ?)", "trn_bench", i, "m".repeat(200));
    }
    const t0 = performance.now();
    switch (op) {
      case "noop":
      case "seed_messages":
        break;
      case "tx_per_event": // one transactionSync per event (the runtime, for every model.delta)
        for (let i = 0; i < n; i++) this.ctx.storage.transactionSync(() => insert());
        break;
      case "tx_batched": // k events per transaction
        for (let i = 0; i < n; i += k)
          this.ctx.storage.transactionSync(() => {
            for (let j = 0; j < k && i + j < n; j++) insert();
          });
        break;
      case "tx_checkpoint": // one event plus the checkpoint rewrite per transaction (tool.started, tool.result, ...)
        for (let i = 0; i < n; i++)
          this.ctx.storage.transactionSync(() => {
            insert();
            checkpoint();
          });
        break;
      case "checkpoint_only":
        for (let i = 0; i < n; i++) this.ctx.storage.transactionSync(() => checkpoint());
        break;
      case "stringify_state": // the JSON.stringify of the checkpoint alone
        for (let i = 0; i < n; i++) JSON.stringify(state);
        break;
      case "fetch": // n sequential subrequests to the fake model server (GET /stats)
      case "write_then_fetch": // the same, each right after a one-row write transaction (output gate)
      case "yield": // n turns of the event loop (setTimeout 0), the reference for the next two
      case "write_then_yield": {
        // one committed write per event-loop turn, as the runtime does per event
        for (let i = 0; i < n; i++) {
          if (op.startsWith("write_then")) this.ctx.storage.transactionSync(() => insert());
          if (op.endsWith("fetch")) await (await fetch(`${this.env.OPENAI_COMPATIBLE_BASE_URL.replace(/\/v1$/, "")}/stats`)).arrayBuffer();
          else await new Promise((r) => setTimeout(r, 0));
        }
        break;
      }
      case "batched_then_yield": // k writes per event-loop turn
        for (let i = 0; i < n; i += k) {
          this.ctx.storage.transactionSync(() => {
            for (let j = 0; j < k && i + j < n; j++) insert();
          });
          await new Promise((r) => setTimeout(r, 0));
        }
        break;
      case "ws_send": {
        // one frame to every attached socket, n times (the broadcast of the stored body)
        const sockets = this.ctx.getWebSockets();
        for (let i = 0; i < n; i++) for (const ws of sockets) ws.send(body);
        break;
      }
      case "ws_send_restringify": {
        // the same, serializing the event again for each socket
        const sockets = this.ctx.getWebSockets();
        const ev = { type: "model.delta", sequence: 1, payload: { text: body.slice(0, 4) }, pad: body };
        for (let i = 0; i < n; i++) for (const ws of sockets) ws.send(JSON.stringify(ev));
        break;
      }
      default:
        return Response.json({ error: `unknown op ${op}` }, { status: 400 });
    }
    const inner = performance.now() - t0;
    return Response.json({ op, n, k, inner_ms: inner, sockets: this.ctx.getWebSockets().length, rows: this.seq });
  }

  override async webSocketMessage(): Promise<void> {}
  override async webSocketClose(ws: WebSocket, code: number): Promise<void> {
    try {
      ws.close(code);
    } catch {
      // closed
    }
  }
}
