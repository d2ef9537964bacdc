// Model calls of a turn: the executor step (streamed to clients as model.delta), and the planner and
// compaction passes (collected, not streamed). Each is model.requested → model.completed, with its cost.

import type { JSONSchema7 } from "@ai-sdk/provider";
import type { ModelMessage } from "ai";
import { type AgentConfig, toolPayloadLimit } from "../protocol/agent-config";
import type { EventDraft } from "../protocol/events";
import { attachCall, reattaches } from "./call-attach";
import { estimateCall } from "./call-estimate";
import {
  advisory,
  BUDGET_LIMIT_MESSAGE,
  budgetMode,
  contextWindow,
  estimateTokens,
  splitForCompaction,
  summaryMessages,
  trimHistory,
  withAdvisories,
} from "./context-budget";
import { appendText, userMessage, withFiles } from "./file-parts";
import { fileTextRedaction } from "./guardrails/run";
import { modelBreaker } from "./model-breaker";
import { type ModelChoice, streamChain } from "./model-fallback";
import { callOptions, type ModelRequest } from "./model-stream";
import type { TurnSetup } from "./ports";
import { reserveCall } from "./quota-reservation";
import { requestFingerprint } from "./request-fingerprint";
import { outputInstructions } from "./structured-output";
import { type Level, ModelCallError, type Outcome, recordedError, type Turn } from "./turn-context";
import type { ToolCallRecord, TurnState, Usage } from "./turn-state";

const PLANNER_DIRECTIVE =
  "You are the planning phase. Write a short numbered plan for the task: the steps, and which tools to use for each. Do not carry out the plan and do not answer the task yet.";
const COMPACTION_DIRECTIVE =
  "Summarize the conversation below for the assistant's memory. Keep every fact, name, number, decision and open question; drop pleasantries. Reply with the summary only.";

type Phase = "executor" | "planner" | "compaction";

function systemPrompt({ config, working_memory, recalled }: TurnSetup): string | undefined {
  const parts = [config.instructions, config.output_schema ? outputInstructions(config.output_schema) : "", working_memory ?? "", recalled ?? ""].filter(
    Boolean,
  );
  return parts.length > 0 ? parts.join("\n\n") : undefined;
}

/** The executor's prompt: history, then this turn (its input carrying the plan), with advisories when asked for. */
export function executorPrompt(state: TurnState, setup: TurnSetup): { system: string | undefined; messages: ModelMessage[] } {
  const system = systemPrompt(setup);
  const [input, ...rest] = state.messages;
  const withPlan: ModelMessage[] =
    state.plan && input?.role === "user" ? [appendText(input, `\n\nPlan from the planning phase:\n${state.plan}`), ...rest] : state.messages;
  let messages = [...setup.history, ...withPlan];
  if (budgetMode(setup.config)?.kind === "per-message") {
    messages = withAdvisories(messages, advisory(estimateTokens(system, messages), contextWindow(setup.config)));
  }
  return { system, messages };
}

