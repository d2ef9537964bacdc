// The durable floor of the end-to-end benchmark: the bare generateText loop with the webhook tool,
// run inside a Durable Object that commits to its SQLite at the points where the runtime's guarantees
// require a commit, and no others:
//   - before each model call: the previous step's tool results and the call's start, in one transaction
//     (a result is durable before the model hears of it, a call is durable before its request goes out);
//   - when the model's answer names tool calls: the answer and every call's start, in one commit before the
//     first webhook request goes out (the step's executes run in one task, so their writes share it);
//   - at the end: the answer and the turn's end.
// Nothing is sent to anyone and nothing else is stored: what this costs over the plain loop in the same
// workerd is what durability costs on this platform (locally, a commit ends in an fsync on the thread).
// `mode: "stream"` runs the same loop with streamText, reading each model answer as it streams in (as the
// runtime must, to record and forward its deltas), still sending and storing nothing more.

import { DurableObject } from "cloudflare:workers";
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { generateText, jsonSchema, stepCountIs, streamText, tool } from "ai";
import { lookupTool } from "../lib/lookup-tool.mjs";

interface Env {
  OPENAI_COMPATIBLE_BASE_URL: string;
}

export class DurableLoop extends DurableObject<Env> {
  private seq = 0;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    ctx.storage.sql.exec(
      "CREATE TABLE IF NOT EXISTS events (sequence INTEGER PRIMARY KEY, event_id TEXT NOT NULL UNIQUE, type TEXT NOT NULL, turn_id TEXT, body TEXT NOT NULL)",
    );
    this.seq = ctx.storage.sql.exec<{ s: number | null }>("SELECT max(sequence) AS s FROM events").one().s ?? 0;
  }

  override async fetch(request: Request): Promise<Response> {
    const { model, steps, input, mode } = (await request.json()) as { model: string; steps: number; input?: string; mode?: string };
    const turnId = `trn_${crypto.randomUUID()}`;
    const sql = this.ctx.storage.sql;
    const write = (type: string, payload: unknown) => {
      this.seq += 1;
      const body = JSON.stringify({ type, sequence: this.seq, turn_id: turnId, timestamp: Date.now(), payload });
      sql.exec("INSERT INTO events (sequence, event_id, type, turn_id, body) VALUES (?, ?, ?, ?, ?)", this.seq, crypto.randomUUID(), type, turnId, body);
    };
    const commit = (rows: [string, unknown][]) =>
      this.ctx.storage.transactionSync(() => {
        for (const [type, payload] of rows) write(type, payload);
      });
    const baseURL = this.env.OPENAI_COMPATIBLE_BASE_URL;
    const provider = createOpenAICompatible({ name: "openai-compatible", baseURL, includeUsage: true });
    // Results wait in memory for the commit of the next call's start.
    let results: [string, unknown][] = [];
    let answered = -1;
    let step = 0;
    const plain = lookupTool({ tool, jsonSchema }, baseURL);
    const durable = {
      ...plain,
      execute: async (args: { query: string }, options: Parameters<NonNullable<typeof plain.execute>>[1]) => {
        // Implicit writes of one task commit together, and the output gate holds the fetch until they have.
        if (answered !== step) {
          answered = step;
          write("model.completed", { step });
        }
        write("tool.started", { tool_call_id: options.toolCallId, args });
        const result = await plain.execute!(args, options);
        results.push(["tool.result", { tool_call_id: options.toolCallId, result }]);
        return result;
      },
    };
    const t0 = performance.now();
    commit([["turn.started", { input: input ?? "go" }]]);
    const options = {
      model: provider.chatModel(model),
      messages: [{ role: "user" as const, content: input ?? "go" }],
      tools: { lookup: durable },
      stopWhen: stepCountIs(steps),
      prepareStep: ({ stepNumber }: { stepNumber: number }) => {
        step = stepNumber;
        commit([...results, ["model.requested", { step: stepNumber }]]);
        results = [];
        return undefined;
      },
    };
    let text: string;
    let stepCount: number;
    if (mode === "stream") {
      const streamed = streamText(options);
      text = await streamed.text;
      stepCount = (await streamed.steps).length;
    } else {
      const result = await generateText(options);
      text = result.text;
      stepCount = result.steps.length;
    }
    commit([
      ["model.completed", { text }],
      ["turn.completed", { output: text }],
    ]);
    return Response.json({ ms: performance.now() - t0, steps: stepCount, rows: this.seq });
  }
}
