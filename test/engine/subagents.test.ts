// Sub-agents and the turn budget, driven through the engine directly: run_subtask,
// finish_subtask, spawn_subagents, depth, the TurnBudget's limits, cost, resuming a turn whose child is
// mid-way, and the execution tree folded from the recorded events.
//
// One mock model serves the parent and every child (they share setup.model), so the model here answers
// by looking at the prompt: who is asking (the root, or the child whose task title opens its prompt) and
// how far that conversation is (its assistant messages so far). That keeps concurrent children
// order-independent and lets a resumed turn get the same answers as the uninterrupted one.
import type { LanguageModelV3CallOptions, LanguageModelV3Prompt, LanguageModelV3StreamPart, LanguageModelV3StreamResult } from "@ai-sdk/provider";
import type { MockLanguageModelV3 } from "ai/test";
import { describe, expect, it } from "vitest";
import { estimateTokens } from "../../src/engine/context-budget";
import { runTurn, type TurnSetup } from "../../src/engine/loop";
import { ALL_CLASSES_POLICY, resolveToolbelt } from "../../src/engine/tools/toolbelt";
import type { ToolDefinition } from "../../src/engine/tools/types";
import { traceFields } from "../../src/engine/trace";
import { BudgetExceededError } from "../../src/engine/turn-context";
import { closingEvents } from "../../src/engine/turn-state";
import { verifyLog } from "../../src/engine/verify-log";
import { type AgentConfigInput, AgentConfigSchema } from "../../src/protocol/agent-config";
import type { RuntimeEvent } from "../../src/protocol/events";
import type { TreeNode } from "../../src/protocol/views";
import { buildTree } from "../../src/views/execution-tree";
import { MemoryPorts, type Recorded, snapshot } from "./support/memory-ports";
import { callTools, defineTool, type ModelResponse, payloadOf, respondingModel, runNewTurn, say, TURN_ID, tokens, usage } from "./support/mock-model";

// ---------------------------------------------------------------------------------------------------
// Reading prompts

type Prompt = LanguageModelV3Prompt;
type Message = Prompt[number];

function textOf(message: Message): string {
  if (message.role === "system") return message.content;
  return message.content.map((p) => (p.type === "text" ? p.text : "")).join("");
}

/** The first user message of a prompt: the root's input, or a child's "Task: <title>\n\n<instructions>". */
function firstUserText(prompt: Prompt): string {
  const m = prompt.find((x) => x.role === "user");
  return m ? textOf(m) : "";
}

/** Who a model call belongs to: "root", or the title of the child's task. */
function who(prompt: Prompt): string {
  const text = firstUserText(prompt);
  return text.startsWith("Task: ") ? text.slice("Task: ".length).split("\n\n")[0]! : "root";
}

interface Result {
  id: string;
  name: string;
  text: string;
  isError: boolean;
}

/** The tool results of the prompt's last message (empty unless it is a tool message). */
function lastResults(prompt: Prompt): Result[] {
  const last = prompt.at(-1);
  if (last?.role !== "tool") return [];
  return last.content.flatMap((p) => {
    if (p.type !== "tool-result") return [];
    const o = p.output;
    const text =
      o.type === "text" || o.type === "error-text" ? o.value : o.type === "json" || o.type === "error-json" ? JSON.stringify(o.value) : JSON.stringify(o);
    return [{ id: p.toolCallId, name: p.toolName, text, isError: o.type === "error-text" || o.type === "error-json" }];
  });
}

function toolResultIds(prompt: Prompt): string[] {
  return prompt.flatMap((m) => (m.role === "tool" ? m.content.map((p) => (p.type === "tool-result" ? p.toolCallId : "?")) : []));
}

function offered(options: LanguageModelV3CallOptions): string[] {
  return (options.tools ?? []).map((t) => t.name).sort();
}

// ---------------------------------------------------------------------------------------------------
// The responding model

interface Step {
  /** Assistant messages already in this conversation: 0 for its first model call. */
  step: number;
  results: Result[];
  options: LanguageModelV3CallOptions;
  prompt: Prompt;
}
type Behaviour = (s: Step) => ModelResponse | Promise<ModelResponse>;

/** A model playing the root and each child by name; an unknown caller is a failing provider call. */
function agents(behaviours: Record<string, Behaviour>): MockLanguageModelV3 {
  return respondingModel((options) => {
    const name = who(options.prompt);
    const behaviour = behaviours[name];
    if (!behaviour) throw new Error(`no behaviour scripted for "${name}"`);
    const step = options.prompt.filter((m) => m.role === "assistant").length;
    return behaviour({ step, results: lastResults(options.prompt), options, prompt: options.prompt });
  });
}

function callsOf(model: MockLanguageModelV3, name: string): LanguageModelV3CallOptions[] {
  return model.doStreamCalls.filter((c) => who(c.prompt) === name);
}

/** A stream that starts and then waits until the call is aborted (it errors with the abort's reason). */
function stalled(options: LanguageModelV3CallOptions, onAbort: (reason: unknown) => void): LanguageModelV3StreamResult {
  return {
    stream: new ReadableStream<LanguageModelV3StreamPart>({
      start(controller) {
        controller.enqueue({ type: "stream-start", warnings: [] });
        options.abortSignal?.addEventListener("abort", () => {
          onAbort(options.abortSignal!.reason);
          controller.error(options.abortSignal!.reason);
        });
      },
    }),
  };
}

// ---------------------------------------------------------------------------------------------------
// Setups, timing, events

const T0 = 1_700_000_000_000;

/** A setup whose toolbelt is resolved like the session's (run_subtask built in, spawn_subagents by config) plus `tools`. */
function setupWith(model: MockLanguageModelV3, tools: ToolDefinition[] = [], config: Partial<AgentConfigInput> = {}): TurnSetup {
  const parsed = AgentConfigSchema.parse({ name: "sub-test", model: "openai:gpt-4o", tools: ["run_subtask", ...tools.map((t) => t.name)], ...config });
  const belt = resolveToolbelt(parsed, ALL_CLASSES_POLICY);
  for (const t of tools) belt.set(t.name, t);
  return { config: parsed, model, tools: belt, history: [], resolveModel: () => model };
}

function deferred<T = void>() {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

/** Rejects when `promise` has not settled within `ms` (so a missing concurrency shows as a failure, not a hang). */
async function within<T>(promise: Promise<T>, what: string, ms = 2000): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    return await Promise.race([promise, new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`timed out waiting for ${what}`)), ms)))]);
  } finally {
    if (timer !== undefined) clearTimeout(timer);
  }
}

/** Resolves once `n` parties have arrived. */
function barrier(n: number) {
  let arrived = 0;
  const all = deferred();
  return (what: string) => {
    arrived += 1;
    if (arrived === n) all.resolve();
    return within(all.promise, what);
  };
}

const TRACE = { trace_id: "4bf92f3577b34da6a3ce929d0e0e4736", parent_span_id: null };