/** One executor step of `level`: live messages first (root), then the model call; sets the state's calls or answer. */
export async function modelStep(level: Level, turn: Turn): Promise<void> {
  const { state } = level;
  const { turn_id } = state;
  const { config } = level.run.setup;
  const inbox = level.depth === 0 ? turn.ports.injected(state.messages_taken ?? 0) : [];
  if (inbox.length > 0) {
    // Live messages enter after the tool results and before this call, oldest first; the checkpoint that
    // holds them also records how far the inbox was taken, so a restart takes none twice.
    state.messages_taken = inbox[inbox.length - 1]!.seq;
    state.answered = false;
    for (const m of inbox) state.messages.push(userMessage(m.content, m.files));
    turn.emit(
      level,
      inbox.map((m) => ({
        type: "message.injected" as const,
        turn_id,
        payload: { message_id: m.message_id, content: m.content, ...(m.files ? { files: m.files } : {}) },
      })),
    );
  }
  const { system, messages } = executorPrompt(state, level.run.setup);
  const tokens = estimateTokens(system, messages);
  if (tokens > turn.budget.max_history_tokens) turn.exceed("tokens", turn.budget.max_history_tokens, tokens);
  const step_id = turn.ports.newId("stp");
  state.step_id = step_id;
  await callModel(
    level,
    turn,
    "executor",
    step_id,
    config.model,
    {
      model: level.run.setup.model,
      system,
      messages,
      tools: level.run.modelTools,
      temperature: config.temperature,
      maxOutputTokens: config.max_tokens ?? undefined,
      jsonSchema: (config.output_schema as JSONSchema7 | null) ?? undefined,
    },
    (result) => {
      state.step += 1;
      state.output = result.text;
      const content = [
        ...(result.text ? [{ type: "text" as const, text: result.text }] : []),
        ...result.calls.map((c) => ({ type: "tool-call" as const, toolCallId: c.tool_call_id, toolName: c.name, input: inConversation(c.args, config) })),
      ];
      if (content.length > 0) state.messages.push({ role: "assistant", content });
      state.calls = result.calls.length > 0 ? result.calls : null;
      state.answered = result.calls.length === 0;
    },
  );
}

/** The planner pass before the first executor call: its text becomes the plan; its transcript stays here. */
export async function planStep(level: Level, turn: Turn): Promise<void> {
  const { state } = level;
  const { setup } = level.run;
  const { config } = setup;
  const modelName = config.planning_model ?? config.model;
  const model = config.planning_model ? setup.resolveModel(config.planning_model) : setup.model;
  const system = [config.planning_instructions || config.instructions, PLANNER_DIRECTIVE].filter(Boolean).join("\n\n");
  await callModel(
    level,
    turn,
    "planner",
    turn.ports.newId("stp"),
    modelName,
    { model, system, messages: [...setup.history, ...state.messages], tools: level.run.modelTools, toolChoice: "none" },
    (result) => {
      state.plan = result.text.trim();
    },
  );
  turn.emit(level, state.plan ? [{ type: "reasoning.summary", turn_id: state.turn_id, payload: { kind: "plan", text: state.plan } }] : [], false);
}

/** A planner call that writes something other than the turn's plan (an orchestration plan): no tools. */
export async function plannerCall(level: Level, turn: Turn, system: string, prompt: string): Promise<string> {
  const { setup } = level.run;
  const modelName = setup.config.planning_model ?? setup.config.model;
  const model = setup.config.planning_model ? setup.resolveModel(setup.config.planning_model) : setup.model;
  const result = await callModel(level, turn, "planner", turn.ports.newId("stp"), modelName, { model, system, messages: [{ role: "user", content: prompt }] });
  return result.text;
}

/**
 * Before an executor call: drops the oldest earlier turns when the prompt is over max_history_tokens (so a
 * long thread never locks a session); then, under `limit:N`, compacts older turns when over the limit. An
 * outcome when the turn must end.
 */
export async function fitContext(level: Level, turn: Turn): Promise<Outcome | null> {
  trimToBudget(level, turn);
  const { state, run } = level;
  const mode = budgetMode(run.setup.config);
  if (mode?.kind !== "limit") return null;
  const limit = Math.floor((contextWindow(run.setup.config) * mode.percent) / 100);
  const measure = () => {
    const { system, messages } = executorPrompt(state, run.setup);
    return estimateTokens(system, messages);
  };
  const before = measure();
  if (before <= limit) return null;
  const { older, recent } = splitForCompaction(run.setup.history);
  let after = before;
  if (older.length > 0) {
    turn.emit(level, [{ type: "context.compaction.started", turn_id: state.turn_id, payload: { before_tokens: before, limit_tokens: limit } }], false);
    const transcript = older.map((m) => `${m.role}: ${typeof m.content === "string" ? m.content : JSON.stringify(m.content)}`).join("\n");
    const summary = await callModel(level, turn, "compaction", turn.ports.newId("stp"), run.setup.config.model, {
      model: run.setup.model,
      system: COMPACTION_DIRECTIVE,
      messages: [{ role: "user", content: transcript }],
    });
    run.setup.history = [...summaryMessages(summary.text.trim()), ...recent];
    after = measure();
    turn.ports.replaceHistory(
      run.setup.history,
      { type: "context.compaction.completed", turn_id: state.turn_id, payload: { before_tokens: before, after_tokens: after } },
      turn.root,
    );
  }
  if (after <= limit) return null;
  state.messages.push({ role: "assistant", content: BUDGET_LIMIT_MESSAGE }); // the history ends on the answer given
  return { kind: "budget_limit", output: BUDGET_LIMIT_MESSAGE };
}

