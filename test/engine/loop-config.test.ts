// The agent configuration's behaviour in the engine: planner phase, budget awareness
// (per-message advisories, limit:N compaction and the budget stop), injected tool args, live message
// injection, handoffs and output_schema. The engine runs against the AI SDK's mock model and in-memory ports.
import type { LanguageModelV3, LanguageModelV3Message, LanguageModelV3Prompt } from "@ai-sdk/provider";
import type { ModelMessage } from "ai";
import { describe, expect, it, vi } from "vitest";
import { BUDGET_LIMIT_MESSAGE, estimateTokens } from "../../src/engine/context-budget";
import { runTurn, type TurnSetup } from "../../src/engine/loop";
import { ALL_CLASSES_POLICY, resolveToolbelt } from "../../src/engine/tools/toolbelt";
import type { ToolDefinition } from "../../src/engine/tools/types";
import { finalMessages, newTurnState } from "../../src/engine/turn-state";
import { type AgentConfigInput, AgentConfigSchema } from "../../src/protocol/agent-config";
import { MemoryPorts, snapshot } from "./support/memory-ports";
import {
  callTools,
  countingTool,
  defineTool,
  finishPart,
  makeSetup,
  payloadOf,
  prompts,
  runNewTurn,
  say,
  scriptedModel,
  TURN_ID,
  textParts,
  tokens,
  toolCallPart,
  usage,
} from "./support/mock-model";

// ---------------------------------------------------------------------------------------------------
// Helpers

/** The phase of every model call, in order, from the model.requested events. */
function phases(ports: MemoryPorts): unknown[] {
  return ports.ofType("model.requested").map((e) => e.payload.phase);
}

function systemOf(prompt: LanguageModelV3Prompt): string | undefined {
  const system = prompt.find((m) => m.role === "system");
  return system?.role === "system" ? system.content : undefined;
}

/** The text of a prompt message (user or assistant), its text parts joined. */
function textOf(message: LanguageModelV3Message): string {
  if (message.role === "system") return message.content;
  return message.content.map((p) => (p.type === "text" ? p.text : "")).join("");
}

/** A user message as the provider receives it. */
function userMessage(text: string): LanguageModelV3Message {
  return { role: "user", content: [{ type: "text", text }] };
}

const ADVISORY = /^\[Context budget: about (\d+) of (\d+) tokens used \((\d+)%\), about (\d+) remaining\.\]$/;

/** A parameters schema with one required string `q` and nothing else. */
const STRICT_SCHEMA = {
  type: "object",
  properties: { q: { type: "string", description: "The query" } },
  required: ["q"],
  additionalProperties: false,
};

/** A setup whose tools are the agent's toolbelt (its handoff tools included) plus the given test tools. */
function toolbeltSetup(model: LanguageModelV3, tools: ToolDefinition[], config: AgentConfigInput): TurnSetup {
  const parsed = AgentConfigSchema.parse({ model: "openai:gpt-4o", ...config });
  return {
    config: parsed,
    model,
    tools: new Map([...tools.map((t): [string, ToolDefinition] => [t.name, t]), ...resolveToolbelt(parsed, ALL_CLASSES_POLICY)]),
    history: [],
    resolveModel: () => model,
  };
}

// ---------------------------------------------------------------------------------------------------

