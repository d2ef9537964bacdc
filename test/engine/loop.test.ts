// The engine (src/engine/loop.ts) driven directly: the AI SDK's mock model plays a script of streamed
// replies, in-memory ports record every event and checkpoint, and tests assert on the recorded log.
import { APICallError, type LanguageModelV3Prompt, type LanguageModelV3StreamPart } from "@ai-sdk/provider";
import { type ModelMessage, simulateReadableStream } from "ai";
import { describe, expect, it } from "vitest";
import { MAX_PARALLEL_TOOL_CALLS, runTurn } from "../../src/engine/loop";
import type { ToolContext } from "../../src/engine/tools/types";
import { finalMessages, type TurnState } from "../../src/engine/turn-state";
import type { EventDraft } from "../../src/protocol/events";
import { MemoryPorts, snapshot } from "./support/memory-ports";
import {
  type CallSpec,
  callTools,
  countingTool,
  defineTool,
  finishPart,
  makeSetup,
  OPEN_SCHEMA,
  payloadOf,
  prompts,
  type Reply,
  runNewTurn,
  say,
  scriptedModel,
  TURN_ID,
  textParts,
  tokens,
  usage,
} from "./support/mock-model";

// ---------------------------------------------------------------------------------------------------
// Helpers (the scripted model, tools and setups are in ./support/mock-model)

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** The tool-call ids of every tool message of a prompt, in order. */
function toolResultIds(prompt: LanguageModelV3Prompt): string[] {
  return prompt.flatMap((m) => (m.role === "tool" ? m.content.map((p) => (p.type === "tool-result" ? p.toolCallId : "?")) : []));
}

/** Every tool call of the given messages is answered by a tool result. */
function expectEveryCallAnswered(messages: ModelMessage[]): void {
  const callIds: string[] = [];
  const resultIds: string[] = [];
  for (const m of messages) {
    if (typeof m.content === "string") continue;
    for (const part of m.content) {
      if (part.type === "tool-call") callIds.push(part.toolCallId);
      if (part.type === "tool-result") resultIds.push(part.toolCallId);
    }
  }
  expect(callIds.length).toBeGreaterThan(0);
  expect(resultIds.sort()).toEqual(callIds.sort());
}

// ---------------------------------------------------------------------------------------------------

describe("runTurn: model steps", () => {
  it("streams a text-only answer and completes with final_answer", async () => {
    const model = scriptedModel(say(["Hel", "lo", " there"], usage(11, 4)));
    const { ports } = await runNewTurn(makeSetup({ model }));

    expect(ports.types()).toEqual(["model.requested", "model.delta", "model.delta", "model.delta", "model.completed", "cost.recorded", "turn.completed"]);
    const [requested, ...rest] = ports.events;
    expect(requested).toEqual({
      type: "model.requested",
      turn_id: TURN_ID,
      step_id: expect.any(String),
      payload: {
        model: "openai:gpt-4o",
        phase: "executor",
        step: 1,
        request_hash: expect.stringMatching(/^[0-9a-f]{64}$/),
        // The most the call may cost, recorded before it starts: the prompt estimated, the default output cap, at gpt-4o's prices.
        reservation: { input_tokens: expect.any(Number), max_output_tokens: 4096, cost_usd: expect.any(Number) },
      },
    });
    const { input_tokens, cost_usd } = requested!.payload.reservation;
    expect(cost_usd).toBeCloseTo((input_tokens * 2.5 + 4096 * 10) / 1e6, 12);
    // Every model event of the call carries the call's step id.
    for (const e of rest.slice(0, 4)) expect(e).toMatchObject({ turn_id: TURN_ID, step_id: requested!.step_id });
    expect(ports.ofType("model.delta").map((e) => e.payload.text)).toEqual(["Hel", "lo", " there"]);
    expect(ports.ofType("model.completed")[0]!.payload).toEqual({ usage: tokens(11, 4), finish_reason: "stop" });

    expect(ports.terminal).toEqual({
      type: "turn.completed",
      turn_id: TURN_ID,
      payload: { output: "Hello there", stop_reason: "final_answer", usage: tokens(11, 4), cost_usd: expect.any(Number) },
    });
    expect(ports.finalState!.messages).toEqual([
      { role: "user", content: "hello" },
      { role: "assistant", content: [{ type: "text", text: "Hello there" }] },
    ]);
    expect(prompts(model)).toEqual([[{ role: "user", content: [{ type: "text", text: "hello" }] }]]);
    expect(ports.refused).toEqual([]);
  });

  it("sends config.instructions as the system message and the history before the turn's messages", async () => {
    const history: ModelMessage[] = [
      { role: "user", content: "What is the capital of France?" },
      { role: "assistant", content: [{ type: "text", text: "Paris." }] },
    ];
    const historyBefore = snapshot(history);
    const model = scriptedModel(say("About 2.1 million."));
    const { ports } = await runNewTurn(makeSetup({ model, history, config: { instructions: "You are terse." } }), "And its population?");

    expect(prompts(model)[0]).toEqual([
      { role: "system", content: "You are terse." },
      { role: "user", content: [{ type: "text", text: "What is the capital of France?" }] },
      { role: "assistant", content: [{ type: "text", text: "Paris." }] },
      { role: "user", content: [{ type: "text", text: "And its population?" }] },
    ]);
    // The history is context, not part of this turn's messages, and is left untouched.
    expect(ports.finalState!.messages).toEqual([
      { role: "user", content: "And its population?" },
      { role: "assistant", content: [{ type: "text", text: "About 2.1 million." }] },
    ]);
    expect(history).toEqual(historyBefore);
  });

  it("passes temperature and max_tokens from the config to the model", async () => {
    const model = scriptedModel(say("ok"));
    await runNewTurn(makeSetup({ model, config: { temperature: 0.2, max_tokens: 256 } }));
    expect(model.doStreamCalls[0]).toMatchObject({ temperature: 0.2, maxOutputTokens: 256 });
  });

  it("sends no system message when instructions are empty", async () => {
    const model = scriptedModel(say("hi"));
    await runNewTurn(makeSetup({ model, config: { instructions: "" } }));
    expect(prompts(model)[0]!.some((m) => m.role === "system")).toBe(false);
  });
});

