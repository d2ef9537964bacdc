// The agent loop as a resumable state machine. Given a TurnState (new, or loaded after a restart) it
// continues: an optional planner pass, then model calls one step at a time, the requested tools run by
// the runtime itself (sub-agents being loops of the same kind inside the turn), results fed back, until
// an accepted final answer, max_steps, the context budget or the turn budget. Every transition goes
// through the ports, which make it durable.

import type { TurnErrorCode } from "../protocol/event-shapes";
import { turnBudget } from "./budget-limits";
import { guardInput, guardOutput } from "./guardrails/stages";
import { lostCalls } from "./lost-calls";
import { fitContext, modelStep, planStep } from "./model-calls";
import type { TurnPorts, TurnSetup } from "./ports";
import { admitTurn, countStart, settleCut } from "./quota-reservation";
import { correctionMessage, MAX_OUTPUT_RETRIES, parseFinalAnswer } from "./structured-output";
import { runToolCalls } from "./tool-calls";
import { type Level, ModelCallError, type Outcome, recordedError, Turn, toModelTools } from "./turn-context";
import { closingEvents, levels, type TurnState } from "./turn-state";

export type { TurnPorts, TurnSetup } from "./ports";
export { MAX_PARALLEL_TOOL_CALLS } from "./tool-calls";

/** A sub-agent with an output schema may fail finish_subtask validation this many times. */
export const MAX_FINISH_RETRIES = 3;

/** Resumes of one turn after restarts, without progress in between, before it is given up as lost. */
export const MAX_RECOVERIES = 3;

/**
 * Runs the turn from `state` to its end or until it waits for decisions. `recovering` says why a turn whose
 * executor was lost (a restart) is resumed: the model calls it had under way are closed and made again.
 */
export async function runTurn(state: TurnState, setup: TurnSetup, ports: TurnPorts, recovering?: string): Promise<void> {
  const { turn_id } = state;
  const turn = new Turn(state, ports, turnBudget(setup.config.budget, setup.budgetMaxima), runLevel);
  if (state.paused_at) {
    // Time spent waiting for people does not count against the wall-clock budget.
    state.waited_ms = (state.waited_ms ?? 0) + (ports.now() - state.paused_at);
    state.paused_at = null;
  } else if (recovering !== undefined && !recover(state, ports, recovering)) {
    return;
  }
  if (turn.budget.max_depth === 0) {
    // No depth for sub-agents at all: the root is not offered the tools that start them.
    setup = { ...setup, tools: new Map([...setup.tools].filter(([, t]) => t.loop_handled !== "run_subtask" && t.loop_handled !== "spawn_subagents")) };
  }
  const root: Level = { state, run: { setup, modelTools: toModelTools(setup) }, depth: 0, parent_id: null, maxSteps: setup.config.max_steps };
  const disarm = turn.armWallClock();
  try {
    // A call lost to the restart counts as spent: it may have used the budget up before anything is sent again.
    if (recovering !== undefined) turn.checkCost();
    let outcome: Outcome | null = null;
    await admitTurn(root, turn);
    // Planning belongs to the start of a turn only (an agent handed over to mid-turn does not plan).
    if (setup.config.planning_enabled && state.step === 0 && state.plan === undefined) {
      outcome = (await guardInput(root, turn)) ?? (await fitContext(root, turn));
      if (!outcome) await planStep(root, turn);
    }
    outcome ??= await runLevel(root, turn);
    outcome = await guardOutput(root, turn, outcome);
    await countStart(root, turn);
    if (outcome.kind === "waiting") {
      state.paused_at = ports.now();
      return ports.suspend(state);
    }
    const summary = { usage: state.usage, cost_usd: state.cost_usd ?? null };
    if (outcome.kind === "failed") {
      // The root level has no finish_subtask, so it never fails with schema_not_satisfied.
      const error = { code: outcome.code as TurnErrorCode, message: outcome.message, ...outcome.guardrail };
      ports.finish({ type: "turn.failed", turn_id, payload: { error, ...summary } }, state);
    } else {
      const stop_reason = outcome.kind === "answer" ? "final_answer" : outcome.kind;
      ports.finish({ type: "turn.completed", turn_id, payload: { output: outcome.output, stop_reason, ...summary } }, state);
    }
  } catch (err) {
    if (turn.exceeded) {
      // Every running sub-agent was stopped by the same abort; partial output and the tree stay in the log.
      const { reason, limit, observed, message } = turn.exceeded;
      ports.emit([{ type: "budget.exceeded", turn_id, payload: { reason, limit, observed } }]);
      const summary = { output: state.output, usage: state.usage, cost_usd: state.cost_usd ?? null };
      ports.finish({ type: "turn.failed", turn_id, payload: { error: { code: "budget_exceeded", message }, ...summary } }, state);
      return;
    }
    if (turn.refused) {
      const { code, quota_id, message } = turn.refused.verdict;
      const summary = { output: state.output, usage: state.usage, cost_usd: state.cost_usd ?? null };
      ports.finish({ type: "turn.failed", turn_id, payload: { error: { code, message, quota_id }, ...summary } }, state);
      return;
    }
    if (ports.signal.aborted) throw err; // interrupted: whoever aborted records the outcome
    const message = recordedError(setup, err);
    if (err instanceof ModelCallError) {
      ports.finish({ type: "turn.failed", turn_id, payload: { error: { code: "model_error", message } } }, state);
    } else {
      ports.emit([{ type: "runtime.error", turn_id, payload: { message, where: "loop" } }]);
      ports.finish({ type: "turn.failed", turn_id, payload: { error: { code: "internal_error", message } } }, state);
    }
  } finally {
    disarm();
  }
}

