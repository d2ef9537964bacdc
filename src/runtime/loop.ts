// The agent loop as a resumable state machine. Given a TurnState (new, or loaded after a restart) it
// continues: an optional planner pass, then model calls one step at a time, the requested tools run by
// the runtime itself, results fed back, until an accepted final answer, max_steps or the context budget.
// Every transition goes through the ports, which make it durable.
import { jsonSchema, streamText, ToolChoiceViolationError, type LanguageModel, type ModelMessage, type ToolSet } from "ai";
import { type AgentConfig, BUDGET_CAPS } from "./config";
import {
  advisory,
  BUDGET_LIMIT_MESSAGE,
  budgetMode,
  contextWindow,
  estimateTokens,
  splitForCompaction,
  summaryMessages,
  withAdvisories,
} from "./context-budget";
import type { EventDraft } from "./events";
import { schemaErrors } from "./json-schema";
import { correctionMessage, MAX_OUTPUT_RETRIES, outputInstructions, parseFinalAnswer, structuredOutput } from "./structured-output";
import { splitInjectedArgs, withInjectedArgs } from "./tools/injected-args";
import type { ToolContext, ToolDefinition } from "./tools/types";
import { resultMetadata, type ToolCallRecord, type TurnState, type Usage, toolResultPart } from "./turn-state";

/** At most this many tool calls of one step run at once. */
export const MAX_PARALLEL_TOOL_CALLS = 8;

const PLANNER_DIRECTIVE =
  "You are the planning phase. Write a short numbered plan for the task: the steps, and which tools to use for each. Do not carry out the plan and do not answer the task yet.";
const COMPACTION_DIRECTIVE =
  "Summarize the conversation below for the assistant's memory. Keep every fact, name, number, decision and open question; drop pleasantries. Reply with the summary only.";

export interface TurnSetup {
  config: AgentConfig;
  /** The executor's model (config.model). */
  model: LanguageModel;
  tools: Map<string, ToolDefinition>;
  /** Earlier turns of the thread, as model messages. */
  history: ModelMessage[];
  /** Resolves other model strings (planning_model). */
  resolveModel(spec: string): LanguageModel;
}

export interface TurnPorts {
  /** Appends events durably; with a state, checkpoints it in the same transaction. Throws if the turn was taken away (interrupted). */
  emit(events: EventDraft[], state?: TurnState): void;
  /** Appends the terminal event, moves the turn's messages to the history and clears the checkpoint, atomically. */
  finish(event: EventDraft, state: TurnState): void;
  /** Makes `agent` the session's active agent, durably, and returns the setup to continue with; throws if it cannot. */
  handoff(agent: string, reason: string | undefined): Promise<TurnSetup>;
  /** Replaces the thread history (after compaction) together with `event`, durably. */
  replaceHistory(history: ModelMessage[], event: EventDraft, state: TurnState): void;
  /** Records an approval request (its action.required event, the durable action and its deadline). */
  requestApproval(event: EventDraft, state: TurnState, action: { action_id: string; tool_name: string; expires_at: number }): void;
  /** The turn waits for human decisions: checkpoint it and let the executor go; a decision resumes it. */
  suspend(state: TurnState): void;
  /** Stores a payload too large for the log (in R2) and returns its artifact id. */
  spill(content: string, about: { turn_id: string; tool_call_id: string; tool_name: string; content_type: string }): Promise<string>;
  now(): number;
  newId(prefix: string): string;
  signal: AbortSignal;
  tool: Pick<ToolContext, "session_id" | "fetch" | "urlAllowlist" | "workspace" | "memory">;
}

/** What the loop runs with; a handoff replaces it mid-turn. */
interface Run {
  setup: TurnSetup;
  sdkTools: ToolSet;
}

class ModelCallError extends Error {}