describe("runTurn: tools", () => {
  it("runs a requested tool, records it, and feeds the result back to the model", async () => {
    const ports = new MemoryPorts();
    const contexts: ToolContext[] = [];
    const weather = defineTool("get_weather", async (args, ctx) => {
      contexts.push(ctx);
      ports.advance(42); // the tool takes 42 ms
      return { city: args.city, temp_c: 21 };
    });
    const model = scriptedModel(callTools([["call_1", "get_weather", { city: "Paris" }]], usage(10, 5)), say("It is 21°C in Paris.", usage(20, 7)));
    const startedAt = ports.now();
    await runNewTurn(makeSetup({ model, tools: [weather] }), "Weather in Paris?", ports);

    expect(ports.types()).toEqual([
      "model.requested",
      "model.completed",
      "cost.recorded",
      "tool.started",
      "tool.result",
      "model.requested",
      "model.delta",
      "model.completed",
      "cost.recorded",
      "turn.completed",
    ]);
    const [firstRequest, firstCompleted, , started, result, secondRequest] = ports.events;
    expect(firstCompleted!.payload).toEqual({ usage: tokens(10, 5), finish_reason: "tool-calls" });
    expect(secondRequest!.payload).toMatchObject({ step: 2 });
    expect(secondRequest!.step_id).not.toBe(firstRequest!.step_id);

    expect(started).toEqual({
      type: "tool.started",
      turn_id: TURN_ID,
      step_id: firstRequest!.step_id,
      tool_call_id: "call_1",
      payload: { name: "get_weather", args: { city: "Paris" }, injected_args: {} },
    });
    expect(result).toEqual({
      type: "tool.result",
      turn_id: TURN_ID,
      step_id: firstRequest!.step_id,
      tool_call_id: "call_1",
      payload: {
        name: "get_weather",
        output: { city: "Paris", temp_c: 21 },
        is_error: false,
        metadata: {
          status: "success",
          started_at: startedAt,
          completed_at: startedAt + 42,
          execution_time_ms: 42,
          approval_status: "not_required",
          approval_id: null,
          injected_args: {},
          offloaded_artifact_id: null,
        },
      },
    });
    // The model is offered the tool's schema; the runtime, not the SDK, executes it.
    expect(model.doStreamCalls[0]!.tools).toEqual([{ type: "function", name: "get_weather", description: "The get_weather tool", inputSchema: OPEN_SCHEMA }]);
    expect(contexts).toHaveLength(1);
    expect(contexts[0]).toMatchObject({ session_id: "ses_test", turn_id: TURN_ID, tool_call_id: "call_1" });

    // The second model call sees the assistant's tool call and the tool's result.
    expect(prompts(model)[1]).toEqual([
      { role: "user", content: [{ type: "text", text: "Weather in Paris?" }] },
      { role: "assistant", content: [{ type: "tool-call", toolCallId: "call_1", toolName: "get_weather", input: { city: "Paris" } }] },
      {
        role: "tool",
        content: [{ type: "tool-result", toolCallId: "call_1", toolName: "get_weather", output: { type: "json", value: { city: "Paris", temp_c: 21 } } }],
      },
    ]);
    expect(ports.terminal!.payload).toEqual({
      output: "It is 21°C in Paris.",
      stop_reason: "final_answer",
      usage: tokens(30, 12),
      cost_usd: expect.any(Number),
    });
  });

  it("starts a step's parallel calls together: their tool.started events share one checkpoint", async () => {
    const lookup = defineTool("lookup", async (args) => `found ${String(args.key)}`);
    const model = scriptedModel(
      callTools([
        ["call_1", "lookup", { key: "a" }],
        ["call_2", "lookup", { key: "b" }],
        ["call_3", "lookup", { key: "c" }],
      ]),
      say("done"),
    );
    const { ports } = await runNewTurn(makeSetup({ model, tools: [lookup] }));

    const types = ports.types();
    const first = types.indexOf("tool.started");
    expect(types.slice(first, first + 4)).toEqual(["tool.started", "tool.started", "tool.started", "tool.result"]);
    const during = ports.checkpoints.filter((c) => c.afterEvents > first && c.afterEvents <= first + 3);
    expect(during.map((c) => c.afterEvents)).toEqual([first + 3]);
    expect(during[0]!.state.calls!.map((c) => c.status)).toEqual(["started", "started", "started"]);
    // What may wait for what follows it: the answer that names the calls (for their starts, until the task ends), and
    // each result (for the step's other results, then the next model call's start). The final answer waits for nothing.
    const results = ports.ofType("tool.result").map((e) => e.tool_call_id!);
    expect(ports.gathered).toEqual(["model.completed (task)", "cost.recorded (task)", ...results.map((id) => `${id} (step)`)]);
  });

  it("marks a step's calls started only after every argument was spilled, so the held answer's checkpoint starts none", async () => {
    const lookup = defineTool("lookup", async () => "found");
    // The second call's arguments are over max_tool_result_bytes: spilled to an artifact before any call starts.
    const model = scriptedModel(
      callTools([
        ["call_1", "lookup", { key: "a" }],
        ["call_2", "lookup", { key: "b".repeat(5_000) }],
      ]),
      say("done"),
    );
    const { ports } = await runNewTurn(makeSetup({ model, tools: [lookup], config: { budget: { max_tool_result_bytes: 1_000 } } }));
    expect(ports.ofType("tool.started").map((e) => e.refs?.[0]?.kind ?? null)).toEqual([null, "artifact"]);
    // The answer waited for the starts while the spill did: a checkpoint written then has both calls pending.
    expect(ports.heldDuringSpill.map((s) => s.calls!.map((c) => c.status))).toEqual([["pending", "pending"]]);
  });

  it("checkpoints the state with every model response, tool start and tool result", async () => {
    const lookup = defineTool("lookup", async () => "found");
    const model = scriptedModel(callTools([["call_1", "lookup", {}]]), say("done"));
    const { ports } = await runNewTurn(makeSetup({ model, tools: [lookup] }));

    // The states checkpointed after the first event of a type (with it, or by a later write with no events).
    const statesWith = (type: EventDraft["type"]): TurnState[] => {
      const index = ports.types().indexOf(type);
      return ports.checkpoints.filter((c) => c.afterEvents === index + 1).map((c) => c.state);
    };
    // model.completed and cost.recorded are written together with the state.
    expect(statesWith("cost.recorded")).toMatchObject([{ step: 1, calls: [{ tool_call_id: "call_1", status: "pending" }] }]);
    expect(statesWith("tool.started")).toMatchObject([{ calls: [{ status: "started", started_at: expect.any(Number) }] }]);
    const [afterResult, ...more] = statesWith("tool.result");
    expect(afterResult).toMatchObject({ calls: [{ status: "done", result: { output: "found", is_error: false } }] });
    expect(more).toEqual([]);
    // Then with the next model call: the results are in the messages and no call is outstanding.
    const secondCall = ports.types().lastIndexOf("model.requested");
    const [beforeSecondCall] = ports.checkpoints.filter((c) => c.afterEvents === secondCall + 1).map((c) => c.state);
    expect(beforeSecondCall!.calls).toBeNull();
    expect(beforeSecondCall!.messages.map((m) => m.role)).toEqual(["user", "assistant", "tool"]);
  });

  it("runs at most 8 parallel-safe calls at once, then the others one at a time, and feeds results back in emitted order", async () => {
    const timeline: string[] = [];
    let running = 0;
    let maxRunning = 0;
    const track = async (id: string, ms: number) => {
      timeline.push(`start ${id}`);
      running += 1;
      maxRunning = Math.max(maxRunning, running);
      await sleep(ms);
      running -= 1;
      timeline.push(`end ${id}`);
    };
    // Later calls finish sooner, so completion order differs from emitted order.
    const fetchPage = defineTool("fetch_page", async (args) => {
      const n = Number(args.n);
      await track(`p${n}`, (13 - n) * 3);
      return `page ${n}`;
    });
    const writeFile = defineTool(
      "write_file",
      async (args) => {
        await track(`s${String(args.n)}`, 5);
        return "written";
      },
      { parallel_safe: false },
    );

    // Twelve parallel-safe calls with three serial ones interleaved.
    const calls: CallSpec[] = [];
    let serial = 0;
    for (let n = 1; n <= 12; n++) {
      calls.push([`p${n}`, "fetch_page", { n }]);
      if ([2, 6, 10].includes(n)) calls.push([`s${++serial}`, "write_file", { n: serial }]);
    }
    const emitted = calls.map((c) => c[0]);
    expect(emitted).toEqual(["p1", "p2", "s1", "p3", "p4", "p5", "p6", "s2", "p7", "p8", "p9", "p10", "s3", "p11", "p12"]);

    const model = scriptedModel(callTools(calls), say("all done"));
    const { ports } = await runNewTurn(makeSetup({ model, tools: [fetchPage, writeFile] }));

    expect(maxRunning).toBe(MAX_PARALLEL_TOOL_CALLS);
    expect(MAX_PARALLEL_TOOL_CALLS).toBe(8);
    const parallelEnds = timeline.map((t, i) => (/^end p/.test(t) ? i : -1)).filter((i) => i >= 0);
    expect(parallelEnds).toHaveLength(12);
    // The serial calls start only after every parallel one has finished, one at a time, in emitted order.
    expect(timeline.slice(Math.max(...parallelEnds) + 1)).toEqual(["start s1", "end s1", "start s2", "end s2", "start s3", "end s3"]);

    const resultOrder = ports.ofType("tool.result").map((e) => e.tool_call_id);
    expect(resultOrder).not.toEqual(emitted); // completion order really differs...
    expect(toolResultIds(prompts(model)[1]!)).toEqual(emitted); // ...but the model gets them as it asked.
    expect(ports.ofType("tool.result").every((e) => e.payload.is_error === false)).toBe(true);
    expect(ports.terminal!.payload).toMatchObject({ stop_reason: "final_answer", output: "all done" });
  });

  it("records a tool that returns nothing with output null", async () => {
    const noop = defineTool("noop", async () => undefined);
    const model = scriptedModel(callTools([["call_1", "noop", {}]]), say("done"));
    const { ports } = await runNewTurn(makeSetup({ model, tools: [noop] }));

    // Clients rely on tool.result carrying `output`; JSON has no undefined, so it must be null.
    expect(payloadOf(ports, "tool.result", "call_1")).toHaveProperty("output", null);
    expect(prompts(model)[1]!.at(-1)).toMatchObject({ content: [{ output: { type: "json", value: null } }] });
  });

  it("turns a throwing tool into an error result and continues to a final answer", async () => {
    const explode = defineTool("explode", async () => {
      throw new Error("disk on fire");
    });
    const model = scriptedModel(callTools([["call_boom", "explode", {}]]), say("The tool failed."));
    const { ports } = await runNewTurn(makeSetup({ model, tools: [explode] }));

    expect(payloadOf(ports, "tool.result", "call_boom")).toMatchObject({
      name: "explode",
      output: "disk on fire",
      is_error: true,
      metadata: { status: "error", approval_status: "not_required" },
    });
    expect(prompts(model)[1]!.at(-1)).toEqual({
      role: "tool",
      content: [{ type: "tool-result", toolCallId: "call_boom", toolName: "explode", output: { type: "error-text", value: "disk on fire" } }],
    });
    expect(ports.terminal).toMatchObject({ type: "turn.completed", payload: { stop_reason: "final_answer", output: "The tool failed." } });
  });

  it("turns a call to an unknown tool into an error result and continues", async () => {
    const known = defineTool("known", async () => "ok");
    const model = scriptedModel(callTools([["call_x", "no_such_tool", { a: 1 }]]), say("Sorry."));
    const { ports } = await runNewTurn(makeSetup({ model, tools: [known] }));

    const result = payloadOf(ports, "tool.result", "call_x");
    expect(result).toMatchObject({ name: "no_such_tool", is_error: true, metadata: { status: "error" } });
    expect(String(result.output)).toContain("no_such_tool");
    const fedBack = prompts(model)[1]!.at(-1)!;
    expect(fedBack).toMatchObject({ role: "tool", content: [{ toolCallId: "call_x", output: { type: "error-text" } }] });
    expect(ports.terminal).toMatchObject({ type: "turn.completed", payload: { stop_reason: "final_answer" } });
  });

  it.each([
    ["are not valid JSON", '{"a": 1,'],
    ["carry a __proto__ key (it could hide arguments from an approver)", '{"a": 1, "__proto__": {"b": 2}}'],
  ])("does not run a tool whose arguments %s; the model gets an error result", async (_, input) => {
    const { tool: add, runs } = countingTool("add", () => 0);
    const model = scriptedModel(
      [{ type: "tool-call", toolCallId: "call_bad", toolName: "add", input }, finishPart("tool-calls", usage(10, 5))],
      say("I could not add."),
    );
    const { ports } = await runNewTurn(makeSetup({ model, tools: [add] }));

    expect(runs()).toBe(0);
    const result = payloadOf(ports, "tool.result", "call_bad");
    expect(result).toMatchObject({ name: "add", is_error: true, metadata: { status: "error" } });
    expect(String(result.output)).toMatch(/^Invalid tool call/);
    expect(prompts(model)[1]!.at(-1)).toMatchObject({ role: "tool", content: [{ toolCallId: "call_bad", output: { type: "error-text" } }] });
    expect(ports.terminal).toMatchObject({ type: "turn.completed", payload: { stop_reason: "final_answer" } });
  });
});