describe("planner phase (planning_enabled)", () => {
  const PLANNER_DIRECTIVE_FRAGMENT = "You are the planning phase.";

  it("makes exactly one planner call before the first executor call, and none later", async () => {
    const lookup = defineTool("lookup", async () => "42");
    const model = scriptedModel(say("1. Look it up.\n2. Answer."), callTools([["call_1", "lookup", {}]]), say("It is 42."));
    const { ports } = await runNewTurn(makeSetup({ model, tools: [lookup], config: { planning_enabled: true } }), "What is it?");

    expect(phases(ports)).toEqual(["planner", "executor", "executor"]);
    expect(model.doStreamCalls).toHaveLength(3);
    expect(ports.types().slice(0, 5)).toEqual(["model.requested", "model.completed", "cost.recorded", "reasoning.summary", "model.requested"]);
    expect(ports.ofType("model.requested")[0]!.payload).toEqual({
      model: "openai:gpt-4o",
      phase: "planner",
      request_hash: expect.any(String),
      reservation: expect.any(Object),
    });
    // The planner's text is not streamed to clients as the answer.
    expect(ports.ofType("model.delta").map((e) => e.payload.text)).toEqual(["It is 42."]);
    expect(ports.terminal).toMatchObject({ type: "turn.completed", payload: { output: "It is 42.", stop_reason: "final_answer" } });
    expect(ports.refused).toEqual([]);
  });

  it("makes no planner call when planning is disabled, even with a planning_model", async () => {
    const resolveModel = vi.fn((): LanguageModelV3 => scriptedModel());
    const model = scriptedModel(say("hi"));
    const { ports } = await runNewTurn(makeSetup({ model, resolveModel, config: { planning_model: "openai:gpt-4o-mini" } }));

    expect(phases(ports)).toEqual(["executor"]);
    expect(resolveModel).not.toHaveBeenCalled();
    expect(ports.ofType("reasoning.summary")).toEqual([]);
  });

  it("resolves a different planning_model through setup.resolveModel and uses it for the planner only", async () => {
    const plannerModel = scriptedModel(say("1. Answer briefly."));
    const executorModel = scriptedModel(say("Done."));
    const resolveModel = vi.fn((spec: string): LanguageModelV3 => (spec === "anthropic:claude-3-5-haiku" ? plannerModel : scriptedModel()));
    const { ports } = await runNewTurn(
      makeSetup({ model: executorModel, resolveModel, config: { planning_enabled: true, planning_model: "anthropic:claude-3-5-haiku" } }),
    );

    expect(resolveModel.mock.calls).toEqual([["anthropic:claude-3-5-haiku"]]);
    expect(plannerModel.doStreamCalls).toHaveLength(1);
    expect(executorModel.doStreamCalls).toHaveLength(1);
    expect(ports.ofType("model.requested").map((e) => e.payload)).toEqual([
      { model: "anthropic:claude-3-5-haiku", phase: "planner", request_hash: expect.any(String), reservation: expect.any(Object) },
      { model: "openai:gpt-4o", phase: "executor", step: 1, request_hash: expect.any(String), reservation: expect.any(Object) },
    ]);
    // The executor's config keeps its own model.
    expect(ports.terminal).toMatchObject({ type: "turn.completed", payload: { output: "Done." } });
  });

  it("without planning_model and planning_instructions, the planner falls back to the executor's model and instructions", async () => {
    const resolveModel = vi.fn((): LanguageModelV3 => scriptedModel());
    const model = scriptedModel(say("1. Step."), say("Done."));
    await runNewTurn(makeSetup({ model, resolveModel, config: { planning_enabled: true, instructions: "You are a careful assistant." } }));

    expect(resolveModel).not.toHaveBeenCalled();
    expect(model.doStreamCalls).toHaveLength(2);
    const plannerSystem = systemOf(prompts(model)[0]!)!;
    expect(plannerSystem.startsWith("You are a careful assistant.\n\n")).toBe(true);
    expect(plannerSystem).toContain(PLANNER_DIRECTIVE_FRAGMENT);
  });

  it("uses planning_instructions (plus the built-in directive) as the planner's system prompt, and not the executor's", async () => {
    const model = scriptedModel(say("1. Step."), say("Done."));
    await runNewTurn(
      makeSetup({
        model,
        config: { planning_enabled: true, instructions: "EXECUTOR RULES.", planning_instructions: "Return a short numbered plan." },
      }),
    );

    const [plannerPrompt, executorPrompt] = prompts(model);
    const plannerSystem = systemOf(plannerPrompt!)!;
    expect(plannerSystem.startsWith("Return a short numbered plan.\n\n")).toBe(true);
    expect(plannerSystem).toContain(PLANNER_DIRECTIVE_FRAGMENT);
    expect(plannerSystem).not.toContain("EXECUTOR RULES.");
    expect(systemOf(executorPrompt!)).toBe("EXECUTOR RULES.");
  });

  it("gives the planner the executor's tool schemas with toolChoice none", async () => {
    const lookup = defineTool("lookup", async () => "found", { parameters: STRICT_SCHEMA });
    const model = scriptedModel(say("1. Use lookup."), say("Answer."));
    await runNewTurn(makeSetup({ model, tools: [lookup], config: { planning_enabled: true } }));

    const [planner, executor] = model.doStreamCalls;
    expect(planner!.tools).toEqual([{ type: "function", name: "lookup", description: "The lookup tool", inputSchema: STRICT_SCHEMA }]);
    expect(planner!.tools).toEqual(executor!.tools);
    expect(planner!.toolChoice).toEqual({ type: "none" });
    expect(executor!.toolChoice).toEqual({ type: "auto" });
  });

  it("a planner that calls a tool anyway: the call is planner chatter, never runs, and the turn goes on", async () => {
    // Providers that ignore tool_choice "none" (many OpenAI-compatible servers) can still emit a call.
    const { tool: lookup, runs } = countingTool("lookup", () => "found", { parameters: STRICT_SCHEMA });
    const model = scriptedModel(
      [...textParts(["1. Use lookup."]), toolCallPart(["plan_call", "lookup", { q: "x" }]), finishPart("tool-calls", usage(5, 5))],
      say("Answer."),
    );
    const { ports } = await runNewTurn(makeSetup({ model, tools: [lookup], config: { planning_enabled: true } }), "Task");

    expect(runs()).toBe(0);
    expect(ports.ofType("tool.started")).toEqual([]);
    expect(ports.ofType("reasoning.summary").map((e) => e.payload)).toEqual([{ kind: "plan", text: "1. Use lookup." }]);
    expect(phases(ports)).toEqual(["planner", "executor"]);
    expect(prompts(model)[1]).toEqual([userMessage("Task\n\nPlan from the planning phase:\n1. Use lookup.")]);
    expect(ports.terminal).toMatchObject({ type: "turn.completed", payload: { output: "Answer.", stop_reason: "final_answer" } });
  });

  it("emits the plan as reasoning.summary, appends it to the executor's task, and keeps every planner message out", async () => {
    const model = scriptedModel(say(["  1. Find the order.\n", "2. Report its status.  \n"]), say("Shipped."));
    const { ports } = await runNewTurn(
      makeSetup({ model, config: { planning_enabled: true, instructions: "Be brief.", planning_instructions: "Plan it." } }),
      "Where is order o1?",
    );
    const plan = "1. Find the order.\n2. Report its status.";

    expect(ports.ofType("reasoning.summary")).toEqual([{ type: "reasoning.summary", turn_id: TURN_ID, payload: { kind: "plan", text: plan } }]);
    expect(prompts(model)[0]).toEqual([{ role: "system", content: expect.stringContaining("Plan it.") }, userMessage("Where is order o1?")]);
    // Exactly: the executor's instructions, then the task with the plan appended; no planner system prompt or reply.
    const executorPrompt = prompts(model)[1]!;
    expect(executorPrompt).toEqual([{ role: "system", content: "Be brief." }, userMessage(`Where is order o1?\n\nPlan from the planning phase:\n${plan}`)]);
    expect(JSON.stringify(executorPrompt)).not.toContain(PLANNER_DIRECTIVE_FRAGMENT);
    expect(JSON.stringify(executorPrompt)).not.toContain("Plan it.");
    expect(executorPrompt.some((m) => m.role === "assistant")).toBe(false);

    // The persisted conversation has the original input, without the plan.
    const persisted = finalMessages(ports.finalState!, "unused");
    expect(persisted).toEqual([
      { role: "user", content: "Where is order o1?" },
      { role: "assistant", content: [{ type: "text", text: "Shipped." }] },
    ]);
    expect(ports.finalState!.plan).toBe(plan);
  });

  it("gives the plan to every executor call of the turn, including after tool results", async () => {
    const lookup = defineTool("lookup", async () => "shipped");
    const model = scriptedModel(say("1. Look up."), callTools([["call_1", "lookup", {}]]), say("Shipped."));
    await runNewTurn(makeSetup({ model, tools: [lookup], config: { planning_enabled: true } }), "Status?");

    const third = prompts(model)[2]!;
    expect(third[0]).toEqual(userMessage("Status?\n\nPlan from the planning phase:\n1. Look up."));
    expect(third.map((m) => m.role)).toEqual(["user", "assistant", "tool"]);
  });

  it("an empty plan leaves the input as it was and emits no reasoning.summary", async () => {
    const model = scriptedModel(say(" \n  "), say("Done."));
    const { ports } = await runNewTurn(makeSetup({ model, config: { planning_enabled: true } }), "Just do it.");

    expect(phases(ports)).toEqual(["planner", "executor"]);
    expect(ports.ofType("reasoning.summary")).toEqual([]);
    expect(prompts(model)[1]).toEqual([userMessage("Just do it.")]);
    expect(ports.finalState!.messages[0]).toEqual({ role: "user", content: "Just do it." });
    expect(ports.finalState!.plan).toBe("");
  });

  it("counts the planner's usage in the turn's usage", async () => {
    const model = scriptedModel(say("1. Step.", usage(7, 3)), say("Done.", usage(10, 5)));
    const { ports } = await runNewTurn(makeSetup({ model, config: { planning_enabled: true } }));

    expect(ports.ofType("model.completed")[0]!.payload).toMatchObject({ usage: tokens(7, 3), phase: "planner" });
    expect(ports.terminal!.payload).toMatchObject({ usage: tokens(17, 8) });
  });

  it.each([
    ["a plan", "1. Step one."],
    ["an empty plan", "   "],
  ])("resuming from the checkpoint written after the planner (%s) does not plan again", async (_, planText) => {
    const replies = () => [say(planText, usage(7, 3)), say("Done.", usage(10, 5))];
    const config = { planning_enabled: true };
    const originalModel = scriptedModel(...replies());
    const original = await runNewTurn(makeSetup({ model: originalModel, config }), "Task");
    const afterPlanner = original.ports.checkpoints.find((c) => c.state.plan !== undefined && c.state.step === 0);
    expect(afterPlanner).toBeDefined();
    // The plan is checkpointed with the planner's model.completed and cost.recorded.
    expect(original.ports.types()[afterPlanner!.afterEvents - 1]).toBe("cost.recorded");
    expect(afterPlanner!.state.plan).toBe(planText.trim());

    const model = scriptedModel(...replies().slice(1)); // only the executor's reply is left
    const ports = new MemoryPorts();
    await runTurn(snapshot(afterPlanner!.state), makeSetup({ model, config }), ports);

    expect(phases(ports)).toEqual(["executor"]);
    expect(model.doStreamCalls).toHaveLength(1);
    expect(prompts(model)[0]).toEqual(prompts(originalModel)[1]); // the same executor prompt, plan included
    expect(ports.terminal).toEqual(original.ports.terminal); // usage still counts the planner's call
    expect(ports.finalState!.messages).toEqual(original.ports.finalState!.messages);
  });
});