/**
 * A restart cut the turn: counts the resume (reset by every model response and tool result) and closes the
 * model calls left open at every level; false when the turn was resumed too often and has been ended as lost.
 */
function recover(state: TurnState, ports: TurnPorts, why: string): boolean {
  const { turn_id } = state;
  state.recoveries = (state.recoveries ?? 0) + 1;
  if (state.recoveries > MAX_RECOVERIES) {
    const message = `The turn was resumed ${MAX_RECOVERIES} times without progress`;
    ports.finish({ type: "turn.failed", turn_id, payload: { error: { code: "lost", message } } }, state);
    return false;
  }
  // The calls under way may have been billed: their reservations are recorded as spent before they are made again.
  const lost = lostCalls(state);
  for (const { state: s } of levels(state)) if (s.open_model_step && !s.reattach) settleCut(ports.quota, s.open_model_step, true);
  const closing = closingEvents(state, "interrupted", ports.now(), "model_calls");
  for (const level of levels(state)) level.state.open_model_step = null;
  ports.emit(
    [...lost, ...closing, { type: "run.status", turn_id, payload: { phase: "recovering", detail: `Resuming the turn: ${why}`, attempt: state.recoveries } }],
    state,
  );
  return true;
}

/** Runs one level (the root agent or a sub-agent) until it has an outcome. */
export async function runLevel(level: Level, turn: Turn): Promise<Outcome> {
  for (;;) {
    turn.signal.throwIfAborted();
    const { child } = level;
    if (child?.finished) return { kind: "answer", output: child.finished.value };
    if (child && child.finish_rejections >= MAX_FINISH_RETRIES)
      return { kind: "failed", code: "schema_not_satisfied", message: "finish_subtask was refused too often" };
    // Live messages go to the root agent only.
    const injected = level.depth === 0 && turn.ports.injected(level.state.messages_taken ?? 0).length > 0;
    const move = nextMove(level.state, level.maxSteps, injected);
    if (move === "max_steps") return { kind: "max_steps", output: level.state.output };
    if (move === "answer") {
      const outcome = acceptAnswer(level, turn);
      if (outcome) return outcome;
    } else if (move === "tools") {
      if ((await runToolCalls(level, turn)) === "waiting") return { kind: "waiting" };
    } else {
      // Live messages go through the input guardrails before the model call takes them in.
      const stop = level.depth === 0 ? ((await guardInput(level, turn)) ?? (await fitContext(level, turn))) : null;
      if (stop) return stop;
      await modelStep(level, turn);
    }
  }
}

/** What a (possibly just restored) state calls for next. */
function nextMove(state: TurnState, maxSteps: number, injected: boolean): "answer" | "max_steps" | "tools" | "model" {
  const atLimit = state.step >= maxSteps;
  // At the limit, calls the model asked for are left unrun (finalMessages answers them).
  if (state.calls) return atLimit ? "max_steps" : "tools";
  // A live message that arrived after the answer makes the model go on.
  if (injected) return atLimit ? "max_steps" : "model";
  if (state.answered) return "answer";
  return atLimit ? "max_steps" : "model";
}

/** The outcome of a final answer, or null when output_schema refused it and the model is asked again. */
function acceptAnswer(level: Level, turn: Turn): Outcome | null {
  const { state } = level;
  if (level.child) {
    // A sub-agent with a schema must finish through finish_subtask; a plain answer does not count.
    if (level.child.output_schema) return { kind: "failed", code: "schema_not_satisfied", message: "the sub-agent answered without finish_subtask" };
    return { kind: "answer", output: state.output };
  }
  const schema = level.run.setup.config.output_schema;
  if (!schema) return { kind: "answer", output: state.output };
  const parsed = parseFinalAnswer(state.output, schema);
  if (parsed.ok) return { kind: "answer", output: parsed.value };
  const rejections = (state.output_rejections ?? 0) + 1;
  if (rejections > MAX_OUTPUT_RETRIES) {
    return {
      kind: "failed",
      code: "output_invalid",
      message: `The final answer did not match output_schema after ${rejections} attempts: ${parsed.errors.join("; ")}`,
    };
  }
  state.output_rejections = rejections;
  state.answered = false;
  state.messages.push({ role: "user", content: correctionMessage(parsed.errors) });
  turn.emit(level, [
    {
      type: "runtime.warning",
      turn_id: state.turn_id,
      payload: { message: "The final answer did not match output_schema; asking again", errors: parsed.errors, attempt: rejections },
    },
  ]);
  return null;
}