describe("runTurn: limits and failures", () => {
  it("stops after max_steps model calls and leaves every tool call answered", async () => {
    const { tool: again, runs } = countingTool("again", (n) => `run ${n}`);
    const model = scriptedModel(...[1, 2, 3, 4, 5].map((n) => callTools([[`call_${n}`, "again", {}]], usage(10, 1))));
    const { ports } = await runNewTurn(makeSetup({ model, tools: [again], config: { max_steps: 2 } }));

    expect(model.doStreamCalls).toHaveLength(2);
    expect(ports.ofType("model.requested")).toHaveLength(2);
    expect(ports.terminal).toEqual({
      type: "turn.completed",
      turn_id: TURN_ID,
      payload: { output: "", stop_reason: "max_steps", usage: tokens(20, 2), cost_usd: expect.any(Number) },
    });
    // The last step's call is never run; the history still answers it.
    expect(runs()).toBe(1);
    const state = ports.finalState!;
    expect(state.step).toBe(2);
    const history = finalMessages(state, "max_steps reached");
    expectEveryCallAnswered(history);
    expect(history.at(-1)).toMatchObject({
      role: "tool",
      content: [{ toolCallId: "call_2", output: { type: "error-text", value: expect.stringContaining("max_steps reached") } }],
    });
  });

  const failingModels: [string, Reply][] = [
    [
      "doStream throws",
      () => {
        throw new Error("provider unavailable");
      },
    ],
    ["the stream emits an error part", [...textParts(["partial "]), { type: "error", error: new Error("provider unavailable") }]],
  ];

  it.each(failingModels)("fails the turn with model_error when %s", async (_, reply) => {
    const model = scriptedModel(reply);
    const { ports } = await runNewTurn(makeSetup({ model }));

    const types = ports.types();
    expect(types[0]).toBe("model.requested");
    expect(types.slice(-2)).toEqual(["model.completed", "turn.failed"]);
    expect(types.filter((t) => t !== "model.delta")).toEqual(["model.requested", "model.completed", "turn.failed"]);

    const completed = ports.ofType("model.completed")[0]!;
    expect(completed.step_id).toBe(ports.events[0]!.step_id);
    expect(completed.payload).toMatchObject({ finish_reason: "error" });
    expect(ports.terminal).toEqual({
      type: "turn.failed",
      turn_id: TURN_ID,
      payload: { error: { code: "model_error", message: expect.stringContaining("provider unavailable") } },
    });
    expect(ports.refused).toEqual([]);
  });

  it("fails with model_error on a later step, after a tool round trip", async () => {
    const lookup = defineTool("lookup", async () => "found");
    const model = scriptedModel(callTools([["call_1", "lookup", {}]]), [{ type: "error", error: "overloaded" }]);
    const { ports } = await runNewTurn(makeSetup({ model, tools: [lookup] }));

    expect(ports.types()).toEqual([
      "model.requested",
      "model.completed",
      "cost.recorded",
      "tool.started",
      "tool.result",
      "model.requested",
      "model.completed",
      "turn.failed",
    ]);
    expect(ports.events[6]!.payload).toMatchObject({ finish_reason: "error" });
    expect(ports.terminal!.payload).toMatchObject({ error: { code: "model_error" } });
  });

  it.each([
    ["ends without a finish part", textParts(["The answer is"]), "The model's response stream ended without finishing"],
    [
      "finishes with reason error (a provider's truncated stream)",
      [
        ...textParts(["The answer is"]),
        { type: "finish", finishReason: { unified: "error", raw: "stream-truncated" }, usage: usage(1, 1) } as LanguageModelV3StreamPart,
      ],
      "The model's response ended in an error (stream-truncated)",
    ],
  ])("fails with model_error when the model's stream %s, instead of taking the partial text as the answer", async (_, reply, message) => {
    const model = scriptedModel(reply as LanguageModelV3StreamPart[]);
    const { ports } = await runNewTurn(makeSetup({ model }));
    expect(ports.types()).toEqual(["model.requested", "model.delta", "model.completed", "turn.failed"]);
    expect(ports.terminal!.payload).toMatchObject({ error: { code: "model_error", message } });
  });

  it("retries a rate-limited call after the provider's retry-after-ms, not the 2 s backoff; a non-retryable error is not retried", async () => {
    const rateLimited = (ms: string) =>
      new APICallError({
        message: "rate limited",
        url: "https://provider.test/v1",
        requestBodyValues: {},
        statusCode: 429,
        responseHeaders: { "retry-after-ms": ms },
      });
    const calledAt: number[] = [];
    const model = scriptedModel(
      () => {
        calledAt.push(Date.now());
        throw rateLimited("50");
      },
      () => {
        calledAt.push(Date.now());
        return { stream: simulateReadableStream({ chunks: [...textParts(["done"]), finishPart("stop", usage(1, 1))] }) };
      },
    );
    const { ports } = await runNewTurn(makeSetup({ model }));
    expect(ports.terminal).toMatchObject({ type: "turn.completed", payload: { output: "done" } });
    expect(ports.types().filter((t) => t === "model.requested")).toHaveLength(1);
    expect(calledAt[1]! - calledAt[0]!).toBeLessThan(1_000);

    const refused = scriptedModel(() => {
      throw new APICallError({ message: "bad request", url: "https://provider.test/v1", requestBodyValues: {}, statusCode: 400 });
    });
    const second = await runNewTurn(makeSetup({ model: refused }));
    expect(refused.doStreamCalls).toHaveLength(1);
    expect(second.ports.terminal!.payload).toMatchObject({ error: { code: "model_error", message: "bad request" } });
  });
});