export async function runTurn(state: TurnState, setup: TurnSetup, ports: TurnPorts): Promise<void> {
  const turn_id = state.turn_id;
  const run: Run = { setup, sdkTools: toSdkTools(setup) };
  try {
    // Planning belongs to the start of a turn only (an agent handed over to mid-turn does not plan).
    if (setup.config.planning_enabled && state.step === 0 && state.plan === undefined) {
      if (!(await fitContext(state, run, ports))) return;
      await planStep(state, run, ports);
    }
    for (;;) {
      const move = nextMove(state, run.setup.config.max_steps);
      if (move === "max_steps") return finishCompleted(state, state.output, "max_steps", ports);
      if (move === "answer") {
        if (acceptAnswer(state, run, ports)) return;
      } else if (move === "tools") {
        if ((await runToolCalls(state, run, ports)) === "waiting") return;
      } else {
        if (!(await fitContext(state, run, ports))) return;
        await modelStep(state, run, ports);
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
function nextMove(state: TurnState, maxSteps: number): "answer" | "max_steps" | "tools" | "model" {
  const atLimit = state.step >= maxSteps;
  // At the limit, calls the model asked for are left unrun (finalMessages answers them).
  if (state.calls) return atLimit ? "max_steps" : "tools";
  // A live message that arrived after the answer makes the model go on.
  if ((state.inbox?.length ?? 0) > 0) return atLimit ? "max_steps" : "model";
  if (state.answered) return "answer";
  return atLimit ? "max_steps" : "model";
}

function finishCompleted(state: TurnState, output: unknown, stop_reason: "final_answer" | "max_steps" | "budget_limit", ports: TurnPorts) {
  ports.finish({ type: "turn.completed", turn_id: state.turn_id, payload: { output, stop_reason, usage: state.usage } }, state);
}

/** Finishes the turn with the answer, or (output_schema refused it) asks again; true when finished. */
function acceptAnswer(state: TurnState, run: Run, ports: TurnPorts): boolean {
  const schema = run.setup.config.output_schema;
  if (!schema) {
    finishCompleted(state, state.output, "final_answer", ports);
    return true;
  }
  const parsed = parseFinalAnswer(state.output, schema);
  if (parsed.ok) {
    finishCompleted(state, parsed.value, "final_answer", ports);
    return true;
  }
  const rejections = (state.output_rejections ?? 0) + 1;
  if (rejections > MAX_OUTPUT_RETRIES) {
    const message = `The final answer did not match output_schema after ${rejections} attempts: ${parsed.errors.join("; ")}`;
    ports.finish({ type: "turn.failed", turn_id: state.turn_id, payload: { error: { code: "output_invalid", message } } }, state);
    return true;
  }
  state.output_rejections = rejections;
  state.answered = false;
  state.messages.push({ role: "user", content: correctionMessage(parsed.errors) });
  ports.emit(
    [{ type: "runtime.warning", turn_id: state.turn_id, payload: { message: "The final answer did not match output_schema; asking again", errors: parsed.errors, attempt: rejections } }],
    state,
  );
  return false;
}

function toSdkTools(setup: TurnSetup): ToolSet {
  // Schemas only, no `execute`: the runtime dispatches calls itself.
  const set: ToolSet = {};
  for (const t of setup.tools.values()) {
    set[t.name] = { description: t.description, inputSchema: jsonSchema(withInjectedArgs(t.parameters, setup.config.injected_tool_args)) };
  }
  return set;
}

function systemPrompt(config: AgentConfig): string | undefined {
  const parts = [config.instructions, config.output_schema ? outputInstructions(config.output_schema) : ""].filter(Boolean);
  return parts.length > 0 ? parts.join("\n\n") : undefined;
}

/** The executor's prompt: history, then this turn (its input carrying the plan), with advisories when asked for. */
function executorPrompt(state: TurnState, setup: TurnSetup): { system: string | undefined; messages: ModelMessage[] } {
  const system = systemPrompt(setup.config);
  const [input, ...rest] = state.messages;
  const withPlan: ModelMessage[] =
    state.plan && input?.role === "user" && typeof input.content === "string"
      ? [{ role: "user", content: `${input.content}\n\nPlan from the planning phase:\n${state.plan}` }, ...rest]
      : state.messages;
  let messages = [...setup.history, ...withPlan];
  if (budgetMode(setup.config)?.kind === "per-message") {
    messages = withAdvisories(messages, advisory(estimateTokens(system, messages), contextWindow(setup.config)));
  }
  return { system, messages };
}

/** One model call whose text is collected, not streamed to clients (planner and compaction passes). */
async function auxiliaryCall(
  state: TurnState,
  phase: "planner" | "compaction",
  call: { model: LanguageModel; modelName: string; system: string; messages: ModelMessage[]; tools?: ToolSet },
  ports: TurnPorts,
): Promise<string> {
  const { turn_id } = state;
  const step_id = ports.newId("stp");
  state.open_model_step = { step_id, phase };
  ports.emit([{ type: "model.requested", turn_id, step_id, payload: { model: call.modelName, phase } }], state);
  const result = await streamModel(state, step_id, phase, ports, {
    model: call.model,
    system: call.system,
    messages: call.messages,
    ...(call.tools ? { tools: call.tools, toolChoice: "none" as const } : {}),
    abortSignal: ports.signal,
  });
  state.open_model_step = null;
  ports.emit([{ type: "model.completed", turn_id, step_id, payload: { usage: result.usage, finish_reason: result.finish_reason, phase } }], state);
  return result.text;
}

async function planStep(state: TurnState, run: Run, ports: TurnPorts): Promise<void> {
  const { config } = run.setup;
  const modelName = config.planning_model ?? config.model;
  const model = config.planning_model ? run.setup.resolveModel(config.planning_model) : run.setup.model;
  const system = [config.planning_instructions || config.instructions, PLANNER_DIRECTIVE].filter(Boolean).join("\n\n");
  // The planner sees the task and the tool schemas; its transcript stays here and never enters the executor's.
  state.plan = (
    await auxiliaryCall(state, "planner", { model, modelName, system, messages: [...run.setup.history, ...state.messages], tools: run.sdkTools }, ports)
  ).trim();
  const events: EventDraft[] = state.plan ? [{ type: "reasoning.summary", turn_id: state.turn_id, payload: { kind: "plan", text: state.plan } }] : [];
  ports.emit(events, state);
}

/** Before an executor call under `limit:N`: compacts older turns when over the limit; false when the turn had to end. */
async function fitContext(state: TurnState, run: Run, ports: TurnPorts): Promise<boolean> {
  const mode = budgetMode(run.setup.config);
  if (mode?.kind !== "limit") return true;
  const limit = Math.floor((contextWindow(run.setup.config) * mode.percent) / 100);
  const measure = () => {
    const { system, messages } = executorPrompt(state, run.setup);
    return estimateTokens(system, messages);
  };
  const before = measure();
  if (before <= limit) return true;
  const { older, recent } = splitForCompaction(run.setup.history);
  let after = before;
  if (older.length > 0) {
    ports.emit([{ type: "context.compaction.started", turn_id: state.turn_id, payload: { before_tokens: before, limit_tokens: limit } }]);
    const transcript = older.map(renderForSummary).join("\n");
    const summary = await auxiliaryCall(
      state,
      "compaction",
      { model: run.setup.model, modelName: run.setup.config.model, system: COMPACTION_DIRECTIVE, messages: [{ role: "user", content: transcript }] },
      ports,
    );
    run.setup.history = [...summaryMessages(summary.trim()), ...recent];
    after = measure();
    ports.replaceHistory(
      run.setup.history,
      { type: "context.compaction.completed", turn_id: state.turn_id, payload: { before_tokens: before, after_tokens: after } },
      state,
    );
  }
  if (after <= limit) return true;
  state.messages.push({ role: "assistant", content: BUDGET_LIMIT_MESSAGE }); // the history ends on the answer given
  finishCompleted(state, BUDGET_LIMIT_MESSAGE, "budget_limit", ports);
  return false;
}

function renderForSummary(m: ModelMessage): string {
  const text = (content: unknown) => (typeof content === "string" ? content : JSON.stringify(content));
  return `${m.role}: ${text(m.content)}`;
}

async function modelStep(state: TurnState, run: Run, ports: TurnPorts): Promise<void> {
  const { turn_id } = state;
  const { config } = run.setup;
  const inbox = state.inbox ?? [];
  if (inbox.length > 0) {
    // Live messages enter after the tool results and before this call, oldest first.
    state.inbox = [];
    state.answered = false;
    for (const m of inbox) state.messages.push({ role: "user", content: m.content });
    ports.emit(
      inbox.map((m) => ({ type: "message.injected" as const, turn_id, payload: { message_id: m.message_id, content: m.content } })),
      state,
    );
  }
  const step_id = ports.newId("stp");
  state.step_id = step_id;
  state.open_model_step = { step_id, phase: "executor" };
  ports.emit([{ type: "model.requested", turn_id, step_id, payload: { model: config.model, phase: "executor", step: state.step + 1 } }], state);
  const { system, messages } = executorPrompt(state, run.setup);
  const result = await streamModel(state, step_id, "executor", ports, {
    model: run.setup.model,
    system,
    messages,
    tools: run.sdkTools,
    temperature: config.temperature,
    maxOutputTokens: config.max_tokens ?? undefined,
    ...(config.output_schema ? { output: structuredOutput(config.output_schema) } : {}),
    abortSignal: ports.signal,
  });
  const { text, calls } = result;
  state.step += 1;
  state.output = text;
  const content = [
    ...(text ? [{ type: "text" as const, text }] : []),
    ...calls.map((c) => ({ type: "tool-call" as const, toolCallId: c.tool_call_id, toolName: c.name, input: c.args })),
  ];
  if (content.length > 0) state.messages.push({ role: "assistant", content });
  state.calls = calls.length > 0 ? calls : null;
  state.answered = calls.length === 0;
  state.open_model_step = null;
  ports.emit([{ type: "model.completed", turn_id, step_id, payload: { usage: result.usage, finish_reason: result.finish_reason } }], state);
}

/** Streams one model call; executor text goes out as model.delta. Usage is added to the turn's. */
async function streamModel(
  state: TurnState,
  step_id: string,
  phase: "executor" | "planner" | "compaction",
  ports: TurnPorts,
  options: Parameters<typeof streamText>[0],
): Promise<{ text: string; calls: ToolCallRecord[]; usage: Usage; finish_reason: string }> {
  const { turn_id } = state;
  let text = "";
  const calls: ToolCallRecord[] = [];
  let usage: Usage = { input_tokens: 0, output_tokens: 0, total_tokens: 0 };
  let finish_reason = "unknown";
  try {
    const result = streamText({ ...options, onError: () => {} }); // errors arrive as stream parts below
    for await (const part of result.fullStream) {
      switch (part.type) {
        case "text-delta":
          if (!part.text) break;
          text += part.text;
          if (phase === "executor") ports.emit([{ type: "model.delta", turn_id, step_id, payload: { text: part.text } }]);
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
        case "finish": {
          const u = part.totalUsage;
          finish_reason = part.finishReason;
          usage = {
            input_tokens: u.inputTokens ?? 0,
            output_tokens: u.outputTokens ?? 0,
            total_tokens: u.totalTokens ?? (u.inputTokens ?? 0) + (u.outputTokens ?? 0),
          };
          break;
        }
        case "error":
          // A planner that calls a tool despite toolChoice "none" (some servers ignore it): keep its text as the plan.
          if (phase !== "executor" && ToolChoiceViolationError.isInstance(part.error)) break;
          throw new ModelCallError(errorMessage(part.error));
        case "abort":
          throw ports.signal.reason ?? new Error("aborted");
      }
    }
  } catch (err) {
    if (ports.signal.aborted) throw err;
    const error = err instanceof ModelCallError ? err : new ModelCallError(errorMessage(err));
    state.open_model_step = null;
    ports.emit([
      {
        type: "model.completed",
        turn_id,
        step_id,
        payload: { usage, finish_reason: "error", error: { message: error.message }, ...(phase === "executor" ? {} : { phase }) },
      },
    ], state);
    throw error;
  }
  state.usage = {
    input_tokens: state.usage.input_tokens + usage.input_tokens,
    output_tokens: state.usage.output_tokens + usage.output_tokens,
    total_tokens: state.usage.total_tokens + usage.total_tokens,
  };
  return { text, calls, usage, finish_reason };
}

/**
 * Runs the step's tool calls: parallel-safe ones concurrently (at most 8, calls sharing a lock one at a
 * time), then the others in order. Calls to hitl_tools first get an approval request and run only once
 * approved; while any decision is outstanding the turn is suspended ("waiting").
 */
async function runToolCalls(state: TurnState, run: Run, ports: TurnPorts): Promise<"done" | "waiting"> {
  const calls = state.calls!;
  // The step's calls run with the agent that asked for them, even if one of them hands the turn over.
  const setup = run.setup;
  const tools = setup.tools;
  // A call already "started" here began before a restart and has no result: re-run only what is idempotent.
  const lost = new Set(calls.filter((c) => c.status === "started" && !tools.get(c.name)?.idempotent));
  const locks = new Map<string, Promise<unknown>>();
  const run1 = (c: ToolCallRecord) => {
    const lock = tools.get(c.name)?.lock;
    const go = () => runToolCall(c, state, setup, run, ports, lost.has(c));
    if (!lock) return go();
    const next = (locks.get(lock) ?? Promise.resolve()).catch(() => {}).then(go);
    locks.set(lock, next);
    return next;
  };
  for (;;) {
    for (const c of calls) if (c.status === "pending" && !c.approval && needsApproval(c, setup)) await requestApproval(c, state, setup, ports);
    // Decisions can arrive while tools run; each round picks up the calls that became runnable.
    const runnable = calls.filter((c) => c.status !== "done" && c.approval?.status !== "pending");
    if (runnable.length === 0) break;
    const parallel = runnable.filter((c) => !lost.has(c) && (tools.get(c.name)?.parallel_safe ?? true));
    const serial = runnable.filter((c) => !parallel.includes(c));
    await runPool(parallel, MAX_PARALLEL_TOOL_CALLS, run1);
    for (const c of serial) await run1(c);
  }
  if (calls.some((c) => c.status !== "done")) {
    ports.suspend(state);
    return "waiting";
  }
  state.messages.push({ role: "tool", content: calls.map(toolResultPart) });
  state.calls = null;
  ports.emit([], state);
  return "done";
}

/** A call to one of the agent's hitl_tools that could run (a malformed call is refused without asking anyone). */
function needsApproval(call: ToolCallRecord, setup: TurnSetup): boolean {
  const tool = setup.tools.get(call.name);
  if (!tool || call.invalid || !setup.config.hitl_tools.includes(call.name)) return false;
  const { executable } = splitInjectedArgs(argsOf(call), setup.config.injected_tool_args);
  return schemaErrors(tool.parameters, executable).length === 0;
}

async function requestApproval(call: ToolCallRecord, state: TurnState, setup: TurnSetup, ports: TurnPorts): Promise<void> {
  const action_id = ports.newId("act");
  const expires_at = ports.now() + setup.config.approval_timeout_ms;
  const { executable, injected } = splitInjectedArgs(argsOf(call), setup.config.injected_tool_args);
  const args = await forLog(executable, call, state, setup, ports);
  call.approval = { action_id, status: "pending", expires_at };
  ports.requestApproval(
    {
      type: "action.required",
      turn_id: state.turn_id,
      step_id: state.step_id ?? undefined,
      tool_call_id: call.tool_call_id,
      action_id,
      payload: { kind: "tool_approval", tool_name: call.name, args: args.value, injected_args: injected, expires_at },
      ...refsOf(args.artifact),
    },
    state,
    { action_id, tool_name: call.name, expires_at },
  );
}

function argsOf(call: ToolCallRecord): Record<string, unknown> {
  return call.args && typeof call.args === "object" ? (call.args as Record<string, unknown>) : {};
}

async function runToolCall(call: ToolCallRecord, state: TurnState, setup: TurnSetup, run: Run, ports: TurnPorts, lost: boolean) {
  const { turn_id } = state;
  const ids = { turn_id, step_id: state.step_id ?? undefined, tool_call_id: call.tool_call_id };
  const tool = setup.tools.get(call.name);
  const { executable, injected } = splitInjectedArgs(argsOf(call), setup.config.injected_tool_args);
  const refused = call.approval && call.approval.status !== "approved" && call.approval.status !== "pending" ? call.approval : null;
  let output: unknown;
  let is_error = true;
  if (lost) {
    output = { error: "The runtime restarted while this tool was running; its outcome is unknown.", category: "lost" };
  } else {
    call.status = "started";
    call.started_at = ports.now();
    const args = await forLog(executable, call, state, setup, ports);
    ports.emit([{ type: "tool.started", ...ids, payload: { name: call.name, args: args.value, injected_args: injected }, ...refsOf(args.artifact) }], state);
    const argErrors = tool ? schemaErrors(tool.parameters, executable) : [];
    if (refused) {
      const why = refused.status === "rejected" ? "The user rejected this tool call" : "Nobody approved this tool call in time";
      output = refused.reason ? `${why}: ${refused.reason}` : why;
    } else if (!tool) output = `Tool "${call.name}" is not available in this session`;
    else if (call.invalid) output = `Invalid tool call: ${call.invalid}`;
    else if (argErrors.length > 0) output = `Invalid arguments for "${call.name}": ${argErrors.join("; ")}`;
    else {
      try {
        if (tool.handoff_target) {
          const reason = typeof executable.reason === "string" ? executable.reason : undefined;
          run.setup = await ports.handoff(tool.handoff_target, reason);
          run.sdkTools = toSdkTools(run.setup);
          output = `The conversation now continues with agent "${tool.handoff_target}".`;
        } else {
          output = await tool.execute(executable, { ...ports.tool, turn_id, tool_call_id: call.tool_call_id, signal: ports.signal, now: ports.now });
        }
        is_error = false;
      } catch (err) {
        if (ports.signal.aborted) throw err;
        output = errorMessage(err);
      }
    }
  }
  const started_at = call.started_at ?? ports.now();
  const completed_at = ports.now();
  // A result over max_tool_result_bytes goes to R2 whole; the log and the model get a preview and its id.
  const spilled = await forLog(output ?? null, call, state, setup, ports);
  output = spilled.value;
  call.status = "done";
  call.result = { output, is_error };
  const metadata = resultMetadata(call, is_error, started_at, completed_at, injected, spilled.artifact?.id ?? null);
  const refs = refsOf(spilled.artifact);
  ports.emit(
    [
      ...(spilled.artifact
        ? [{ type: "output.spilled" as const, ...ids, payload: { artifact_id: spilled.artifact.id, bytes: spilled.artifact.bytes, name: call.name } }]
        : []),
      { type: "tool.result", ...ids, payload: { name: call.name, output, is_error, metadata }, ...refs },
    ],
    state,
  );
}

/** How much of a spilled result the log and the model see. */
const SPILL_PREVIEW_BYTES = 2_000;

/**
 * Keeps a payload of a tool call within max_tool_result_bytes: a larger one is stored whole in R2 and
 * replaced by a preview naming its artifact, so no event (and no model prompt) carries it.
 */
async function forLog(
  value: unknown,
  call: ToolCallRecord,
  state: TurnState,
  setup: TurnSetup,
  ports: TurnPorts,
): Promise<{ value: unknown; artifact?: { id: string; bytes: number } }> {
  const max = setup.config.budget.max_tool_result_bytes ?? BUDGET_CAPS.max_tool_result_bytes;
  const text = typeof value === "string" ? value : JSON.stringify(value);
  const bytes = new TextEncoder().encode(text);
  if (bytes.byteLength <= max) return { value };
  const content_type = typeof value === "string" ? "text/plain; charset=utf-8" : "application/json";
  const id = await ports.spill(text, { turn_id: state.turn_id, tool_call_id: call.tool_call_id, tool_name: call.name, content_type });
  const head = new TextDecoder().decode(bytes.subarray(0, Math.min(max, SPILL_PREVIEW_BYTES))).replace(/\uFFFD$/, "");
  return {
    value: `${head}\n[truncated: ${bytes.byteLength} bytes in all; the whole is artifact ${id}]`,
    artifact: { id, bytes: bytes.byteLength },
  };
}

function refsOf(artifact: { id: string; bytes: number } | undefined): { refs?: { kind: string; id: string; bytes: number }[] } {
  return artifact ? { refs: [{ kind: "artifact", id: artifact.id, bytes: artifact.bytes }] } : {};
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