/** The drafts as the store would keep them: envelope ids, sequence, timestamp and trace fields added, root envelope filled in. */
function stamp(drafts: readonly Recorded[]): RuntimeEvent[] {
  return drafts.map((d, i) => ({
    parent_id: null,
    depth: 0,
    ...d,
    ...(d.turn_id ? traceFields(TRACE, d.turn_id, d) : {}),
    event_id: `evt_${i + 1}`,
    sequence: i + 1,
    timestamp: T0 + i,
    schema_version: 1 as const,
    session_id: "ses_test",
    thread_id: "thr_test",
  })) as RuntimeEvent[];
}

/** The events between a child's subagent.spawned and its subagent.completed/failed (exclusive). */
function childEvents(ports: MemoryPorts, parentId: string): Recorded[] {
  const start = ports.events.findIndex((e) => e.type === "subagent.spawned" && e.parent_id === parentId);
  const end = ports.events.findIndex((e) => (e.type === "subagent.completed" || e.type === "subagent.failed") && e.parent_id === parentId);
  expect(start).toBeGreaterThanOrEqual(0);
  expect(end).toBeGreaterThan(start);
  return ports.events.slice(start + 1, end);
}

function budgetUsed(ports: MemoryPorts) {
  return ports.finalState!.budget_used;
}

const lookup = (executed: string[] = []) =>
  defineTool("lookup", async (args, ctx) => {
    executed.push(ctx.tool_call_id);
    return `value of ${String(args.key)}`;
  });

const ANSWER_SCHEMA = { type: "object", properties: { answer: { type: "integer" } }, required: ["answer"], additionalProperties: false };

// ---------------------------------------------------------------------------------------------------

describe("run_subtask", () => {
  it("runs a child with an isolated history and the narrowed tools; its final text is the tool result, written to memory", async () => {
    const executed: string[] = [];
    const calc = defineTool("calc", async () => "0");
    const model = agents({
      // (The root's prompt starts with the thread's history, so it goes by its last message.)
      root: ({ results }) =>
        results.length === 0
          ? callTools([["call_sub", "run_subtask", { title: "Find a", instructions: "Look up the key a.", tools: ["lookup"] }]])
          : say(`Parent got: ${results[0]!.text}`),
      "Find a": ({ step, results }) => (step === 0 ? callTools([["call_look", "lookup", { key: "a" }]]) : say(["The value ", `is ${results[0]!.text}`])),
    });
    const setup = setupWith(model, [lookup(executed), calc], { instructions: "You are the parent." });
    setup.history = [
      { role: "user", content: "an earlier question" },
      { role: "assistant", content: [{ type: "text", text: "an earlier answer" }] },
    ];
    const { ports } = await runNewTurn(setup, "Please find a");
    const childResult = "The value is value of a";

    // The child's prompt: its own system directive and the task; nothing of the parent's conversation.
    const [first, second] = callsOf(model, "Find a");
    expect(callsOf(model, "Find a")).toHaveLength(2);
    expect(first!.prompt).toEqual([
      { role: "system", content: expect.any(String) },
      { role: "user", content: [{ type: "text", text: "Task: Find a\n\nLook up the key a." }] },
    ]);
    for (const leak of ["You are the parent.", "an earlier question", "an earlier answer", "Please find a"]) {
      expect(JSON.stringify(first!.prompt)).not.toContain(leak);
      expect(JSON.stringify(second!.prompt)).not.toContain(leak);
    }
    expect(second!.prompt.map((m) => m.role)).toEqual(["system", "user", "assistant", "tool"]);
    expect(toolResultIds(second!.prompt)).toEqual(["call_look"]);
    // Its tools are the parent's narrowed by `tools`; the parent keeps all of its own.
    expect(offered(first!)).toEqual(["lookup"]);
    expect(offered(callsOf(model, "root")[0]!)).toEqual(["calc", "lookup", "run_subtask"]);
    expect(executed).toEqual(["call_look"]);

    // Events: the parent's tool call, subagent.spawned, the child's events, subagent.completed, the result.
    expect(ports.types()).toEqual([
      "model.requested",
      "model.completed",
      "cost.recorded",
      "tool.started",
      "subagent.spawned",
      "model.requested",
      "model.completed",
      "cost.recorded",
      "tool.started",
      "tool.result",
      "model.requested",
      "model.delta",
      "model.delta",
      "model.completed",
      "cost.recorded",
      "subagent.completed",
      "tool.result",
      "model.requested",
      "model.delta",
      "model.completed",
      "cost.recorded",
      "turn.completed",
    ]);
    const spawned = ports.ofType("subagent.spawned")[0]!;
    const subagent_id = spawned.subagent_id!;
    expect(subagent_id).toEqual(expect.any(String));
    expect(spawned).toEqual({
      type: "subagent.spawned",
      turn_id: TURN_ID,
      parent_id: "call_sub",
      depth: 1,
      subagent_id,
      payload: { title: "Find a", depth: 1, index: 0, tools: ["lookup"] },
    });
    const inside = childEvents(ports, "call_sub");
    expect(inside).toHaveLength(10);
    for (const e of inside) expect(e).toMatchObject({ turn_id: TURN_ID, parent_id: "call_sub", depth: 1, subagent_id });
    expect(ports.ofType("subagent.completed")).toEqual([
      { type: "subagent.completed", turn_id: TURN_ID, parent_id: "call_sub", depth: 1, subagent_id, payload: { result: childResult } },
    ]);
    // The parent's own events carry no sub-agent envelope.
    for (const e of ports.events.filter((e) => e.tool_call_id === "call_sub")) {
      expect(e.parent_id).toBeUndefined();
      expect(e.depth).toBeUndefined();
    }
    expect(payloadOf(ports, "tool.result", "call_sub")).toMatchObject({
      name: "run_subtask",
      output: childResult,
      is_error: false,
      metadata: { status: "success" },
    });

    // The result is in the turn's shared memory under task:<tool_call_id>.
    expect(JSON.parse(ports.memory.get("task:call_sub")!)).toEqual({ status: "success", output: childResult });

    // The parent sees only the child's result, never its messages.
    const parentSecond = callsOf(model, "root")[1]!.prompt;
    expect(lastResults(parentSecond)).toEqual([{ id: "call_sub", name: "run_subtask", text: childResult, isError: false }]);
    expect(JSON.stringify(parentSecond)).not.toContain("call_look");
    expect(ports.terminal).toMatchObject({ type: "turn.completed", payload: { output: `Parent got: ${childResult}`, stop_reason: "final_answer" } });
    expect(ports.finalState!.messages.map((m) => m.role)).toEqual(["user", "assistant", "tool", "assistant"]);
    expect(budgetUsed(ports)).toEqual({ llm_calls: 4, tool_calls: 2, subtasks: 1 });
    expect(verifyLog(stamp(ports.events))).toEqual([]);
    expect(ports.refused).toEqual([]);
  });

  it("refuses `tools` naming a tool the parent lacks with an error result; no child runs", async () => {
    const model = agents({
      root: ({ step, results }) =>
        step === 0
          ? callTools([["call_sub", "run_subtask", { title: "T", instructions: "x", tools: ["lookup", "nope"] }]])
          : say(`refused: ${results[0]!.isError}`),
    });
    const { ports } = await runNewTurn(setupWith(model, [lookup()]));

    const result = payloadOf(ports, "tool.result", "call_sub");
    expect(result).toMatchObject({ name: "run_subtask", is_error: true, metadata: { status: "error" } });
    expect(String(result.output)).toContain("nope");
    expect(String(result.output)).not.toContain("lookup");
    expect(ports.ofType("subagent.spawned")).toEqual([]);
    expect(model.doStreamCalls.map((c) => who(c.prompt))).toEqual(["root", "root"]);
    expect(ports.memory.has("task:call_sub")).toBe(false);
    expect(budgetUsed(ports)).toMatchObject({ subtasks: 0 });
    expect(ports.terminal).toMatchObject({ type: "turn.completed", payload: { output: "refused: true" } });
  });

  it("fan-out: two run_subtask calls of one step run concurrently, never see each other, and come back in the order emitted", async () => {
    const bothStarted = barrier(2);
    const bDone = deferred();
    const ports = new MemoryPorts();
    ports.onEvent = (e) => {
      if (e.type === "subagent.completed" && e.parent_id === "call_b") bDone.resolve();
    };
    const model = agents({
      root: ({ step, results }) =>
        step === 0
          ? callTools([
              ["call_a", "run_subtask", { title: "A", instructions: "Do A" }],
              ["call_b", "run_subtask", { title: "B", instructions: "Do B" }],
            ])
          : say(results.map((r) => `${r.id}=${r.text}`).join(" | ")),
      A: async ({ step }) => {
        if (step === 0) {
          await bothStarted("both children's first model calls");
          return callTools([["call_a1", "lookup", { key: "a" }]]);
        }
        // A finishes only after B has: the results still come back in the order the calls were emitted.
        await within(bDone.promise, "B's completion");
        return say("A result");
      },
      B: async () => {
        await bothStarted("both children's first model calls");
        return say("B result");
      },
    });
    await runNewTurn(setupWith(model, [lookup()]), "fan out", ports);

    // Both children's first model calls were requested before either child's first call completed.
    const firstCompleted = ports.events.findIndex((e) => e.type === "model.completed" && e.depth === 1);
    const childRequests = ports.events.map((e, i) => (e.type === "model.requested" && e.depth === 1 ? i : -1)).filter((i) => i >= 0);
    expect(childRequests.filter((i) => i < firstCompleted)).toHaveLength(2);
    expect(ports.ofType("subagent.completed").map((e) => e.parent_id)).toEqual(["call_b", "call_a"]);

    // Results in the order emitted, to the parent's next call and in the turn's messages.
    const parentSecond = callsOf(model, "root")[1]!.prompt;
    expect(toolResultIds(parentSecond)).toEqual(["call_a", "call_b"]);
    expect(ports.terminal).toMatchObject({ type: "turn.completed", payload: { output: "call_a=A result | call_b=B result" } });
    expect(JSON.parse(ports.memory.get("task:call_a")!)).toEqual({ status: "success", output: "A result" });
    expect(JSON.parse(ports.memory.get("task:call_b")!)).toEqual({ status: "success", output: "B result" });

    // Siblings never see each other's task, messages or result.
    for (const call of callsOf(model, "A")) for (const leak of ["Do B", "B result"]) expect(JSON.stringify(call.prompt)).not.toContain(leak);
    for (const call of callsOf(model, "B"))
      for (const leak of ["Do A", "call_a1", "value of a", "A result"]) expect(JSON.stringify(call.prompt)).not.toContain(leak);
    expect(callsOf(model, "A")).toHaveLength(2);
    expect(callsOf(model, "B")).toHaveLength(1);
    // Each child's events carry its own envelope.
    const a = ports.ofType("subagent.spawned").find((e) => e.parent_id === "call_a")!.subagent_id;
    const b = ports.ofType("subagent.spawned").find((e) => e.parent_id === "call_b")!.subagent_id;
    expect(a).not.toBe(b);
    for (const e of ports.events.filter((e) => e.depth === 1 && e.type !== "subagent.spawned")) {
      expect(e.subagent_id).toBe(e.parent_id === "call_a" ? a : b);
    }
    expect(verifyLog(stamp(ports.events))).toEqual([]);
    expect(ports.refused).toEqual([]);
  });
});