describe("runTurn: interruption", () => {
  /** A model that streams a first delta, then either fails like an aborted fetch or keeps streaming. */
  const interruptibleModels: [string, Reply][] = [
    [
      "the stream errors on abort, like a cancelled fetch",
      (options) => ({
        stream: new ReadableStream<LanguageModelV3StreamPart>({
          start(controller) {
            for (const part of textParts(["Thinking"]).slice(0, 2)) controller.enqueue(part);
            options.abortSignal?.addEventListener("abort", () => controller.error(options.abortSignal!.reason));
          },
        }),
      }),
    ],
    [
      "the stream ignores the abort and keeps streaming",
      () => ({
        stream: simulateReadableStream({
          chunks: [...textParts(Array.from({ length: 50 }, (_, i) => `word${i} `)), finishPart("stop", usage(1, 1))],
          initialDelayInMs: null,
          chunkDelayInMs: 1,
        }),
      }),
    ],
  ];

  it.each(interruptibleModels)("aborting while the model streams rejects and writes nothing more (%s)", async (_, reply) => {
    const model = scriptedModel(reply, say("never requested"));
    const ports = new MemoryPorts();
    const reason = new Error("interrupted by user");
    ports.onEvent = (event) => {
      if (event.type === "model.delta") ports.abort(reason);
    };

    await expect(runNewTurn(makeSetup({ model }), "hello", ports)).rejects.toBe(reason);
    expect(ports.types()).toEqual(["model.requested", "model.delta"]);
    expect(ports.refused).toEqual([]);
    expect(ports.terminal).toBeNull();
    expect(model.doStreamCalls).toHaveLength(1);
  });

  it("an abort that lands while the provider is opening its stream still ends a stream that would never finish", async () => {
    const ports = new MemoryPorts();
    const reason = new Error("interrupted by user");
    const model = scriptedModel(async () => {
      ports.abort(reason); // before the runtime starts reading
      return { stream: new ReadableStream<LanguageModelV3StreamPart>({ start() {} }) }; // never ends, ignores aborts
    });

    await expect(runNewTurn(makeSetup({ model }), "hello", ports)).rejects.toBe(reason);
    expect(ports.types()).toEqual(["model.requested"]);
    expect(ports.terminal).toBeNull();
  });

  it("aborting while a tool runs rejects without a tool result or a terminal event", async () => {
    const ports = new MemoryPorts();
    const reason = new Error("interrupted by user");
    const slow = defineTool("slow", (_, ctx) => {
      return new Promise((_resolve, reject) => ctx.signal.addEventListener("abort", () => reject(ctx.signal.reason)));
    });
    ports.onEvent = (event) => {
      if (event.type === "tool.started") queueMicrotask(() => ports.abort(reason));
    };
    const model = scriptedModel(callTools([["call_1", "slow", {}]]), say("never requested"));

    await expect(runNewTurn(makeSetup({ model, tools: [slow] }), "hello", ports)).rejects.toBe(reason);
    expect(ports.types()).toEqual(["model.requested", "model.completed", "cost.recorded", "tool.started"]);
    expect(ports.refused).toEqual([]);
    expect(ports.terminal).toBeNull();
  });
});