function trimToBudget(level: Level, turn: Turn): void {
  const { state, run } = level;
  const limit = turn.budget.max_history_tokens;
  const measure = (history: ModelMessage[]) => {
    const { system, messages } = executorPrompt(state, { ...run.setup, history });
    return estimateTokens(system, messages);
  };
  const before = measure(run.setup.history);
  if (before <= limit || run.setup.history.length === 0) return;
  const kept = trimHistory(run.setup.history, measure, limit);
  const dropped = run.setup.history.length - kept.length;
  run.setup.history = kept;
  turn.emit(
    level,
    [{ type: "context.compaction.started", turn_id: state.turn_id, payload: { before_tokens: before, limit_tokens: limit, method: "trim" } }],
    false,
  );
  turn.ports.replaceHistory(
    kept,
    {
      type: "context.compaction.completed",
      turn_id: state.turn_id,
      payload: { before_tokens: before, after_tokens: measure(kept), method: "trim", dropped_messages: dropped },
    },
    turn.root,
  );
}

/**
 * One model call, charged to the turn's budget: model.requested, the stream (executor text as model.delta),
 * then model.completed and cost.recorded. Usage and cost add up on the turn's root state.
 */
async function callModel(
  level: Level,
  turn: Turn,
  phase: Phase,
  step_id: string,
  modelName: string,
  request: Omit<ModelRequest, "signal">,
  /** Applies the result to the state before model.completed checkpoints it. */
  apply: (result: { text: string; calls: ToolCallRecord[] }) => void = () => {},
): Promise<{ text: string; calls: ToolCallRecord[]; usage: Usage; finish_reason: string }> {
  const { state } = level;
  const { turn_id } = state;
  const { setup } = level.run;
  const redactFile = fileTextRedaction(setup.config.guardrails);
  request = { ...request, messages: await withFiles(request.messages, turn.ports.readFile, turn.withFiles, redactFile) };
  const options = callOptions({ ...request, signal: turn.signal });
  turn.signal.throwIfAborted();
  turn.checkWallClock();
  // Before a spend quota caps max_output_tokens: the fingerprint is the call's as asked, quota or none (replays compare it).
  const request_hash = requestFingerprint(modelName, options);
  // A call that re-attaches to the one a restart cut was charged when that one was made.
  if (!reattaches(state, request.model, request_hash)) turn.charge("llm_calls");
  const estimate = estimateCall([modelName, ...setup.config.fallback_models], options, setup.prices);
  const held = await reserveCall(level, turn, estimate, options);
  // Recorded before the call: what a restart mid-call records as lost (lost-calls.ts), the figure the quotas reserved.
  const reservation = { model: modelName, request_hash, ...estimate };
  state.open_model_step = { step_id, phase, reservation, ...(held ? { quota_reservation: held.id } : {}) };
  const step = phase === "executor" ? { step: state.step + 1 } : {};
  const { input_tokens, max_output_tokens, cost_usd: reserved_usd } = reservation;
  turn.emit(level, [
    {
      type: "model.requested",
      turn_id,
      step_id,
      payload: { model: modelName, phase, ...step, request_hash, reservation: { input_tokens, max_output_tokens, cost_usd: reserved_usd } },
    },
  ]);
  const attach = attachCall(level, turn, request.model, options);
  let text = "";
  const calls: ToolCallRecord[] = [];
  let usage: Usage = { input_tokens: 0, output_tokens: 0, total_tokens: 0 };
  let finish_reason = "unknown";
  let answered = modelName;
  const chain: ModelChoice[] = [
    { spec: modelName, model: () => request.model },
    ...setup.config.fallback_models.filter((m) => m !== modelName).map((spec) => ({ spec, model: () => setup.resolveModel(spec) })),
  ];
  const stream = streamChain(chain, attach.options, {
    firstTokenTimeoutMs: setup.config.first_token_timeout_ms,
    callTimeoutMs: setup.config.model_timeout_ms,
    cacheKey: setup.cacheKey,
    signal: turn.signal,
    // A replayed turn's model answers from its recording: no breaker may send its calls elsewhere.
    ...(chain.length > 1 && !setup.recordedDecision ? { breaker: modelBreaker(turn.failedModels, setup.config.fallback_cooldown_ms) } : {}),
    onFallback: (from, to, reason, skipped) =>
      turn.emit(
        level,
        [{ type: "model.fallback", turn_id, step_id, payload: { from, to, reason: recordedError(setup, reason), ...(skipped ? { skipped } : {}) } }],
        false,
      ),
  });
  try {
    for await (const part of stream) {
      switch (part.type) {
        case "text":
          text += part.text;
          // Buffered output: no text reaches clients before the output guardrails passed the answer (guardrails/stages.ts).
          if (phase === "executor" && level.run.setup.config.output_mode !== "buffered")
            turn.emit(level, [{ type: "model.delta", turn_id, step_id, payload: { text: part.text } }], false);
          break;
        case "tool-call":
          // Only the executor runs tools; a planner that calls one despite toolChoice "none" keeps its text.
          if (phase !== "executor") break;
          calls.push({
            tool_call_id: part.toolCallId,
            name: part.toolName,
            args: part.input,
            status: "pending",
            ...(part.invalid ? { invalid: part.invalid } : {}),
          });
          break;
        case "finish":
          finish_reason = part.finishReason;
          usage = part.usage;
          answered = part.model ?? modelName;
          break;
      }
    }
  } catch (err) {
    attach.release();
    held?.settle(text || calls.length > 0 ? "reserved" : null, answered);
    if (turn.signal.aborted) throw err;
    const error = new ModelCallError(recordedError(setup, err));
    state.open_model_step = null;
    turn.emit(level, [
      {
        type: "model.completed",
        turn_id,
        step_id,
        payload: { usage, finish_reason: "error", error: { message: error.message }, ...(phase === "executor" ? {} : { phase }) },
      },
    ]);
    throw error;
  }
  attach.release();
  held?.settle(usage, answered);
  state.open_model_step = null;
  apply({ text, calls });
  const cost_usd = turn.addUsage(state, answered, usage, setup.prices);
  const completed = { usage, finish_reason, ...(phase === "executor" ? {} : { phase }), ...(answered === modelName ? {} : { model: answered }) };
  const answer: EventDraft[] = [
    { type: "model.completed", turn_id, step_id, payload: completed },
    { type: "cost.recorded", turn_id, step_id, payload: { model: answered, phase, usage, cost_usd } },
  ];
  // An answer naming tool calls waits for their starts (one transaction) until this task ends: I/O before them (a
  // spill, an approval) lets it go alone, as soon as before. Calls are marked started after any spill (tool-calls.ts).
  turn.emit(level, answer, true, calls.length > 0 ? "task" : undefined);
  turn.checkCost();
  return { text, calls, usage, finish_reason };
}

/**
 * Tool arguments as the conversation keeps them: ones larger than max_tool_result_bytes (a file the model
 * wrote, say) are replaced by a note, so they do not fill the context of every later call. The tool itself
 * gets them whole.
 */
function inConversation(args: unknown, config: AgentConfig): unknown {
  const bytes = new TextEncoder().encode(JSON.stringify(args ?? null)).byteLength;
  return bytes > toolPayloadLimit(config) ? { _omitted: `${bytes} bytes of arguments, left out of the conversation to save context` } : args;
}