describe("run_subtask: depth", () => {
  /** Each level Ln delegates to L(n+1) until `leaf`, which answers; everyone reports what it got. */
  function nestingModel(leaf: string, leafBehaviour?: Behaviour) {
    const level =
      (n: number): Behaviour =>
      ({ step, results }) =>
        step === 0
          ? callTools([[`call_L${n + 1}`, "run_subtask", { title: `L${n + 1}`, instructions: `Level ${n + 1} work` }]])
          : say(`L${n}(${results[0]!.text})`);
    return agents({
      root: level(0),
      L1: level(1),
      L2: level(2),
      L3: level(3),
      [leaf]: leafBehaviour ?? (() => say("leaf")),
    });
  }

  it("nests down to depth 3 (the default max_depth); the depth-3 child is offered no run_subtask and a call to it is refused", async () => {
    const model = nestingModel("L3", ({ step, results }) =>
      // The deepest child calls run_subtask anyway: it is not among its tools.
      step === 0
        ? callTools([["call_L4", "run_subtask", { title: "L4", instructions: "too deep" }]])
        : say(`leaf (${results[0]!.isError ? "refused" : "ran"})`),
    );
    const { ports } = await runNewTurn(setupWith(model, [lookup()]), "go");

    expect(offered(callsOf(model, "root")[0]!)).toEqual(["lookup", "run_subtask"]);
    expect(offered(callsOf(model, "L1")[0]!)).toEqual(["lookup", "run_subtask"]);
    expect(offered(callsOf(model, "L2")[0]!)).toEqual(["lookup", "run_subtask"]);
    expect(offered(callsOf(model, "L3")[0]!)).toEqual(["lookup"]);
    expect(callsOf(model, "L4")).toHaveLength(0);

    expect(ports.ofType("subagent.spawned").map((e) => [e.parent_id, e.depth, e.payload.depth, e.payload.title])).toEqual([
      ["call_L1", 1, 1, "L1"],
      ["call_L2", 2, 2, "L2"],
      ["call_L3", 3, 3, "L3"],
    ]);
    const refused = ports.events.find((e) => e.type === "tool.result" && e.tool_call_id === "call_L4")!;
    expect(refused).toMatchObject({ parent_id: "call_L3", depth: 3, payload: { name: "run_subtask", is_error: true } });
    expect(String(refused.payload.output)).toContain("depth limit"); // the tool is withheld at the deepest level, and a call says why
    // Every event of a level carries that level's depth and spawning call.
    for (const e of childEvents(ports, "call_L3")) expect(e).toMatchObject({ parent_id: "call_L3", depth: 3 });
    expect(ports.terminal).toMatchObject({ type: "turn.completed", payload: { output: "L0(L1(L2(leaf (refused))))" } });
    expect(budgetUsed(ports)).toMatchObject({ subtasks: 3 });

    // The tree nests each run_subtask inside the one that spawned it.
    const tree = buildTree(stamp(ports.events));
    const shape = (n: TreeNode): unknown => ({ id: n.id, title: n.title ?? null, is_error: n.is_error, children: n.children.map(shape) });
    expect(tree.nodes.map(shape)).toEqual([
      {
        id: "call_L1",
        title: "L1",
        is_error: false,
        children: [
          {
            id: "call_L2",
            title: "L2",
            is_error: false,
            children: [{ id: "call_L3", title: "L3", is_error: false, children: [{ id: "call_L4", title: "L4", is_error: true, children: [] }] }],
          },
        ],
      },
    ]);
  });

  it("budget {max_depth: 1} removes run_subtask from depth-1 children", async () => {
    const model = nestingModel("L1");
    const { ports } = await runNewTurn(setupWith(model, [lookup()], { budget: { max_depth: 1 } }), "go");

    expect(offered(callsOf(model, "root")[0]!)).toEqual(["lookup", "run_subtask"]);
    expect(offered(callsOf(model, "L1")[0]!)).toEqual(["lookup"]);
    expect(ports.terminal).toMatchObject({ type: "turn.completed", payload: { output: "L0(leaf)" } });
  });

  it("budget {max_depth: 0} refuses run_subtask at the root with a depth-limit error result", async () => {
    const model = nestingModel("L1");
    const { ports } = await runNewTurn(setupWith(model, [lookup()], { budget: { max_depth: 0 } }), "go");

    const result = payloadOf(ports, "tool.result", "call_L1");
    expect(result).toMatchObject({ is_error: true });
    expect(String(result.output)).toContain("depth");
    expect(ports.ofType("subagent.spawned")).toEqual([]);
    expect(callsOf(model, "L1")).toHaveLength(0);
    expect(ports.terminal).toMatchObject({ type: "turn.completed" });
  });
});