describe("runTurn: resuming from a checkpoint", () => {
  const T0 = 1_700_000_000_000;

  /** The state as checkpointed after a model response that requested `calls`. */
  function checkpointAfterModel(calls: TurnState["calls"] & object): TurnState {
    return {
      version: 1,
      turn_id: "trn_resumed",
      started_at: T0,
      step: 1,
      step_id: "stp_before_restart",
      messages: [
        { role: "user", content: "Pay order o1 and tell me its status" },
        {
          role: "assistant",
          content: calls.map((c) => ({ type: "tool-call" as const, toolCallId: c.tool_call_id, toolName: c.name, input: c.args })),
        },
      ],
      calls,
      usage: tokens(10, 5),
      output: "",
    };
  }

  it("answers a started non-idempotent call as lost without running it, runs the pending one, and continues", async () => {
    const executed: string[] = [];
    const charge = defineTool(
      "charge_card",
      async (_, ctx) => {
        executed.push(ctx.tool_call_id);
        return "charged";
      },
      { idempotent: false, parallel_safe: false, permission_class: "external_mutate" },
    );
    const lookup = defineTool("lookup_order", async (args, ctx) => {
      executed.push(ctx.tool_call_id);
      return { id: args.id, status: "shipped" };
    });
    const checkpoint = checkpointAfterModel([
      { tool_call_id: "c_pay", name: "charge_card", args: { amount: 5 }, status: "started", started_at: T0 + 5 },
      { tool_call_id: "c_look", name: "lookup_order", args: { id: "o1" }, status: "pending" },
    ]);
    const model = scriptedModel(say("Order o1 shipped; the payment outcome is unknown.", usage(30, 9)));
    const ports = new MemoryPorts(T0 + 60_000);

    await runTurn(snapshot(checkpoint), makeSetup({ model, tools: [charge, lookup] }), ports);

    expect(executed).toEqual(["c_look"]);
    // The lost call gets only a result (it is not started again); the pending call runs normally.
    expect(ports.events.filter((e) => e.tool_call_id === "c_pay").map((e) => e.type)).toEqual(["tool.result"]);
    expect(ports.events.filter((e) => e.tool_call_id === "c_look").map((e) => e.type)).toEqual(["tool.started", "tool.result"]);
    expect(payloadOf(ports, "tool.result", "c_pay")).toMatchObject({
      name: "charge_card",
      output: { category: "lost" },
      is_error: true,
      metadata: { status: "error", started_at: T0 + 5, completed_at: T0 + 60_000 },
    });
    expect(payloadOf(ports, "tool.result", "c_look")).toMatchObject({ output: { id: "o1", status: "shipped" }, is_error: false });
    for (const e of ports.events.filter((e) => e.tool_call_id)) expect(e.step_id).toBe("stp_before_restart");

    // Then the loop continues: one model call that sees both results, in the order the model asked.
    expect(ports.types().slice(-5)).toEqual(["model.requested", "model.delta", "model.completed", "cost.recorded", "turn.completed"]);
    expect(ports.ofType("model.requested")[0]!.payload).toMatchObject({ step: 2 });
    const prompt = prompts(model)[0]!;
    expect(toolResultIds(prompt)).toEqual(["c_pay", "c_look"]);
    expect(prompt.at(-1)).toMatchObject({
      role: "tool",
      content: [{ output: { type: "error-text", value: expect.stringContaining("lost") } }, { output: { type: "json" } }],
    });
    expect(ports.terminal).toEqual({
      type: "turn.completed",
      turn_id: "trn_resumed",
      payload: {
        output: "Order o1 shipped; the payment outcome is unknown.",
        stop_reason: "final_answer",
        usage: tokens(40, 14),
        cost_usd: expect.any(Number),
      },
    });
  });

  it("keeps a recorded result without re-running it and re-runs a started idempotent call", async () => {
    const executed: string[] = [];
    const lookup = defineTool("lookup_order", async (args, ctx) => {
      executed.push(ctx.tool_call_id);
      return `order ${String(args.id)}: shipped`;
    });
    const checkpoint = checkpointAfterModel([
      {
        tool_call_id: "c_1",
        name: "lookup_order",
        args: { id: "o1" },
        status: "done",
        started_at: T0 + 1,
        result: { output: "order o1: pending", is_error: false },
      },
      { tool_call_id: "c_2", name: "lookup_order", args: { id: "o2" }, status: "started", started_at: T0 + 2 },
    ]);
    const model = scriptedModel(say("o1 pending, o2 shipped"));
    const ports = new MemoryPorts(T0 + 60_000);

    await runTurn(snapshot(checkpoint), makeSetup({ model, tools: [lookup] }), ports);

    expect(executed).toEqual(["c_2"]);
    expect(ports.events.some((e) => e.tool_call_id === "c_1")).toBe(false);
    expect(prompts(model)[0]!.at(-1)).toEqual({
      role: "tool",
      content: [
        { type: "tool-result", toolCallId: "c_1", toolName: "lookup_order", output: { type: "text", value: "order o1: pending" } },
        { type: "tool-result", toolCallId: "c_2", toolName: "lookup_order", output: { type: "text", value: "order o2: shipped" } },
      ],
    });
    expect(ports.terminal).toMatchObject({ type: "turn.completed", payload: { stop_reason: "final_answer" } });
  });

  it("answers a call whose tool no longer exists (the config changed before the resume) with an error result", async () => {
    const checkpoint = checkpointAfterModel([{ tool_call_id: "c_old", name: "retired_tool", args: {}, status: "pending" }]);
    const model = scriptedModel(say("That tool is gone."));
    const ports = new MemoryPorts();

    await runTurn(snapshot(checkpoint), makeSetup({ model }), ports);

    const result = payloadOf(ports, "tool.result", "c_old");
    expect(result).toMatchObject({ name: "retired_tool", is_error: true, metadata: { status: "error" } });
    expect(String(result.output)).toContain("retired_tool");
    expect(ports.terminal).toMatchObject({ type: "turn.completed", payload: { stop_reason: "final_answer" } });
  });

  it("resuming from any checkpoint of a run reaches the same end, without extra model calls", async () => {
    const lookup = defineTool("lookup", async (args) => `value of ${String(args.key)}`);
    const replies = () => [callTools([["call_1", "lookup", { key: "a" }]], usage(10, 5)), say("a is known", usage(20, 7))];
    const original = await runNewTurn(makeSetup({ model: scriptedModel(...replies()), tools: [lookup] }));
    const { checkpoints } = original.ports;
    expect(checkpoints.map((c) => original.ports.types()[c.afterEvents - 1])).toEqual([
      "model.requested", // step 1 under way: a restart here makes the call again
      "cost.recorded", // step 1 done (model.completed and its cost): the call is pending
      "tool.started",
      "tool.result", // every call done: a restart here feeds the results back
      "model.requested", // results fed back, no call outstanding, step 2 under way
      "cost.recorded", // step 2: the final answer
    ]);

    for (const { afterEvents, state } of checkpoints) {
      const remaining = replies().slice(state.step); // the replies a model would still give
      const model = scriptedModel(...remaining);
      const ports = new MemoryPorts();
      await runTurn(snapshot(state), makeSetup({ model, tools: [lookup] }), ports);

      const where = `resumed from the checkpoint written with event #${afterEvents} (${original.ports.types()[afterEvents - 1]})`;
      expect.soft(model.doStreamCalls.length, where).toBe(remaining.length);
      expect.soft(ports.terminal, where).toEqual(original.ports.terminal);
      expect.soft(ports.finalState?.messages, where).toEqual(original.ports.finalState!.messages);
    }
  });

  it("resuming a checkpoint taken at max_steps ends the turn without running tools or calling the model", async () => {
    const { tool: again, runs } = countingTool("again", () => "again");
    const checkpoint: TurnState = {
      ...checkpointAfterModel([{ tool_call_id: "c_2", name: "again", args: {}, status: "pending" }]),
      step: 2,
    };
    const model = scriptedModel(say("a third answer"));
    const ports = new MemoryPorts();

    await runTurn(snapshot(checkpoint), makeSetup({ model, tools: [again], config: { max_steps: 2 } }), ports);

    expect(model.doStreamCalls).toHaveLength(0);
    expect(ports.terminal).toMatchObject({ type: "turn.completed", payload: { stop_reason: "max_steps" } });
    expect(runs()).toBe(0);
  });
});
