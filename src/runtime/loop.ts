// The agent loop as a resumable state machine. Given a TurnState (new, or loaded after a restart) it
// continues: call the model one step at a time, run the requested tools itself, feed results back, and
// stop on a text-only answer or max_steps. Every transition goes through the ports, which make it durable.
import { jsonSchema, streamText, type LanguageModel, type ModelMessage, type ToolSet } from "ai";
import type { AgentConfig } from "./config";
import type { EventDraft } from "./events";
import { type ToolCallRecord, type TurnState, toolResultPart } from "./turn-state";
import type { ToolContext, ToolDefinition } from "./tools/types";

/** At most this many tool calls of one step run at once. */
export const MAX_PARALLEL_TOOL_CALLS = 8;

export interface TurnSetup {
  config: AgentConfig;
  model: LanguageModel;
  tools: Map<string, ToolDefinition>;
  /** Earlier turns of the thread, as model messages. */
  history: ModelMessage[];
}

export interface TurnPorts {
  /** Appends events durably; with a state, checkpoints it in the same transaction. Throws if the turn was taken away (interrupted). */
  emit(events: EventDraft[], state?: TurnState): void;
  /** Appends the terminal event, moves the turn's messages to the history and clears the checkpoint, atomically. */
  finish(event: EventDraft, state: TurnState): void;
  now(): number;
  newId(prefix: string): string;
  signal: AbortSignal;
  tool: Pick<ToolContext, "session_id" | "fetch" | "urlAllowlist">;
}

class ModelCallError extends Error {}

export async function runTurn(state: TurnState, setup: TurnSetup, ports: TurnPorts): Promise<void> {
  const turn_id = state.turn_id;
  try {
    const sdkTools = toSdkTools(setup.tools);
    for (;;) {
      const move = nextMove(state, setup.config.max_steps);
      if (move === "final_answer" || move === "max_steps") return finishCompleted(state, move, ports);
      if (move === "tools") {
        await runToolCalls(state, setup, ports);
      } else {
        await modelStep(state, setup, sdkTools, ports);
        // An empty reply adds no assistant message, so decide here rather than from the messages.
        if (!state.calls) return finishCompleted(state, "final_answer", ports);
      }
    }
  } catch (err) {
    if (ports.signal.aborted) throw err; // interrupted: whoever aborted records the outcome
    const message = errorMessage(err);
    if (err instanceof ModelCallError) {
      ports.finish({ type: "turn.failed", turn_id, payload: { error: { code: "model_error", message } } }, state);
    } else {
      ports.emit([{ type: "runtime.error", turn_id, payload: { message, where: "loop" } }]);
      ports.finish({ type: "turn.failed", turn_id, payload: { error: { code: "internal_error", message } } }, state);
    }
  }
}

/** What a (possibly just restored) state calls for next. */
function nextMove(state: TurnState, maxSteps: number): "final_answer" | "max_steps" | "tools" | "model" {
  if (!state.calls && state.messages.at(-1)?.role === "assistant") return "final_answer";
  // At the limit, calls the model asked for are left unrun (finalMessages answers them).
  if (state.step >= maxSteps) return "max_steps";
  return state.calls ? "tools" : "model";
}

function finishCompleted(state: TurnState, stop_reason: "final_answer" | "max_steps", ports: TurnPorts) {
  ports.finish(
    { type: "turn.completed", turn_id: state.turn_id, payload: { output: state.output, stop_reason, usage: state.usage } },
    state,
  );
}

function toSdkTools(tools: Map<string, ToolDefinition>): ToolSet {
  // Schemas only, no `execute`: the runtime dispatches calls itself.
  const set: ToolSet = {};
  for (const t of tools.values()) set[t.name] = { description: t.description, inputSchema: jsonSchema(t.parameters) };
  return set;
}