describe("finish_subtask (run_subtask with output_schema)", () => {
  function schemaModel(child: Behaviour) {
    return agents({
      root: ({ step, results }) =>
        step === 0
          ? callTools([["call_sub", "run_subtask", { title: "Q", instructions: "Compute the answer", output_schema: ANSWER_SCHEMA }]])
          : say(`${results[0]!.isError ? "failed" : "ok"}: ${results[0]!.text}`),
      Q: child,
    });
  }

  it("a valid call completes the child with the parsed args as its result", async () => {
    const model = schemaModel(() => callTools([["fin_1", "finish_subtask", { answer: 42 }]]));
    const { ports } = await runNewTurn(setupWith(model, [lookup()]));

    const [call] = callsOf(model, "Q");
    expect(callsOf(model, "Q")).toHaveLength(1);
    expect(offered(call!)).toEqual(["finish_subtask", "lookup", "run_subtask"]);
    expect(call!.tools!.find((t) => t.name === "finish_subtask")).toMatchObject({ inputSchema: ANSWER_SCHEMA });
    expect(textOf(call!.prompt[0]!)).toContain("finish_subtask");

    expect(payloadOf(ports, "tool.result", "fin_1")).toMatchObject({ name: "finish_subtask", is_error: false });
    expect(ports.ofType("subagent.completed")[0]!.payload).toEqual({ result: { answer: 42 } });
    expect(payloadOf(ports, "tool.result", "call_sub")).toMatchObject({ output: { answer: 42 }, is_error: false });
    expect(JSON.parse(ports.memory.get("task:call_sub")!)).toEqual({ status: "success", output: { answer: 42 } });
    expect(ports.terminal).toMatchObject({ type: "turn.completed", payload: { output: 'ok: {"answer":42}' } });
  });

  it("invalid args are an error result fed back to the child, which retries", async () => {
    const model = schemaModel(({ step }) =>
      step === 0 ? callTools([["fin_1", "finish_subtask", { answer: "forty-two" }]]) : callTools([["fin_2", "finish_subtask", { answer: 42 }]]),
    );
    const { ports } = await runNewTurn(setupWith(model, [lookup()]));

    expect(payloadOf(ports, "tool.result", "fin_1")).toMatchObject({ name: "finish_subtask", is_error: true });
    const retry = callsOf(model, "Q")[1]!;
    expect(lastResults(retry.prompt)).toEqual([{ id: "fin_1", name: "finish_subtask", text: expect.stringContaining("answer"), isError: true }]);
    expect(callsOf(model, "Q")).toHaveLength(2);
    expect(ports.ofType("subagent.completed")[0]!.payload).toEqual({ result: { answer: 42 } });
    expect(payloadOf(ports, "tool.result", "call_sub")).toMatchObject({ output: { answer: 42 }, is_error: false });
  });

  it('three refused calls fail the subtask with "schema_not_satisfied"; the parent continues', async () => {
    const model = schemaModel(({ step }) => callTools([[`fin_${step + 1}`, "finish_subtask", { answer: `nope ${step}` }]]));
    const { ports } = await runNewTurn(setupWith(model, [lookup()]));

    expect(callsOf(model, "Q")).toHaveLength(3);
    expect(
      ports
        .ofType("tool.result")
        .filter((e) => e.depth === 1)
        .map((e) => [e.tool_call_id, e.payload.is_error]),
    ).toEqual([
      ["fin_1", true],
      ["fin_2", true],
      ["fin_3", true],
    ]);
    expect(ports.ofType("subagent.failed")).toEqual([expect.objectContaining({ parent_id: "call_sub", depth: 1, payload: { error: "schema_not_satisfied" } })]);
    expect(ports.ofType("subagent.completed")).toEqual([]);
    expect(payloadOf(ports, "tool.result", "call_sub")).toMatchObject({ output: { error: "schema_not_satisfied" }, is_error: true });
    expect(JSON.parse(ports.memory.get("task:call_sub")!)).toEqual({ status: "error", error: "schema_not_satisfied" });
    expect(ports.terminal).toMatchObject({ type: "turn.completed", payload: { output: 'failed: {"error":"schema_not_satisfied"}' } });
  });

  it('a child that answers in text without calling finish_subtask fails with "schema_not_satisfied"', async () => {
    const model = schemaModel(() => say('{"answer": 42}'));
    const { ports } = await runNewTurn(setupWith(model, [lookup()]));

    expect(callsOf(model, "Q")).toHaveLength(1);
    expect(ports.ofType("subagent.failed").map((e) => e.payload)).toEqual([{ error: "schema_not_satisfied" }]);
    expect(payloadOf(ports, "tool.result", "call_sub")).toMatchObject({ output: { error: "schema_not_satisfied" }, is_error: true });
    expect(ports.terminal).toMatchObject({ type: "turn.completed" });
  });

  it("finish_subtask calls whose arguments are not even JSON count as refusals too", async () => {
    // Three unparsable calls, then (were they not counted) a valid one.
    const model = schemaModel(({ step }) =>
      step < 3
        ? [{ type: "tool-call", toolCallId: `fin_${step + 1}`, toolName: "finish_subtask", input: "{answer: 4" }, ...callTools([]).slice(-1)]
        : callTools([["fin_ok", "finish_subtask", { answer: 7 }]]),
    );
    const { ports } = await runNewTurn(setupWith(model, [lookup()]));

    expect(payloadOf(ports, "tool.result", "fin_1")).toMatchObject({ is_error: true });
    expect(callsOf(model, "Q")).toHaveLength(3);
    expect(ports.ofType("subagent.failed").map((e) => e.payload)).toEqual([{ error: "schema_not_satisfied" }]);
  });
});

