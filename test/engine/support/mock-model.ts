// Helpers for driving the engine (src/engine/loop.ts) directly: the AI SDK's mock model plays a script of
// streamed replies and records what every call received; tools and setups are built in memory.
import type {
  LanguageModelV3,
  LanguageModelV3CallOptions,
  LanguageModelV3FinishReason,
  LanguageModelV3Prompt,
  LanguageModelV3StreamPart,
  LanguageModelV3StreamResult,
  LanguageModelV3Usage,
} from "@ai-sdk/provider";
import { type ModelMessage, simulateReadableStream } from "ai";
import { MockLanguageModelV3 } from "ai/test";
import { runTurn, type TurnSetup } from "../../../src/engine/loop";
import type { ToolDefinition } from "../../../src/engine/tools/types";
import { newTurnState } from "../../../src/engine/turn-state";
import { type AgentConfigInput, AgentConfigSchema } from "../../../src/protocol/agent-config";
import type { EventDraft } from "../../../src/protocol/events";
import { MemoryPorts } from "./memory-ports";

// ---------------------------------------------------------------------------------------------------
// Scripted model

export type Reply = LanguageModelV3StreamPart[] | ((options: LanguageModelV3CallOptions) => LanguageModelV3StreamResult | Promise<LanguageModelV3StreamResult>);

/** A mock model that answers its n-th call with the n-th reply; every call's options stay in doStreamCalls. */
export function scriptedModel(...replies: Reply[]): MockLanguageModelV3 {
  const model: MockLanguageModelV3 = new MockLanguageModelV3({
    doStream: async (options) => {
      const n = model.doStreamCalls.length; // already includes this call
      const reply = replies[n - 1];
      if (!reply) throw new Error(`unscripted model call #${n}`);
      if (typeof reply === "function") return reply(options);
      return { stream: simulateReadableStream({ chunks: reply, initialDelayInMs: null, chunkDelayInMs: null }) };
    },
  });
  return model;
}

/** What a responding model answers a call with: stream parts, or a whole stream result (e.g. one that stalls). */
export type ModelResponse = LanguageModelV3StreamPart[] | LanguageModelV3StreamResult;

/**
 * A mock model whose reply is a function of the call's options (its prompt, offered tools, abort signal)
 * instead of the call order, so callers that share it concurrently (parallel sub-agents) get the same
 * answers whatever order their calls arrive in. A throw (or rejection) is a failing provider call.
 */
export function respondingModel(respond: (options: LanguageModelV3CallOptions) => ModelResponse | Promise<ModelResponse>): MockLanguageModelV3 {
  return new MockLanguageModelV3({
    doStream: async (options) => {
      const response = await respond(options);
      if (!Array.isArray(response)) return response;
      return { stream: simulateReadableStream({ chunks: response, initialDelayInMs: null, chunkDelayInMs: null }) };
    },
  });
}

export function prompts(model: MockLanguageModelV3): LanguageModelV3Prompt[] {
  return model.doStreamCalls.map((call) => call.prompt);
}

export function usage(input: number, output: number): LanguageModelV3Usage {
  return {
    inputTokens: { total: input, noCache: input, cacheRead: undefined, cacheWrite: undefined },
    outputTokens: { total: output, text: output, reasoning: undefined },
  };
}

export function finishPart(unified: LanguageModelV3FinishReason["unified"], tokens: LanguageModelV3Usage): LanguageModelV3StreamPart {
  return { type: "finish", finishReason: { unified, raw: unified }, usage: tokens };
}

export function textParts(deltas: string[], id = "txt_1"): LanguageModelV3StreamPart[] {
  return [{ type: "text-start", id }, ...deltas.map((delta): LanguageModelV3StreamPart => ({ type: "text-delta", id, delta })), { type: "text-end", id }];
}

export type CallSpec = [toolCallId: string, toolName: string, args: unknown];

export function toolCallPart([toolCallId, toolName, args]: CallSpec): LanguageModelV3StreamPart {
  return { type: "tool-call", toolCallId, toolName, input: JSON.stringify(args) };
}

/** A text-only reply. */
export function say(text: string | string[], tokens = usage(10, 5)): LanguageModelV3StreamPart[] {
  return [...textParts(typeof text === "string" ? [text] : text), finishPart("stop", tokens)];
}

/** A reply that requests tool calls, in this order. */
export function callTools(calls: CallSpec[], tokens = usage(10, 5)): LanguageModelV3StreamPart[] {
  return [...calls.map(toolCallPart), finishPart("tool-calls", tokens)];
}

// ---------------------------------------------------------------------------------------------------
// Tools, setup, running

export const OPEN_SCHEMA = { type: "object", properties: {}, additionalProperties: true };

export function defineTool(
  name: string,
  execute: ToolDefinition["execute"],
  overrides: Partial<Omit<ToolDefinition, "name" | "execute">> = {},
): ToolDefinition {
  return {
    name,
    description: `The ${name} tool`,
    parameters: OPEN_SCHEMA,
    permission_class: "safe",
    parallel_safe: true,
    idempotent: true,
    execute,
    ...overrides,
  };
}

/** A tool that answers `answer(n)` on its nth run and counts its runs, for tests that a call never ran. */
export function countingTool(
  name: string,
  answer: (run: number) => unknown,
  overrides: Partial<Omit<ToolDefinition, "name" | "execute">> = {},
): { tool: ToolDefinition; runs(): number } {
  let runs = 0;
  return { tool: defineTool(name, async () => answer(++runs), overrides), runs: () => runs };
}

export interface SetupOptions {
  model: MockLanguageModelV3;
  tools?: ToolDefinition[];
  config?: Partial<AgentConfigInput>;
  history?: ModelMessage[];
  /** Resolves other model strings (planning_model); by default every string resolves to `model`. */
  resolveModel?: (spec: string) => LanguageModelV3;
}

export function makeSetup({ model, tools = [], config = {}, history = [], resolveModel = () => model }: SetupOptions): TurnSetup {
  return {
    config: AgentConfigSchema.parse({ name: "loop-test", model: "openai:gpt-4o", tools: tools.map((t) => t.name), ...config }),
    model,
    tools: new Map(tools.map((t) => [t.name, t])),
    history,
    resolveModel,
  };
}

export const TURN_ID = "trn_test";

export async function runNewTurn(setup: TurnSetup, input = "hello", ports = new MemoryPorts()) {
  await runTurn(newTurnState(TURN_ID, input, ports.now()), setup, ports);
  return { ports };
}

export function tokens(input_tokens: number, output_tokens: number) {
  return { input_tokens, output_tokens, total_tokens: input_tokens + output_tokens };
}

export function payloadOf(ports: MemoryPorts, type: EventDraft["type"], tool_call_id: string): Record<string, unknown> {
  const event = ports.events.find((e) => e.type === type && e.tool_call_id === tool_call_id);
  if (!event) throw new Error(`no ${type} event for ${tool_call_id}`);
  return event.payload;
}