async function modelStep(state: TurnState, setup: TurnSetup, tools: ToolSet, ports: TurnPorts): Promise<void> {
  const { turn_id } = state;
  const step_id = ports.newId("stp");
  state.step_id = step_id;
  ports.emit([
    { type: "model.requested", turn_id, step_id, payload: { model: setup.config.model, phase: "executor", step: state.step + 1 } },
  ]);
  let text = "";
  const calls: ToolCallRecord[] = [];
  let usage = { input_tokens: 0, output_tokens: 0, total_tokens: 0 };
  let finish_reason = "unknown";
  try {
    const result = streamText({
      model: setup.model,
      system: setup.config.instructions || undefined,
      messages: [...setup.history, ...state.messages],
      tools,
      temperature: setup.config.temperature,
      maxOutputTokens: setup.config.max_tokens ?? undefined,
      abortSignal: ports.signal,
      onError: () => {}, // errors arrive as stream parts below
    });
    for await (const part of result.fullStream) {
      switch (part.type) {
        case "text-delta":
          if (!part.text) break;
          text += part.text;
          ports.emit([{ type: "model.delta", turn_id, step_id, payload: { text: part.text } }]);
          break;
        case "tool-call":
          calls.push({
            tool_call_id: part.toolCallId,
            name: part.toolName,
            args: part.input ?? {},
            status: "pending",
            ...("invalid" in part && part.invalid ? { invalid: errorMessage(part.error) } : {}),
          });
          break;
        case "finish":
          finish_reason = part.finishReason;
          usage = {
            input_tokens: part.totalUsage.inputTokens ?? 0,
            output_tokens: part.totalUsage.outputTokens ?? 0,
            total_tokens: part.totalUsage.totalTokens ?? (part.totalUsage.inputTokens ?? 0) + (part.totalUsage.outputTokens ?? 0),
          };
          break;
        case "error":
          throw new ModelCallError(errorMessage(part.error));
        case "abort":
          throw ports.signal.reason ?? new Error("aborted");
      }
    }
  } catch (err) {
    if (ports.signal.aborted) throw err;
    const error = err instanceof ModelCallError ? err : new ModelCallError(errorMessage(err));
    ports.emit([
      { type: "model.completed", turn_id, step_id, payload: { usage, finish_reason: "error", error: { message: error.message } } },
    ]);
    throw error;
  }
  state.step += 1;
  state.output = text;
  state.usage = {
    input_tokens: state.usage.input_tokens + usage.input_tokens,
    output_tokens: state.usage.output_tokens + usage.output_tokens,
    total_tokens: state.usage.total_tokens + usage.total_tokens,
  };
  const content = [
    ...(text ? [{ type: "text" as const, text }] : []),
    ...calls.map((c) => ({ type: "tool-call" as const, toolCallId: c.tool_call_id, toolName: c.name, input: c.args })),
  ];
  if (content.length > 0) state.messages.push({ role: "assistant", content });
  state.calls = calls.length > 0 ? calls : null;
  ports.emit([{ type: "model.completed", turn_id, step_id, payload: { usage, finish_reason } }], state);
}

async function runToolCalls(state: TurnState, setup: TurnSetup, ports: TurnPorts): Promise<void> {
  const calls = state.calls!;
  // A call already "started" here began before a restart and has no result: re-run only what is idempotent.
  const lost = new Set(calls.filter((c) => c.status === "started" && !setup.tools.get(c.name)?.idempotent));
  const todo = calls.filter((c) => c.status !== "done");
  const parallel = todo.filter((c) => !lost.has(c) && (setup.tools.get(c.name)?.parallel_safe ?? true));
  const serial = todo.filter((c) => !parallel.includes(c));
  await runPool(parallel, MAX_PARALLEL_TOOL_CALLS, (c) => runToolCall(c, state, setup, ports, lost.has(c)));
  for (const c of serial) await runToolCall(c, state, setup, ports, lost.has(c));
  state.messages.push({ role: "tool", content: calls.map(toolResultPart) });
  state.calls = null;
  ports.emit([], state);
}

async function runToolCall(call: ToolCallRecord, state: TurnState, setup: TurnSetup, ports: TurnPorts, lost: boolean) {
  const { turn_id } = state;
  const ids = { turn_id, step_id: state.step_id ?? undefined, tool_call_id: call.tool_call_id };
  const tool = setup.tools.get(call.name);
  let output: unknown;
  let is_error = true;
  if (lost) {
    output = { error: "The runtime restarted while this tool was running; its outcome is unknown.", category: "lost" };
  } else {
    call.status = "started";
    call.started_at = ports.now();
    ports.emit([{ type: "tool.started", ...ids, payload: { name: call.name, args: call.args, injected_args: {} } }], state);
    if (call.invalid) output = `Invalid tool call: ${call.invalid}`;
    else if (!tool) output = `Unknown tool "${call.name}"`;
    else {
      try {
        const args = call.args && typeof call.args === "object" ? (call.args as Record<string, unknown>) : {};
        output = await tool.execute(args, { ...ports.tool, turn_id, tool_call_id: call.tool_call_id, signal: ports.signal, now: ports.now });
        is_error = false;
      } catch (err) {
        if (ports.signal.aborted) throw err;
        output = errorMessage(err);
      }
    }
  }
  const started_at = call.started_at ?? ports.now();
  const completed_at = ports.now();
  output ??= null; // a tool that returns nothing still has an `output` field on the wire
  call.status = "done";
  call.result = { output, is_error };
  const metadata = {
    status: is_error ? "error" : "success",
    started_at,
    completed_at,
    execution_time_ms: completed_at - started_at,
    approval_status: "not_required",
    approval_id: null,
    injected_args: {},
    offloaded_artifact_id: null,
  };
  ports.emit([{ type: "tool.result", ...ids, payload: { name: call.name, output, is_error, metadata } }], state);
}

async function runPool<T>(items: T[], limit: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await fn(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}

export function errorMessage(err: unknown): string {
  if (err instanceof Error) return err.message || err.name;
  if (typeof err === "string") return err;
  try {
    return JSON.stringify(err);
  } catch {
    return String(err);
  }
}