describe("spawn_subagents", () => {
  const PARALLEL = { allow_parallel_subagents: true, max_parallel_subagents: 2 };

  function spawnModel(jobs: unknown[], children: Record<string, Behaviour>) {
    return agents({
      root: ({ step, results }) => (step === 0 ? callTools([["call_spawn", "spawn_subagents", { jobs }]]) : say(`got ${results[0]!.text}`)),
      ...children,
    });
  }

  it("runs the jobs concurrently and returns [{index, status, output}] in job order", async () => {
    const bothStarted = barrier(2);
    const model = spawnModel(
      [
        { task: "alpha", additional_context: "Context for alpha.", system_prompt: "Be brief." },
        { task: "beta", tool_names: ["lookup"], output_schema: ANSWER_SCHEMA },
      ],
      {
        alpha: async () => {
          await bothStarted("both jobs' first model calls");
          return say("alpha done");
        },
        beta: async () => {
          await bothStarted("both jobs' first model calls");
          return callTools([["fin_beta", "finish_subtask", { answer: 2 }]]);
        },
      },
    );
    const setup = setupWith(model, [lookup()], { ...PARALLEL, instructions: "Parent instructions." });
    const { ports } = await runNewTurn(setup);

    expect(offered(callsOf(model, "root")[0]!)).toEqual(["lookup", "run_subtask", "spawn_subagents"]);
    expect(payloadOf(ports, "tool.result", "call_spawn")).toMatchObject({
      name: "spawn_subagents",
      is_error: false,
      output: [
        { index: 0, status: "success", output: "alpha done" },
        { index: 1, status: "success", output: { answer: 2 } },
      ],
    });
    expect(ports.ofType("subagent.spawned").map((e) => [e.parent_id, e.depth, e.payload.index, e.payload.title])).toEqual([
      ["call_spawn", 1, 0, "alpha"],
      ["call_spawn", 1, 1, "beta"],
    ]);
    // The job's overrides shape only its child: its system prompt, context and tools.
    const alpha = callsOf(model, "alpha")[0]!;
    expect(textOf(alpha.prompt[0]!)).toContain("Be brief.");
    expect(textOf(alpha.prompt[0]!)).not.toContain("Parent instructions.");
    expect(firstUserText(alpha.prompt)).toContain("Context for alpha.");
    expect(alpha.prompt).toHaveLength(2);
    expect(offered(callsOf(model, "beta")[0]!)).toEqual(["finish_subtask", "lookup"]);
    expect(JSON.stringify(callsOf(model, "beta")[0]!.prompt)).not.toContain("alpha");
    // ... and never the parent agent.
    expect(textOf(callsOf(model, "root")[1]!.prompt[0]!)).toBe("Parent instructions.");
    expect(setup.config.instructions).toBe("Parent instructions.");
    expect(budgetUsed(ports)).toMatchObject({ subtasks: 2 });
    expect(ports.terminal).toMatchObject({ type: "turn.completed" });
  });

  it("refuses more jobs than max_parallel_subagents with an error result (no truncation), spawning nothing", async () => {
    const model = spawnModel([{ task: "one" }, { task: "two" }, { task: "three" }], {});
    const { ports } = await runNewTurn(setupWith(model, [lookup()], PARALLEL));

    const result = payloadOf(ports, "tool.result", "call_spawn");
    expect(result).toMatchObject({ name: "spawn_subagents", is_error: true });
    expect(String(result.output)).toContain("3");
    expect(ports.ofType("subagent.spawned")).toEqual([]);
    expect(model.doStreamCalls.map((c) => who(c.prompt))).toEqual(["root", "root"]);
    expect(budgetUsed(ports)).toMatchObject({ subtasks: 0 });
  });

  it("refuses a job whose tool_names are not a subset of the parent's tools", async () => {
    const model = spawnModel([{ task: "one" }, { task: "two", tool_names: ["lookup", "http_fetch"] }], {});
    const { ports } = await runNewTurn(setupWith(model, [lookup()], PARALLEL));

    const result = payloadOf(ports, "tool.result", "call_spawn");
    expect(result).toMatchObject({ is_error: true });
    expect(String(result.output)).toContain("http_fetch");
    expect(ports.ofType("subagent.spawned")).toEqual([]);
    expect(model.doStreamCalls).toHaveLength(2);
  });

  it("a failing job gives {index, status: error, error} while the other succeeds", async () => {
    const model = spawnModel([{ task: "good" }, { task: "bad" }], {
      good: () => say("fine"),
      bad: () => {
        throw new Error("provider exploded");
      },
    });
    const { ports } = await runNewTurn(setupWith(model, [lookup()], PARALLEL));

    const result = payloadOf(ports, "tool.result", "call_spawn");
    expect(result).toMatchObject({ is_error: false });
    expect(result.output).toEqual([
      { index: 0, status: "success", output: "fine" },
      { index: 1, status: "error", error: expect.stringContaining("provider exploded") },
    ]);
    expect(ports.ofType("subagent.failed")).toEqual([
      expect.objectContaining({ parent_id: "call_spawn", depth: 1, payload: { error: expect.stringContaining("provider exploded") } }),
    ]);
    expect(ports.ofType("subagent.completed").map((e) => e.payload)).toEqual([{ result: "fine" }]);
    expect(ports.terminal).toMatchObject({ type: "turn.completed" });
  });

  it("is absent when allow_parallel_subagents is false (a call to it is an unavailable-tool error)", async () => {
    const model = spawnModel([{ task: "one" }], { one: () => say("ran") });
    const setup = setupWith(model, [lookup()], { allow_parallel_subagents: false, tools: ["run_subtask", "lookup", "spawn_subagents"] });
    expect(setup.tools.has("spawn_subagents")).toBe(false);
    const { ports } = await runNewTurn(setup);

    expect(offered(callsOf(model, "root")[0]!)).toEqual(["lookup", "run_subtask"]);
    expect(payloadOf(ports, "tool.result", "call_spawn")).toMatchObject({ is_error: true });
    expect(ports.ofType("subagent.spawned")).toEqual([]);
    expect(callsOf(model, "one")).toHaveLength(0);
  });
});