describe("budget_awareness: per-message", () => {
  it("ends every assistant message and tool result of the executor prompt with the advisory, and stores none", async () => {
    const history: ModelMessage[] = [
      { role: "user", content: "Earlier question" },
      { role: "assistant", content: "Earlier answer" },
    ];
    const historyBefore = snapshot(history);
    const lookup = defineTool("lookup", async () => ({ value: 42 }));
    const explode = defineTool("explode", async () => {
      throw new Error("boom");
    });
    const model = scriptedModel(
      [
        ...textParts(["Let me check."]),
        toolCallPart(["call_1", "lookup", {}]),
        toolCallPart(["call_2", "explode", {}]),
        finishPart("tool-calls", usage(10, 5)),
      ],
      say("It is 42."),
    );
    const { ports } = await runNewTurn(
      makeSetup({ model, history, tools: [lookup, explode], config: { budget_awareness: "per-message", context_window: 4096 } }),
      "What is the value?",
    );

    const [first, second] = prompts(model);
    const notes: string[] = [];
    let advised = 0;
    for (const prompt of [first!, second!]) {
      for (const m of prompt) {
        if (m.role === "assistant") {
          const last = m.content.at(-1)!;
          expect(last.type).toBe("text");
          if (last.type === "text") notes.push(last.text);
          advised += 1;
        } else if (m.role === "tool") {
          for (const part of m.content) {
            expect(part.type).toBe("tool-result");
            if (part.type !== "tool-result") continue;
            expect(["text", "error-text"]).toContain(part.output.type);
            const value = "value" in part.output ? String(part.output.value) : "";
            notes.push(value.slice(value.lastIndexOf("\n") + 1));
            advised += 1;
          }
        } else {
          expect(JSON.stringify(m)).not.toContain("[Context budget");
        }
      }
    }
    // First call: the history's assistant message. Second: that one, the tool-call message and both results.
    expect(advised).toBe(5);
    expect(notes).toHaveLength(5);
    for (const note of notes) {
      const match = ADVISORY.exec(note);
      expect(match, note).not.toBeNull();
      const [, used, window, , remaining] = match!.map(Number);
      expect(window).toBe(4096);
      expect(used! + remaining!).toBe(4096);
      expect(used).toBeGreaterThan(0);
    }
    // The content before the advisory is the real message.
    expect(second!.find((m) => m.role === "tool")).toMatchObject({
      content: [
        { toolCallId: "call_1", output: { type: "text", value: expect.stringMatching(/^\{"value":42\}\n\[Context budget/) } },
        { toolCallId: "call_2", output: { type: "error-text", value: expect.stringMatching(/^boom\n\[Context budget/) } },
      ],
    });
    expect(second!.find((m) => m.role === "assistant" && m.content.some((p) => p.type === "tool-call"))).toMatchObject({
      content: [
        { type: "text", text: "Let me check." },
        { type: "tool-call", toolCallId: "call_1" },
        { type: "tool-call", toolCallId: "call_2" },
        { type: "text", text: expect.stringMatching(ADVISORY) },
      ],
    });

    // Nothing stored carries it: not the turn's messages, not any checkpoint, not the history.
    expect(JSON.stringify(ports.finalState!.messages)).not.toContain("[Context budget");
    for (const c of ports.checkpoints) expect(JSON.stringify(c.state)).not.toContain("[Context budget");
    expect(history).toEqual(historyBefore);
    expect(ports.finalState!.messages.at(-2)).toEqual({
      role: "tool",
      content: [
        { type: "tool-result", toolCallId: "call_1", toolName: "lookup", output: { type: "json", value: { value: 42 } } },
        { type: "tool-result", toolCallId: "call_2", toolName: "explode", output: { type: "error-text", value: "boom" } },
      ],
    });
  });

  it("adds no advisory without budget_awareness", async () => {
    const lookup = defineTool("lookup", async () => "x");
    const model = scriptedModel(callTools([["call_1", "lookup", {}]]), say("done"));
    await runNewTurn(makeSetup({ model, tools: [lookup], config: { context_window: 4096 } }));
    expect(JSON.stringify(prompts(model))).not.toContain("[Context budget");
  });
});

describe("budget_awareness: limit:N", () => {
  // context_window 1024 with limit:50 → the limit is 512 tokens, about 2 KB of serialized prompt.
  const LIMIT_CONFIG = { budget_awareness: "limit:50", context_window: 1024 } as const;

  /** Two earlier turns: a long first one and a short second one. */
  function twoTurnHistory(): ModelMessage[] {
    return [
      { role: "user", content: `Tell me about the Q3 report. ${"detail ".repeat(400)}` },
      { role: "assistant", content: [{ type: "text", text: "The Q3 report says revenue grew 12%." }] },
      { role: "user", content: "And Q4?" },
      { role: "assistant", content: [{ type: "text", text: "Q4 is not out yet." }] },
    ];
  }

  it("below the limit, nothing happens", async () => {
    const history: ModelMessage[] = [
      { role: "user", content: "Hi" },
      { role: "assistant", content: [{ type: "text", text: "Hello" }] },
      { role: "user", content: "How are you?" },
      { role: "assistant", content: [{ type: "text", text: "Fine." }] },
    ];
    const model = scriptedModel(say("Good."));
    const { ports } = await runNewTurn(makeSetup({ model, history, config: LIMIT_CONFIG }), "Great");

    expect(ports.types()).toEqual(["model.requested", "model.delta", "model.completed", "cost.recorded", "turn.completed"]);
    expect(phases(ports)).toEqual(["executor"]);
    expect(ports.replacedHistories).toEqual([]);
    expect(prompts(model)[0]).toHaveLength(5);
    expect(ports.terminal!.payload).toMatchObject({ stop_reason: "final_answer" });
  });

  it("above the limit, summarizes the older turn, keeps the last earlier turn verbatim, and continues", async () => {
    const history = twoTurnHistory();
    const historyBefore = snapshot(history);
    const model = scriptedModel(say("Q3 revenue grew 12%.", usage(300, 8)), say("Q3 grew 12%; Q4 is pending.", usage(60, 9)));
    const setup = makeSetup({ model, history, config: LIMIT_CONFIG });
    const { ports } = await runNewTurn(setup, "Summarize both.");

    expect(ports.types()).toEqual([
      "context.compaction.started",
      "model.requested",
      "model.completed",
      "cost.recorded",
      "context.compaction.completed",
      "model.requested",
      "model.delta",
      "model.completed",
      "cost.recorded",
      "turn.completed",
    ]);
    expect(phases(ports)).toEqual(["compaction", "executor"]);
    expect(ports.ofType("model.requested")[0]!.payload).toEqual({
      model: "openai:gpt-4o",
      phase: "compaction",
      request_hash: expect.any(String),
      reservation: expect.any(Object),
    });

    // The compaction call summarizes the older turn only: not the kept turn, not the current input.
    const compactionPrompt = prompts(model)[0]!;
    expect(systemOf(compactionPrompt)).toMatch(/summar/i);
    expect(compactionPrompt.filter((m) => m.role !== "system")).toHaveLength(1);
    const transcript = textOf(compactionPrompt.find((m) => m.role === "user")!);
    expect(transcript).toContain("Tell me about the Q3 report.");
    expect(transcript).toContain("revenue grew 12%");
    expect(transcript).not.toContain("And Q4?");
    expect(transcript).not.toContain("Summarize both.");
    expect(model.doStreamCalls[0]!.tools).toBeUndefined();
    // Compaction text is not streamed to clients.
    expect(ports.ofType("model.delta").map((e) => e.payload.text)).toEqual(["Q3 grew 12%; Q4 is pending."]);

    // The compacted history: [summary (user), acknowledgement (assistant), ...the last earlier turn].
    expect(ports.replacedHistories).toHaveLength(1);
    const compacted = ports.replacedHistories[0]!;
    expect(compacted).toEqual([
      { role: "user", content: expect.stringContaining("Q3 revenue grew 12%.") },
      { role: "assistant", content: expect.any(String) },
      historyBefore[2],
      historyBefore[3],
    ]);
    expect(history).toEqual(historyBefore); // the caller's array is not mutated

    // Token counts: before is the prompt that did not fit, after the compacted one, which fits.
    const input: ModelMessage = { role: "user", content: "Summarize both." };
    const before = estimateTokens(undefined, [...historyBefore, input]);
    const after = estimateTokens(undefined, [...compacted, input]);
    expect(before).toBeGreaterThan(512);
    expect(after).toBeLessThanOrEqual(512);
    expect(ports.ofType("context.compaction.started")[0]!.payload).toEqual({ before_tokens: before, limit_tokens: 512 });
    expect(ports.ofType("context.compaction.completed")[0]!.payload).toEqual({ before_tokens: before, after_tokens: after });

    // The executor then runs on the compacted history.
    expect(prompts(model)[1]).toEqual([
      userMessage(compacted[0]!.content as string),
      { role: "assistant", content: [{ type: "text", text: compacted[1]!.content as string }] },
      userMessage("And Q4?"),
      { role: "assistant", content: [{ type: "text", text: "Q4 is not out yet." }] },
      userMessage("Summarize both."),
    ]);
    expect(ports.terminal).toEqual({
      type: "turn.completed",
      turn_id: TURN_ID,
      payload: { output: "Q3 grew 12%; Q4 is pending.", stop_reason: "final_answer", usage: tokens(360, 17), cost_usd: expect.any(Number) },
    });
    expect(ports.refused).toEqual([]);
  });

  it("still over the limit after compaction (limit:0): ends with budget_limit and the fixed message, no executor call", async () => {
    const model = scriptedModel(say("Short summary.", usage(300, 3)), say("never requested"));
    const setup = makeSetup({ model, history: twoTurnHistory(), config: { ...LIMIT_CONFIG, budget_awareness: "limit:0" } });
    const { ports } = await runNewTurn(setup, "Go on");

    expect(model.doStreamCalls).toHaveLength(1);
    expect(phases(ports)).toEqual(["compaction"]);
    expect(ports.types()).toEqual([
      "context.compaction.started",
      "model.requested",
      "model.completed",
      "cost.recorded",
      "context.compaction.completed",
      "turn.completed",
    ]);
    expect(ports.terminal).toEqual({
      type: "turn.completed",
      turn_id: TURN_ID,
      payload: { output: BUDGET_LIMIT_MESSAGE, stop_reason: "budget_limit", usage: tokens(300, 3), cost_usd: expect.any(Number) },
    });
    expect(ports.refused).toEqual([]);
  });

  it("a current input too large to fit ends with budget_limit without any model call", async () => {
    const model = scriptedModel(say("never requested"));
    const { ports } = await runNewTurn(makeSetup({ model, config: LIMIT_CONFIG }), "x".repeat(5000));

    expect(model.doStreamCalls).toHaveLength(0);
    expect(ports.types()).toEqual(["turn.completed"]);
    expect(ports.terminal!.payload).toEqual({ output: BUDGET_LIMIT_MESSAGE, stop_reason: "budget_limit", usage: tokens(0, 0), cost_usd: null });
  });

  it("a huge current input with history: compaction runs, the prompt still does not fit, the turn stops", async () => {
    const model = scriptedModel(say("Summary."), say("never requested"));
    const { ports } = await runNewTurn(makeSetup({ model, history: twoTurnHistory(), config: LIMIT_CONFIG }), "y".repeat(5000));

    expect(phases(ports)).toEqual(["compaction"]);
    const completed = ports.ofType("context.compaction.completed")[0]!.payload;
    expect(completed.after_tokens).toBeLessThan(completed.before_tokens as number);
    expect(completed.after_tokens).toBeGreaterThan(512);
    expect(ports.terminal!.payload).toMatchObject({ output: BUDGET_LIMIT_MESSAGE, stop_reason: "budget_limit" });
  });

  it("with planning enabled, a prompt over the limit makes no planner call either", async () => {
    const model = scriptedModel(say("1. Plan."), say("never requested"));
    const { ports } = await runNewTurn(makeSetup({ model, config: { ...LIMIT_CONFIG, planning_enabled: true } }), "x".repeat(5000));

    // The budget stop comes "instead of making another provider call": the planner's call is one.
    expect(model.doStreamCalls).toHaveLength(0);
    expect(ports.types()).toEqual(["turn.completed"]);
    expect(ports.terminal!.payload).toMatchObject({ output: BUDGET_LIMIT_MESSAGE, stop_reason: "budget_limit" });
  });

  it("checks before every model call: a tool result that overflows the budget stops the turn before the next call", async () => {
    const dump = defineTool("dump", async () => "z".repeat(5000));
    const model = scriptedModel(callTools([["call_1", "dump", {}]]), say("never requested"));
    const { ports } = await runNewTurn(makeSetup({ model, tools: [dump], config: LIMIT_CONFIG }));

    expect(model.doStreamCalls).toHaveLength(1);
    expect(ports.types()).toEqual(["model.requested", "model.completed", "cost.recorded", "tool.started", "tool.result", "turn.completed"]);
    expect(ports.terminal!.payload).toMatchObject({ output: BUDGET_LIMIT_MESSAGE, stop_reason: "budget_limit" });
  });
});

describe("injected_tool_args", () => {
  const INJECTED = { ui_request_id: "Opaque UI correlation id", run_origin: "Caller surface, such as playground" };
  const INJECTED_PROPERTIES = {
    ui_request_id: { type: "string", description: "Opaque UI correlation id" },
    run_origin: { type: "string", description: "Caller surface, such as playground" },
  };

  it("adds the injected args as optional string properties to every tool schema the model receives, on a copy", async () => {
    const lookup = defineTool("lookup", async () => "ok", { parameters: STRICT_SCHEMA });
    const bare = defineTool("bare", async () => "ok", { parameters: { type: "object" } });
    const ownSchemas = snapshot([lookup.parameters, bare.parameters]);
    const model = scriptedModel(callTools([["call_1", "bare", {}]]), say("done"));
    await runNewTurn(toolbeltSetup(model, [lookup, bare], { name: "ops", handoffs: ["billing"], injected_tool_args: INJECTED }));

    for (const call of model.doStreamCalls) {
      expect(call.tools).toEqual([
        {
          type: "function",
          name: "lookup",
          description: "The lookup tool",
          // Optional: `required` stays the tool's own.
          inputSchema: { ...STRICT_SCHEMA, properties: { ...STRICT_SCHEMA.properties, ...INJECTED_PROPERTIES } },
        },
        { type: "function", name: "bare", description: "The bare tool", inputSchema: { type: "object", properties: INJECTED_PROPERTIES } },
        {
          type: "function",
          name: "transfer_to_billing",
          description: expect.any(String),
          inputSchema: {
            type: "object",
            properties: { reason: { type: "string", description: expect.any(String) }, ...INJECTED_PROPERTIES },
            additionalProperties: false,
          },
        },
      ]);
    }
    // The tools' own schemas are untouched.
    expect([lookup.parameters, bare.parameters]).toEqual(ownSchemas);
    expect(lookup.parameters.properties).toEqual({ q: { type: "string", description: "The query" } });
  });

  it("splits the injected values off: the tool never gets them; tool.started and tool.result metadata record them", async () => {
    const received: Record<string, unknown>[] = [];
    const lookup = defineTool(
      "lookup",
      async (args) => {
        received.push(args);
        return `result for ${String(args.q)}`;
      },
      { parameters: STRICT_SCHEMA },
    );
    const model = scriptedModel(
      callTools([
        ["call_1", "lookup", { q: "invoices", ui_request_id: "req-7", run_origin: "playground" }],
        ["call_2", "lookup", { q: "refunds" }],
      ]),
      say("done"),
    );
    const { ports } = await runNewTurn(makeSetup({ model, tools: [lookup], config: { injected_tool_args: INJECTED } }));

    expect(received).toEqual([{ q: "invoices" }, { q: "refunds" }]);
    expect(payloadOf(ports, "tool.started", "call_1")).toEqual({
      name: "lookup",
      args: { q: "invoices" },
      injected_args: { ui_request_id: "req-7", run_origin: "playground" },
    });
    expect(payloadOf(ports, "tool.result", "call_1")).toMatchObject({
      output: "result for invoices",
      is_error: false,
      metadata: { status: "success", injected_args: { ui_request_id: "req-7", run_origin: "playground" } },
    });
    expect(payloadOf(ports, "tool.started", "call_2")).toEqual({ name: "lookup", args: { q: "refunds" }, injected_args: {} });
    expect(payloadOf(ports, "tool.result", "call_2")).toMatchObject({ is_error: false, metadata: { injected_args: {} } });
  });

  it("still validates the real args against the tool's own schema: an invalid one is an error result and the tool does not run", async () => {
    const { tool: lookup, runs } = countingTool("lookup", () => "ran", { parameters: STRICT_SCHEMA });
    const model = scriptedModel(
      callTools([
        ["call_type", "lookup", { q: 5, ui_request_id: "req-1" }],
        ["call_missing", "lookup", { ui_request_id: "req-2" }],
        ["call_extra", "lookup", { q: "x", surprise: true }],
      ]),
      say("I could not look it up."),
    );
    const { ports } = await runNewTurn(makeSetup({ model, tools: [lookup], config: { injected_tool_args: INJECTED } }));

    expect(runs()).toBe(0);
    for (const [id, injected] of [
      ["call_type", { ui_request_id: "req-1" }],
      ["call_missing", { ui_request_id: "req-2" }],
      ["call_extra", {}],
    ] as const) {
      const result = payloadOf(ports, "tool.result", id);
      expect(result, id).toMatchObject({ name: "lookup", is_error: true, metadata: { status: "error", injected_args: injected } });
      expect(String(result.output), id).toMatch(/^Invalid arguments for "lookup"/);
    }
    expect(String(payloadOf(ports, "tool.result", "call_missing").output)).toContain("q");
    expect(prompts(model)[1]!.at(-1)).toMatchObject({
      role: "tool",
      content: [{ output: { type: "error-text" } }, { output: { type: "error-text" } }, { output: { type: "error-text" } }],
    });
    expect(ports.terminal).toMatchObject({ type: "turn.completed", payload: { stop_reason: "final_answer" } });
  });
});

describe("live message injection (the session's inbox)", () => {
  it("takes messages pushed while a tool runs after the tool results, before the next model call, in FIFO order", async () => {
    const ports = new MemoryPorts();
    const state = newTurnState(TURN_ID, "Search for Python tutorials", ports.now());
    const search = defineTool("search", async () => {
      ports.inject("Also check the official docs", "msg_1");
      ports.inject("And keep it short", "msg_2");
      return "3 tutorials";
    });
    const model = scriptedModel(callTools([["call_1", "search", { query: "python" }]]), say("Here they are, briefly."));
    await runTurn(state, makeSetup({ model, tools: [search] }), ports);

    expect(ports.types()).toEqual([
      "model.requested",
      "model.completed",
      "cost.recorded",
      "tool.started",
      "tool.result",
      "message.injected",
      "message.injected",
      "model.requested",
      "model.delta",
      "model.completed",
      "cost.recorded",
      "turn.completed",
    ]);
    expect(ports.ofType("message.injected")).toEqual([
      { type: "message.injected", turn_id: TURN_ID, payload: { message_id: "msg_1", content: "Also check the official docs" } },
      { type: "message.injected", turn_id: TURN_ID, payload: { message_id: "msg_2", content: "And keep it short" } },
    ]);
    expect(prompts(model)[1]).toEqual([
      userMessage("Search for Python tutorials"),
      { role: "assistant", content: [{ type: "tool-call", toolCallId: "call_1", toolName: "search", input: { query: "python" } }] },
      { role: "tool", content: [{ type: "tool-result", toolCallId: "call_1", toolName: "search", output: { type: "text", value: "3 tutorials" } }] },
      userMessage("Also check the official docs"),
      userMessage("And keep it short"),
    ]);
    // The injected messages are part of the turn's conversation, and the inbox was drained durably.
    expect(ports.finalState!.messages.slice(3, 5)).toEqual([
      { role: "user", content: "Also check the official docs" },
      { role: "user", content: "And keep it short" },
    ]);
    // The checkpoint that holds them records how far the inbox was taken, so a restart takes none twice.
    const withInjected = ports.checkpoints.find((c) => ports.types()[c.afterEvents - 1] === "message.injected");
    expect(withInjected?.state.messages_taken).toBe(2);
    expect(withInjected?.state.messages.slice(3)).toEqual([
      { role: "user", content: "Also check the official docs" },
      { role: "user", content: "And keep it short" },
    ]);
    expect(ports.terminal!.payload).toMatchObject({ output: "Here they are, briefly.", stop_reason: "final_answer" });
  });

  it("a message that arrives after the model's final answer, before the turn finishes, makes the model go on", async () => {
    const ports = new MemoryPorts();
    const state = newTurnState(TURN_ID, "Draft a greeting", ports.now());
    let pushed = false;
    ports.onEvent = (event) => {
      if (event.type === "model.completed" && !pushed) {
        pushed = true;
        ports.inject("Make it formal", "msg_late");
      }
    };
    const model = scriptedModel(say("Hi there!"), say("Good day to you."));
    await runTurn(state, makeSetup({ model }), ports);

    expect(model.doStreamCalls).toHaveLength(2);
    expect(ports.types()).toEqual([
      "model.requested",
      "model.delta",
      "model.completed",
      "cost.recorded",
      "message.injected",
      "model.requested",
      "model.delta",
      "model.completed",
      "cost.recorded",
      "turn.completed",
    ]);
    expect(prompts(model)[1]).toEqual([
      userMessage("Draft a greeting"),
      { role: "assistant", content: [{ type: "text", text: "Hi there!" }] },
      userMessage("Make it formal"),
    ]);
    expect(ports.terminal!.payload).toMatchObject({ output: "Good day to you.", stop_reason: "final_answer" });
  });
});

describe("handoffs", () => {
  function billingSetup(model: LanguageModelV3, refund: ToolDefinition): TurnSetup {
    return toolbeltSetup(model, [refund], {
      name: "billing",
      model: "anthropic:claude-sonnet-4",
      instructions: "You are the billing agent.",
      tools: ["refund"],
    });
  }

  it("exposes transfer_to_<agent>; calling it hands the turn to that agent's model, instructions and tools", async () => {
    const refund = defineTool("refund", async () => "refunded");
    const frontModel = scriptedModel(callTools([["call_h", "transfer_to_billing", { reason: "invoice question" }]]), say("never requested"));
    const billingModel = scriptedModel(say("Billing here: your invoice is paid."));
    const ports = new MemoryPorts();
    ports.handoffTargets.set("billing", billingSetup(billingModel, refund));
    const handoff = vi.spyOn(ports, "handoff");
    const front = toolbeltSetup(frontModel, [], { name: "front", instructions: "You are the front desk.", handoffs: ["billing"] });

    expect([...front.tools.keys()]).toEqual(["transfer_to_billing"]);
    await runNewTurn(front, "Is my invoice paid?", ports);

    expect(frontModel.doStreamCalls).toHaveLength(1);
    expect(frontModel.doStreamCalls[0]!.tools!.map((t) => t.name)).toEqual(["transfer_to_billing"]);
    expect(handoff.mock.calls).toEqual([["billing", "invoice question"]]);
    expect(payloadOf(ports, "tool.result", "call_h")).toMatchObject({
      name: "transfer_to_billing",
      output: 'The conversation now continues with agent "billing".',
      is_error: false,
      metadata: { status: "success" },
    });

    // The next call is the billing agent's: its model, its instructions, its tools, the conversation so far.
    expect(billingModel.doStreamCalls).toHaveLength(1);
    expect(billingModel.doStreamCalls[0]!.tools!.map((t) => t.name)).toEqual(["refund"]);
    // An Anthropic model: the system prompt and the last message carry cache breakpoints (prompt-cache.ts).
    const breakpoint = { anthropic: { cacheControl: { type: "ephemeral" } } };
    expect(prompts(billingModel)[0]).toEqual([
      { role: "system", content: "You are the billing agent.", providerOptions: breakpoint },
      userMessage("Is my invoice paid?"),
      {
        role: "assistant",
        content: [{ type: "tool-call", toolCallId: "call_h", toolName: "transfer_to_billing", input: { reason: "invoice question" } }],
      },
      {
        role: "tool",
        content: [
          {
            type: "tool-result",
            toolCallId: "call_h",
            toolName: "transfer_to_billing",
            output: { type: "text", value: 'The conversation now continues with agent "billing".' },
          },
        ],
        providerOptions: breakpoint,
      },
    ]);
    expect(ports.ofType("model.requested").map((e) => e.payload)).toEqual([
      { model: "openai:gpt-4o", phase: "executor", step: 1, request_hash: expect.any(String), reservation: expect.any(Object) },
      { model: "anthropic:claude-sonnet-4", phase: "executor", step: 2, request_hash: expect.any(String), reservation: expect.any(Object) },
    ]);
    expect(ports.types()).toEqual([
      "model.requested",
      "model.completed",
      "cost.recorded",
      "tool.started",
      "run.status",
      "tool.result",
      "model.requested",
      "model.delta",
      "model.completed",
      "cost.recorded",
      "turn.completed",
    ]);
    expect(ports.terminal!.payload).toMatchObject({ output: "Billing here: your invoice is paid.", stop_reason: "final_answer" });
    expect(ports.refused).toEqual([]);
  });

  it("a call the original agent asked for in the same step still runs with the original agent's tools after the handoff", async () => {
    const noted: string[] = [];
    const note = defineTool(
      "note",
      async (args) => {
        noted.push(String(args.text));
        return "noted";
      },
      { parallel_safe: false },
    );
    const frontModel = scriptedModel(
      callTools([
        ["call_h", "transfer_to_billing", {}],
        ["call_n", "note", { text: "customer asked about an invoice" }],
      ]),
    );
    const ports = new MemoryPorts();
    ports.handoffTargets.set(
      "billing",
      billingSetup(
        scriptedModel(say("Billing here.")),
        defineTool("refund", async () => "refunded"),
      ),
    );
    await runNewTurn(toolbeltSetup(frontModel, [note], { name: "front", tools: ["note"], handoffs: ["billing"] }), "Invoice?", ports);

    expect(noted).toEqual(["customer asked about an invoice"]);
    expect(payloadOf(ports, "tool.result", "call_n")).toMatchObject({ output: "noted", is_error: false });
  });

  it("resuming after a handoff to a planning agent does not start a planner pass mid-turn", async () => {
    const billing = (model: LanguageModelV3) =>
      toolbeltSetup(model, [], { name: "billing", model: "anthropic:claude-sonnet-4", instructions: "Billing.", planning_enabled: true });
    const ports = new MemoryPorts();
    ports.handoffTargets.set("billing", billing(scriptedModel(say("Billing here."))));
    const front = toolbeltSetup(scriptedModel(callTools([["call_h", "transfer_to_billing", {}]])), [], { name: "front", handoffs: ["billing"] });
    await runNewTurn(front, "Invoice?", ports);
    // Uninterrupted, the turn makes no planner call: planning happens at the start of a turn only.
    expect(phases(ports)).toEqual(["executor", "executor"]);

    // After a restart the session's agent is billing; resume from the checkpoint written with the handoff's
    // result (every call of step 1 done, the next call not yet requested).
    const afterResults = ports.checkpoints.find((c) => ports.types()[c.afterEvents - 1] === "tool.result")!;
    expect(afterResults.state).toMatchObject({ step: 1, calls: [{ tool_call_id: "call_h", status: "done" }] });
    const model = scriptedModel(say("Billing here."), say("unused"));
    const resumed = new MemoryPorts();
    await runTurn(snapshot(afterResults.state), billing(model), resumed);

    expect(phases(resumed)).toEqual(["executor"]);
    expect(model.doStreamCalls).toHaveLength(1);
    expect(resumed.terminal).toEqual(ports.terminal);
  });

  it("an unknown target gives an error result and the turn continues with the original agent", async () => {
    const frontModel = scriptedModel(callTools([["call_h", "transfer_to_billing", {}]]), say("I will help you myself."));
    const ports = new MemoryPorts(); // no handoff targets registered
    const handoff = vi.spyOn(ports, "handoff");
    const front = toolbeltSetup(frontModel, [], { name: "front", instructions: "You are the front desk.", handoffs: ["billing"] });
    await runNewTurn(front, "Is my invoice paid?", ports);

    expect(handoff.mock.calls).toEqual([["billing", undefined]]);
    const result = payloadOf(ports, "tool.result", "call_h");
    expect(result).toMatchObject({ name: "transfer_to_billing", is_error: true, metadata: { status: "error" } });
    expect(String(result.output)).toContain("billing");
    expect(ports.ofType("run.status")).toEqual([]);

    expect(frontModel.doStreamCalls).toHaveLength(2);
    expect(systemOf(prompts(frontModel)[1]!)).toBe("You are the front desk.");
    expect(frontModel.doStreamCalls[1]!.tools!.map((t) => t.name)).toEqual(["transfer_to_billing"]);
    expect(prompts(frontModel)[1]!.at(-1)).toMatchObject({ role: "tool", content: [{ toolCallId: "call_h", output: { type: "error-text" } }] });
    expect(ports.ofType("model.requested").map((e) => e.payload.model)).toEqual(["openai:gpt-4o", "openai:gpt-4o"]);
    expect(ports.terminal!.payload).toMatchObject({ output: "I will help you myself.", stop_reason: "final_answer" });
  });
});

describe("output_schema", () => {
  const SCHEMA = {
    type: "object",
    properties: { city: { type: "string" }, temp_c: { type: "number" } },
    required: ["city", "temp_c"],
    additionalProperties: false,
  };
  const withSchema = (model: ReturnType<typeof scriptedModel>) => makeSetup({ model, config: { output_schema: SCHEMA } });

  it("completes with the parsed object for a valid JSON answer, asking the model for JSON with the schema", async () => {
    const model = scriptedModel(say('{"city":"Paris","temp_c":21}'));
    const { ports } = await runNewTurn(withSchema(model), "Weather in Paris?");

    expect(model.doStreamCalls[0]!.responseFormat).toMatchObject({ type: "json", schema: SCHEMA });
    expect(systemOf(prompts(model)[0]!)).toContain(JSON.stringify(SCHEMA));
    expect(ports.terminal).toEqual({
      type: "turn.completed",
      turn_id: TURN_ID,
      payload: { output: { city: "Paris", temp_c: 21 }, stop_reason: "final_answer", usage: tokens(10, 5), cost_usd: expect.any(Number) },
    });
    expect(ports.ofType("runtime.warning")).toEqual([]);
  });

  it.each([
    ["a ```json fence", '```json\n{"city":"Paris","temp_c":21}\n```'],
    ["a bare ``` fence", '```\n{"city":"Paris","temp_c":21}\n```'],
    ["surrounding whitespace", '  \n{"city":"Paris","temp_c":21}\n '],
  ])("accepts an answer in %s", async (_, answer) => {
    const model = scriptedModel(say(answer));
    const { ports } = await runNewTurn(withSchema(model));
    expect(model.doStreamCalls).toHaveLength(1);
    expect(ports.terminal!.payload).toMatchObject({ output: { city: "Paris", temp_c: 21 }, stop_reason: "final_answer" });
  });

  it("answers an invalid answer with a correction message and a runtime.warning; a valid retry completes", async () => {
    const model = scriptedModel(say('{"city":"Paris"}'), say('{"city":"Paris","temp_c":21}'));
    const { ports } = await runNewTurn(withSchema(model), "Weather in Paris?");

    expect(model.doStreamCalls).toHaveLength(2);
    for (const call of model.doStreamCalls) expect(call.responseFormat).toMatchObject({ type: "json", schema: SCHEMA });
    const warnings = ports.ofType("runtime.warning");
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatchObject({ turn_id: TURN_ID, payload: { attempt: 1, errors: [expect.stringContaining("temp_c")] } });
    expect(ports.types().indexOf("runtime.warning")).toBeLessThan(ports.types().lastIndexOf("model.requested"));

    const retryPrompt = prompts(model)[1]!;
    expect(retryPrompt.slice(1)).toEqual([
      userMessage("Weather in Paris?"),
      { role: "assistant", content: [{ type: "text", text: '{"city":"Paris"}' }] },
      { role: "user", content: [{ type: "text", text: expect.stringContaining("temp_c") }] },
    ]);
    expect(retryPrompt[0]).toMatchObject({ role: "system" });
    expect(ports.terminal!.payload).toMatchObject({ output: { city: "Paris", temp_c: 21 }, stop_reason: "final_answer" });
  });

  it("fails the turn with output_invalid after three invalid answers", async () => {
    const model = scriptedModel(say("It is sunny."), say('{"city":1,"temp_c":"warm"}'), say('{"city":"Paris"}'), say('{"city":"Paris","temp_c":21}'));
    const { ports } = await runNewTurn(withSchema(model));

    expect(model.doStreamCalls).toHaveLength(3);
    expect(ports.ofType("runtime.warning").map((e) => e.payload.attempt)).toEqual([1, 2]);
    expect(ports.ofType("runtime.warning")[0]!.payload.errors).toEqual(["the answer is not valid JSON"]);
    expect(ports.ofType("turn.completed")).toEqual([]);
    expect(ports.terminal).toEqual({
      type: "turn.failed",
      turn_id: TURN_ID,
      payload: { error: { code: "output_invalid", message: expect.stringContaining("temp_c") }, usage: expect.any(Object), cost_usd: expect.any(Number) },
    });
    expect(ports.refused).toEqual([]);
  });
});

describe("token estimate", () => {
  it("is a quarter of the serialized prompt's length, whatever the number of messages, and stays so on repeated calls", () => {
    const messages: ModelMessage[] = [
      { role: "user", content: 'What is 2 + 2? "quoted" and ünïcode' },
      { role: "assistant", content: [{ type: "tool-call", toolCallId: "c1", toolName: "calculator", input: { expression: "2+2" } }] },
      { role: "tool", content: [{ type: "tool-result", toolCallId: "c1", toolName: "calculator", output: { type: "json", value: 4 } }] },
      { role: "assistant", content: "4" },
    ];
    const expected = (system: string | undefined, ms: ModelMessage[]) => Math.ceil(((system?.length ?? 0) + JSON.stringify(ms).length) / 4);
    for (const n of [0, 1, 2, 4]) {
      const ms = messages.slice(0, n);
      expect(estimateTokens(undefined, ms)).toBe(expected(undefined, ms));
      expect(estimateTokens("Be brief.", ms)).toBe(expected("Be brief.", ms));
      expect(estimateTokens("Be brief.", ms)).toBe(expected("Be brief.", ms));
    }
  });
});