describe("turn budget", () => {
  /** The turn ended by the budget: budget.exceeded then turn.failed, nothing after, nothing refused. */
  function expectBudgetEnd(ports: MemoryPorts, reason: string, limit: number, observed: number) {
    expect(ports.events.slice(-2)).toEqual([
      { type: "budget.exceeded", turn_id: TURN_ID, payload: { reason, limit, observed } },
      {
        type: "turn.failed",
        turn_id: TURN_ID,
        payload: expect.objectContaining({ error: { code: "budget_exceeded", message: expect.stringContaining(reason) } }),
      },
    ]);
    expect(ports.terminal).toEqual(ports.events.at(-1));
    expect(ports.ofType("budget.exceeded")).toHaveLength(1);
    expect(ports.refused).toEqual([]);
  }

  it("llm_calls: max_total_llm_calls counts planner, child and executor calls", async () => {
    const model = agents({
      root: ({ step, options, results }) => {
        if (options.toolChoice?.type === "none") return say("1. Delegate.");
        return step === 0 ? callTools([["call_sub", "run_subtask", { title: "C", instructions: "c" }]]) : say(`done ${results[0]!.text}`);
      },
      C: () => say("child answer"),
    });
    const { ports } = await runNewTurn(setupWith(model, [], { planning_enabled: true, budget: { max_total_llm_calls: 3 } }));

    // planner (1), executor (2), child (3): the executor's next call would be the 4th.
    expect(ports.ofType("model.requested").map((e) => [e.depth ?? 0, e.payload.phase])).toEqual([
      [0, "planner"],
      [0, "executor"],
      [1, "executor"],
    ]);
    expect(model.doStreamCalls).toHaveLength(3);
    expectBudgetEnd(ports, "llm_calls", 3, 4);
    expect(ports.events.at(-3)).toMatchObject({ type: "tool.result", tool_call_id: "call_sub" });
  });

  it("tool_calls: counted across the tree (the parent's run_subtask and the child's calls)", async () => {
    const executed: string[] = [];
    const model = agents({
      root: () => callTools([["call_sub", "run_subtask", { title: "C", instructions: "c" }]]),
      C: ({ step }) => callTools([[`look_${step + 1}`, "lookup", { key: String(step) }]]),
    });
    const { ports } = await runNewTurn(setupWith(model, [lookup(executed)], { budget: { max_total_tool_calls: 2 } }));

    expect(executed).toEqual(["look_1"]);
    expect(ports.ofType("tool.started").map((e) => e.tool_call_id)).toEqual(["call_sub", "look_1"]);
    expectBudgetEnd(ports, "tool_calls", 2, 3);
  });

  it("subtasks: max_total_subtasks is checked at each spawn", async () => {
    const model = agents({
      root: ({ step }) => callTools([[`call_${step + 1}`, "run_subtask", { title: `S${step + 1}`, instructions: "s" }]]),
      S1: () => say("one"),
      S2: () => say("two"),
    });
    const { ports } = await runNewTurn(setupWith(model, [], { budget: { max_total_subtasks: 1 } }));

    expect(ports.ofType("subagent.spawned").map((e) => e.parent_id)).toEqual(["call_1"]);
    expect(callsOf(model, "S2")).toHaveLength(0);
    expectBudgetEnd(ports, "subtasks", 1, 2);
  });

  it("subtasks: spawn_subagents charges one per job", async () => {
    const model = agents({
      root: () => callTools([["call_spawn", "spawn_subagents", { jobs: [{ task: "one" }, { task: "two" }] }]]),
    });
    const { ports } = await runNewTurn(setupWith(model, [], { allow_parallel_subagents: true, budget: { max_total_subtasks: 1 } }));

    expect(ports.ofType("subagent.spawned")).toEqual([]);
    expectBudgetEnd(ports, "subtasks", 1, 2);
  });

  it("tokens: a child's prompt over max_history_tokens ends the turn before its model call", async () => {
    const instructions = "x".repeat(800);
    const model = agents({
      root: () => callTools([["call_sub", "run_subtask", { title: "Big", instructions }]]),
      Big: () => say("never asked"),
    });
    const { ports } = await runNewTurn(setupWith(model, [], { budget: { max_history_tokens: 150 } }), "hi");

    expect(callsOf(model, "Big")).toHaveLength(0);
    const child = ports.finalState!.calls![0]!.children![0]!;
    const observed = estimateTokens(child.system, child.state.messages);
    expect(observed).toBeGreaterThan(150);
    expectBudgetEnd(ports, "tokens", 150, observed);
  });

  it("wall_clock: time a child's tool takes counts; the next check past max_wall_clock_ms ends the turn", async () => {
    const ports = new MemoryPorts(T0);
    const slowTool = defineTool("slow", async () => {
      ports.advance(61_000);
      return "slow done";
    });
    const model = agents({
      root: () => callTools([["call_sub", "run_subtask", { title: "C", instructions: "c" }]]),
      C: ({ step }) => (step === 0 ? callTools([["slow_1", "slow", {}]]) : say("never asked")),
    });
    await runNewTurn(setupWith(model, [slowTool], { budget: { max_wall_clock_ms: 60_000 } }), "hello", ports);

    expect(callsOf(model, "C")).toHaveLength(1);
    expect(payloadOf(ports, "tool.result", "slow_1")).toMatchObject({ output: "slow done" });
    expectBudgetEnd(ports, "wall_clock", 60_000, 61_000);
  });

  /** Three siblings: A waits in a tool, C in a model call, and B exceeds the wall clock once both are under way. */
  async function siblingsScenario() {
    const ports = new MemoryPorts(T0);
    const aStarted = deferred();
    const cStarted = deferred();
    const seen: Record<string, unknown> = {};
    const waitTool = defineTool("wait_for_abort", (_, ctx) => {
      aStarted.resolve();
      return new Promise((_resolve, reject) =>
        ctx.signal.addEventListener("abort", () => {
          seen.tool = ctx.signal.reason;
          reject(ctx.signal.reason);
        }),
      );
    });
    const burn = defineTool("burn", async () => {
      await within(Promise.all([aStarted.promise, cStarted.promise]), "the siblings to be under way");
      ports.advance(61_000);
      return "burnt";
    });
    const model = agents({
      root: () =>
        callTools([
          ["call_a", "run_subtask", { title: "A", instructions: "a" }],
          ["call_b", "run_subtask", { title: "B", instructions: "b" }],
          ["call_c", "run_subtask", { title: "C", instructions: "c" }],
        ]),
      A: () => callTools([["wait_1", "wait_for_abort", {}]]),
      B: ({ step }) => (step === 0 ? callTools([["burn_1", "burn", {}]]) : say("never asked")),
      C: ({ options }) => {
        cStarted.resolve();
        return stalled(options, (reason) => (seen.model = reason));
      },
    });
    const setup = setupWith(model, [waitTool, burn], { budget: { max_wall_clock_ms: 60_000 } });
    await runNewTurn(setup, "hello", ports);
    return { ports, model, seen };
  }

  it("exceeding inside a child stops its running siblings (tools and model calls see the abort); nothing is written after the end", async () => {
    const { ports, model, seen } = await siblingsScenario();

    expectBudgetEnd(ports, "wall_clock", 60_000, 61_000);
    expect(seen.tool).toBeInstanceOf(BudgetExceededError);
    expect(seen.model).toBeInstanceOf(BudgetExceededError);
    expect((seen.tool as BudgetExceededError).reason).toBe("wall_clock");
    expect(callsOf(model, "A")).toHaveLength(1);
    expect(callsOf(model, "B")).toHaveLength(1);
    expect(callsOf(model, "C")).toHaveLength(1);
    // The stopped tool reports no result of its own (the turn's end closes it).
    expect(ports.events.filter((e) => e.tool_call_id === "wait_1").map((e) => e.type)).toEqual(["tool.started"]);
    expect(ports.ofType("subagent.completed")).toEqual([]);
  });

  it("the state a budget-ended turn hands to finish() lets the store close everything left open (the log then verifies)", async () => {
    const { ports } = await siblingsScenario();

    // What the session object writes at the end: closing events for the open calls, then the terminal event.
    const closing = closingEvents(ports.finalState!, "interrupted", ports.now());
    const log = stamp([...ports.events.slice(0, -1), ...closing, ports.terminal!]);
    expect(verifyLog(log)).toEqual([]);
    // Every sub-agent ends with subagent.completed or subagent.failed.
    const spawned = log.filter((e) => e.type === "subagent.spawned").map((e) => e.subagent_id);
    const ended = log.filter((e) => e.type === "subagent.completed" || e.type === "subagent.failed").map((e) => e.subagent_id);
    expect(spawned).toHaveLength(3);
    expect([...ended].sort()).toEqual([...spawned].sort());
  });

  it("a sibling whose tool ignores the abort starts no further model call once the budget is exceeded", async () => {
    const aStarted = deferred();
    let stubbornFinished = false;
    const stubborn = defineTool("stubborn", (_, ctx) => {
      aStarted.resolve();
      // Ignores the abort for a moment, then returns a result anyway.
      return new Promise((resolve) =>
        ctx.signal.addEventListener("abort", () =>
          setTimeout(() => {
            stubbornFinished = true;
            resolve("finished anyway");
          }, 10),
        ),
      );
    });
    const model = agents({
      root: () =>
        callTools([
          ["call_a", "run_subtask", { title: "A", instructions: "a" }],
          ["call_b", "run_subtask", { title: "B", instructions: "b" }],
        ]),
      A: ({ step }) => (step === 0 ? callTools([["st_1", "stubborn", {}]]) : say("A went on")),
      B: async () => {
        await within(aStarted.promise, "A's tool");
        return callTools([["call_b2", "run_subtask", { title: "B2", instructions: "b2" }]]); // the 3rd subtask
      },
      B2: () => say("never"),
    });
    const { ports } = await runNewTurn(setupWith(model, [stubborn], { budget: { max_total_subtasks: 2 } }));

    expect(stubbornFinished).toBe(true);
    expectBudgetEnd(ports, "subtasks", 2, 3);
    expect(callsOf(model, "B2")).toHaveLength(0);
    expect(callsOf(model, "A")).toHaveLength(1);
    // After the abort, A's loop must not go on to another model call (model.requested, a checkpoint, a charge).
    expect(ports.events.filter((e) => e.type === "model.requested" && e.parent_id === "call_a")).toHaveLength(1);
    expect(ports.finalState!.budget_used!.llm_calls).toBe(3);
  });

  it("max_iterations_per_level ends only that child, with error iteration_limit; the parent continues", async () => {
    const executed: string[] = [];
    const model = agents({
      root: ({ step, results }) =>
        step === 0 ? callTools([["call_sub", "run_subtask", { title: "Loop", instructions: "l" }]]) : say(`child said ${results[0]!.text}`),
      Loop: ({ step }) => callTools([[`look_${step + 1}`, "lookup", { key: String(step) }]]),
    });
    const { ports } = await runNewTurn(setupWith(model, [lookup(executed)], { budget: { max_iterations_per_level: 2 } }));

    expect(callsOf(model, "Loop")).toHaveLength(2);
    expect(executed).toEqual(["look_1"]); // the call of the last allowed iteration is not run
    expect(ports.ofType("subagent.failed").map((e) => e.payload)).toEqual([{ error: "iteration_limit" }]);
    expect(payloadOf(ports, "tool.result", "call_sub")).toMatchObject({ output: { error: "iteration_limit" }, is_error: true });
    expect(ports.ofType("budget.exceeded")).toEqual([]);
    expect(ports.terminal).toMatchObject({
      type: "turn.completed",
      payload: { output: 'child said {"error":"iteration_limit"}', stop_reason: "final_answer" },
    });
  });

  it("an interrupt reaches a running child's tool; the turn stops without writing anything further", async () => {
    const ports = new MemoryPorts();
    const reason = new Error("interrupted by user");
    let sawAbort: unknown = null;
    const waitTool = defineTool("wait_for_abort", (_, ctx) => {
      return new Promise((_resolve, reject) =>
        ctx.signal.addEventListener("abort", () => {
          sawAbort = ctx.signal.reason;
          reject(ctx.signal.reason);
        }),
      );
    });
    ports.onEvent = (e) => {
      // After the commit, once the tool runs (the step's tool.started events are committed before the calls run).
      if (e.type === "tool.started" && e.tool_call_id === "wait_1") setTimeout(() => ports.abort(reason), 0);
    };
    const model = agents({
      root: () => callTools([["call_sub", "run_subtask", { title: "C", instructions: "c" }]]),
      C: () => callTools([["wait_1", "wait_for_abort", {}]]),
    });

    await expect(runNewTurn(setupWith(model, [waitTool]), "hello", ports)).rejects.toBe(reason);
    expect(sawAbort).toBe(reason);
    expect(ports.types().at(-1)).toBe("tool.started");
    expect(ports.terminal).toBeNull();
    expect(ports.refused).toEqual([]);
  });
});

describe("cost", () => {
  function costModel() {
    return agents({
      root: ({ step, results }) =>
        step === 0
          ? callTools([["call_sub", "run_subtask", { title: "C", instructions: "c" }]], usage(100, 20))
          : say(`got ${results[0]!.text}`, usage(300, 40)),
      C: ({ step }) => (step === 0 ? callTools([["look_1", "lookup", { key: "k" }]], usage(50, 10)) : say("child done", usage(70, 30))),
    });
  }
  const perCall = [tokens(100, 20), tokens(50, 10), tokens(70, 30), tokens(300, 40)];
  const priced = (u: { input_tokens: number; output_tokens: number }) => (u.input_tokens * 2.5 + u.output_tokens * 10) / 1_000_000;

  it("records cost.recorded after every model call at every level, and a summary on turn.completed", async () => {
    const { ports } = await runNewTurn(setupWith(costModel(), [lookup()]));

    const costs = ports.ofType("cost.recorded");
    expect(costs.map((e) => [e.depth ?? 0, e.payload.usage])).toEqual([
      [0, perCall[0]],
      [1, perCall[1]],
      [1, perCall[2]],
      [0, perCall[3]],
    ]);
    costs.forEach((e, i) => {
      expect(e.payload).toEqual({ model: "openai:gpt-4o", phase: "executor", usage: perCall[i], cost_usd: expect.any(Number) });
      expect(e.payload.cost_usd as number).toBeCloseTo(priced(perCall[i]!), 12);
      // Each comes right after its call's model.completed, with the same step and envelope.
      const completed = ports.events[ports.events.indexOf(e) - 1]!;
      expect(completed).toMatchObject({ type: "model.completed", step_id: e.step_id, payload: { usage: perCall[i] } });
      expect(completed.subagent_id).toBe(e.subagent_id);
    });
    const total = tokens(520, 100);
    expect(ports.terminal).toEqual({
      type: "turn.completed",
      turn_id: TURN_ID,
      payload: { output: "got child done", stop_reason: "final_answer", usage: total, cost_usd: expect.any(Number) },
    });
    expect(ports.terminal!.payload.cost_usd as number).toBeCloseTo(priced(total), 12);
  });

  it("an unknown model's calls cost null, and so does the turn", async () => {
    const { ports } = await runNewTurn(setupWith(costModel(), [lookup()], { model: "openai:mystery-model-1" }));

    const costs = ports.ofType("cost.recorded");
    expect(costs).toHaveLength(4);
    for (const e of costs) expect(e.payload).toMatchObject({ model: "openai:mystery-model-1", cost_usd: null });
    expect(ports.terminal!.payload).toMatchObject({ usage: tokens(520, 100), cost_usd: null });
  });
});

describe("resuming a turn whose child is mid-way", () => {
  function resumeModel() {
    return agents({
      root: ({ step, results }) =>
        step === 0
          ? callTools([["call_sub", "run_subtask", { title: "Fetch", instructions: "Look up a and b" }]], usage(10, 5))
          : say(`Parent: ${results[0]!.text}`, usage(40, 8)),
      Fetch: ({ step, results }) =>
        step === 0
          ? callTools([["look_a", "lookup", { key: "a" }]], usage(12, 3))
          : step === 1
            ? callTools([["look_b", "lookup", { key: "b" }]], usage(20, 4))
            : say(`${results[0]!.text}; earlier a`, usage(30, 6)),
    });
  }

  async function original() {
    const executed: string[] = [];
    const model = resumeModel();
    const { ports } = await runNewTurn(setupWith(model, [lookup(executed)]), "Fetch things");
    return { ports, executed, model };
  }

  it("continues the child where it was: no new subagent.spawned, its earlier tool not re-run, the same end", async () => {
    const first = await original();
    expect(first.executed).toEqual(["look_a", "look_b"]);
    const afterLookA = first.ports.checkpoints.find((c) => {
      const e = first.ports.events[c.afterEvents - 1]!;
      return e.type === "tool.result" && e.tool_call_id === "look_a";
    });
    expect(afterLookA).toBeDefined();

    const executed: string[] = [];
    const model = resumeModel();
    const ports = new MemoryPorts();
    await runTurn(snapshot(afterLookA!.state), setupWith(model, [lookup(executed)]), ports);

    expect(executed).toEqual(["look_b"]);
    expect(ports.ofType("subagent.spawned")).toEqual([]);
    expect(ports.ofType("tool.started").map((e) => e.tool_call_id)).toEqual(["look_b"]);
    // The child's remaining two calls, then the parent's answer.
    expect(model.doStreamCalls.map((c) => who(c.prompt))).toEqual(["Fetch", "Fetch", "root"]);
    expect(callsOf(model, "Fetch")[0]!.prompt).toEqual(callsOf(first.model, "Fetch")[1]!.prompt);
    // The resumed child's events keep its envelope.
    const subagent_id = first.ports.ofType("subagent.spawned")[0]!.subagent_id;
    const resumedChild = ports.events.slice(
      0,
      ports.events.findIndex((e) => e.type === "subagent.completed"),
    );
    expect(resumedChild.length).toBeGreaterThan(0);
    for (const e of resumedChild) expect(e).toMatchObject({ parent_id: "call_sub", depth: 1, subagent_id });
    expect(ports.ofType("subagent.completed")).toEqual(first.ports.ofType("subagent.completed"));

    expect(ports.terminal).toEqual(first.ports.terminal);
    expect(ports.finalState!.messages).toEqual(first.ports.finalState!.messages);
    expect(ports.finalState!.budget_used).toEqual(first.ports.finalState!.budget_used);
    expect(ports.refused).toEqual([]);
  });

  it("resuming from any checkpoint spawns the child once, runs each tool once, and gives the same end and tree", async () => {
    const first = await original();
    const tree = buildTree(stamp(first.ports.events));
    expect(first.ports.checkpoints.length).toBeGreaterThan(10);

    for (const { afterEvents, state } of first.ports.checkpoints) {
      const where = `resumed from the checkpoint written with event #${afterEvents} (${first.ports.types()[afterEvents - 1]})`;
      const prefix = first.ports.events.slice(0, afterEvents);
      const executed: string[] = [];
      const ports = new MemoryPorts();
      await runTurn(snapshot(state), setupWith(resumeModel(), [lookup(executed)]), ports);
      const whole = [...prefix, ...ports.events];

      expect.soft(ports.terminal, where).toEqual(first.ports.terminal);
      expect.soft(ports.finalState?.messages, where).toEqual(first.ports.finalState!.messages);
      expect
        .soft(
          whole.filter((e) => e.type === "subagent.spawned"),
          where,
        )
        .toHaveLength(1);
      for (const id of ["look_a", "look_b"]) {
        const ranBefore = prefix.filter((e) => e.type === "tool.result" && e.tool_call_id === id).length;
        expect.soft(ranBefore + executed.filter((x) => x === id).length, `${where}: runs of ${id}`).toBe(1);
      }
      expect.soft(buildTree(stamp(whole)), where).toEqual(tree);
      expect.soft(ports.refused, where).toEqual([]);
    }
  });
});

describe("execution tree", () => {
  it("nests the child's tool calls under the run_subtask node, with title, bounded previews, is_error and duration_ms", async () => {
    const ports = new MemoryPorts(T0);
    const bigArg = "q".repeat(700);
    // Serial tools, so each one's duration is exactly the time it takes.
    const search = defineTool(
      "search",
      async () => {
        ports.advance(42);
        return "r".repeat(1000);
      },
      { parallel_safe: false },
    );
    const broken = defineTool(
      "broken",
      async () => {
        ports.advance(8);
        throw new Error("it broke");
      },
      { parallel_safe: false },
    );
    const model = agents({
      root: ({ step }) => (step === 0 ? callTools([["call_sub", "run_subtask", { title: "Research", instructions: "i".repeat(800) }]]) : say("done")),
      Research: ({ step }) =>
        step === 0
          ? callTools([
              ["s_1", "search", { query: bigArg }],
              ["b_1", "broken", {}],
            ])
          : say("research result"),
    });
    await runNewTurn(setupWith(model, [search, broken]), "hello", ports);

    const { version, nodes } = buildTree(stamp(ports.events));
    expect(version).toBe(1);
    expect(nodes).toHaveLength(1);
    const sub = nodes[0]!;
    expect(sub).toMatchObject({
      id: "call_sub",
      parent_id: null,
      name: "run_subtask",
      title: "Research",
      is_error: false,
      result_preview: "research result",
      duration_ms: 50,
    });
    expect(sub.args_preview!.length).toBe(500);
    expect(sub.args_preview!.startsWith('{"title":"Research"')).toBe(true);
    expect(sub.children.map((n) => n.id)).toEqual(["s_1", "b_1"]);
    const [s1, b1] = sub.children;
    expect(s1).toMatchObject({ id: "s_1", parent_id: "call_sub", name: "search", is_error: false, duration_ms: 42, children: [] });
    expect(s1!.args_preview!.length).toBe(500);
    expect(s1!.args_preview!.startsWith('{"query":"qqq')).toBe(true);
    expect(s1!.result_preview!.length).toBe(500);
    expect(s1!.result_preview!.startsWith("rrrr")).toBe(true);
    expect(b1).toMatchObject({
      id: "b_1",
      parent_id: "call_sub",
      name: "broken",
      is_error: true,
      duration_ms: 8,
      args_preview: "{}",
      result_preview: "it broke",
      children: [],
    });
  });
});
