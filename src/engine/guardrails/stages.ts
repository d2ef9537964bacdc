// Where the loop runs the guardrails (docs/guides/guardrails.md): the input stage before the first model call
// and before live messages enter (its redactions ran when the input was stored: session/queue/turn-queue.ts), the
// output stage on the root's final answer, tool_input before a step's calls run, tool_output on each result
// before the model sees it. Every verdict is a guardrail.checked event.
import type { EventDraft } from "../../protocol/events";
import type { GuardrailStage } from "../../protocol/guardrails";
import { readableText, userMessage } from "../file-parts";
import type { Level, Outcome, Turn } from "../turn-context";
import type { ToolCallRecord, TurnState } from "../turn-state";
import { judge } from "./judge";
import { asText } from "./rules";
import { checkStage, type Decide, fileTextRedaction, hasRules, type Verdict } from "./run";
import { askWebhook } from "./webhook";

function decider(level: Level, turn: Turn): Decide {
  return (rule, text, stage, id) => (rule.type === "model" ? judge(rule, text, stage, level, turn) : askWebhook(rule, text, stage, id, turn));
}

function verdictEvents(state: TurnState, verdicts: Verdict[], ids: { tool_call_id?: string; message_id?: string } = {}): EventDraft[] {
  const { tool_call_id, message_id } = ids;
  return verdicts.map((v) => ({
    type: "guardrail.checked",
    turn_id: state.turn_id,
    ...(tool_call_id ? { step_id: state.step_id ?? undefined, tool_call_id } : {}),
    payload: { ...v, ...(message_id ? { message_id } : {}) },
  }));
}

function blockedBy(v: Verdict): string {
  return `Blocked by guardrail "${v.rule}" (${v.stage})${v.reason ? `: ${v.reason}` : ""}`;
}

function blockedOutcome(v: Verdict): Outcome {
  return { kind: "failed", code: "guardrail_blocked", message: blockedBy(v), guardrail: { stage: v.stage, rule: v.rule } };
}

async function check(level: Level, turn: Turn, stage: GuardrailStage, value: unknown, skipRedactions = false) {
  return checkStage(level.run.setup.config.guardrails, stage, value, decider(level, turn), skipRedactions);
}

/**
 * The input stage in the turn (the root's): the turn's input once, then each live message before it enters.
 * Each is read as the model would read it: its text and the text of its text files (not images or PDFs).
 * A block ends the turn; a blocked input is left out of the thread history, and a blocked live message never
 * enters (like every message the turn did not take, it becomes a queued turn when the turn ends).
 */
export async function guardInput(level: Level, turn: Turn): Promise<Outcome | null> {
  const { state } = level;
  const { guardrails } = level.run.setup.config;
  if (!hasRules(guardrails, "input", "decide")) return null;
  const readable = (m: Parameters<typeof readableText>[0]) => readableText(m, turn.ports.readFile, fileTextRedaction(guardrails));
  const guarded = (state.input_guarded ??= { input: false, inbox: 0 });
  if (!guarded.input) {
    const first = state.messages[0];
    const r = await check(level, turn, "input", await readable(first), true);
    guarded.input = true;
    if (r.blocked && first) state.messages[0] = { role: "user", content: `[${blockedBy(r.blocked)}]` };
    turn.emit(level, verdictEvents(state, r.verdicts));
    if (r.blocked) return blockedOutcome(r.blocked);
  }
  for (const m of turn.ports.injected(Math.max(guarded.inbox, state.messages_taken ?? 0))) {
    const r = await check(level, turn, "input", await readable(userMessage(m.content, m.files)), true);
    if (!r.blocked) guarded.inbox = m.seq;
    turn.emit(level, verdictEvents(state, r.verdicts, { message_id: m.message_id }));
    if (r.blocked) return blockedOutcome(r.blocked);
  }
  return null;
}

/**
 * The output stage on the root's final answer (or its last text at max_steps). A redaction replaces the answer
 * in the outcome and the conversation; a block fails the turn and leaves a note in the history instead. With
 * output_mode buffered the answer reaches clients only now, as one model.delta of the call that gave it.
 */
export async function guardOutput(level: Level, turn: Turn, outcome: Outcome): Promise<Outcome> {
  if (outcome.kind !== "answer" && outcome.kind !== "max_steps") return outcome;
  const { state } = level;
  const { config } = level.run.setup;
  let text = state.output;
  if (hasRules(config.guardrails, "output")) {
    const r = await check(level, turn, "output", outcome.output);
    turn.emit(level, verdictEvents(state, r.verdicts), false);
    if (r.blocked) {
      replaceAnswer(state, `[${blockedBy(r.blocked)}]`);
      return blockedOutcome(r.blocked);
    }
    if (r.verdicts.some((v) => v.verdict === "redact")) {
      text = asText(r.value);
      replaceAnswer(state, text);
      outcome = { ...outcome, output: r.value };
    }
  }
  if (config.output_mode === "buffered" && text && state.step_id) {
    turn.emit(level, [{ type: "model.delta", turn_id: state.turn_id, step_id: state.step_id, payload: { text } }], false);
  }
  return outcome;
}

/** Replaces the text of the latest model response in the conversation (and the state's copy of it). */
function replaceAnswer(state: TurnState, text: string): void {
  state.output = text;
  const i = state.messages.findLastIndex((m) => m.role === "assistant");
  const last = state.messages[i];
  if (last?.role !== "assistant" || typeof last.content === "string") return;
  const parts = last.content.filter((p) => p.type !== "text");
  state.messages[i] = { role: "assistant", content: [{ type: "text", text }, ...parts] };
}

/**
 * tool_input on the step's calls not yet checked, before any of them starts (or asks for approval). A block
 * marks the call (its error result says why); a redaction replaces its arguments, in the conversation too.
 */
export async function guardToolCalls(level: Level, turn: Turn): Promise<void> {
  const { state } = level;
  if (!hasRules(level.run.setup.config.guardrails, "tool_input")) return;
  for (const c of state.calls ?? []) {
    if (c.guarded || c.status !== "pending" || c.invalid) continue;
    const r = await check(level, turn, "tool_input", c.args);
    c.guarded = true;
    if (r.blocked) c.blocked = blockedBy(r.blocked);
    else if (r.verdicts.some((v) => v.verdict === "redact")) replaceArgs(state, c, r.value);
    turn.emit(level, verdictEvents(state, r.verdicts, { tool_call_id: c.tool_call_id }));
  }
}

/**
 * tool_input on the arguments an approver edited, once the decision is applied and before the call starts: the
 * same rules as the model's arguments (their redactions ran when the decision was recorded: session/approvals/approvals.ts).
 * A block makes the call's result an error naming the rule, as for the model's arguments.
 */
export async function guardEditedCalls(level: Level, turn: Turn): Promise<void> {
  const { state } = level;
  if (!hasRules(level.run.setup.config.guardrails, "tool_input", "decide")) return;
  for (const c of state.calls ?? []) {
    const edited = c.approval?.edited;
    if (!edited || edited.guarded || c.status !== "pending") continue;
    const r = await check(level, turn, "tool_input", edited.args, true);
    edited.guarded = true;
    if (r.blocked) c.blocked = blockedBy(r.blocked);
    turn.emit(level, verdictEvents(state, r.verdicts, { tool_call_id: c.tool_call_id }));
  }
}

function replaceArgs(state: TurnState, call: ToolCallRecord, args: unknown): void {
  call.args = args;
  for (const m of state.messages) {
    if (m.role !== "assistant" || typeof m.content === "string") continue;
    for (const p of m.content) {
      // Arguments too large for the conversation are a note there already (model-calls.ts, inConversation).
      const omitted = p.type === "tool-call" && typeof p.input === "object" && p.input !== null && "_omitted" in p.input;
      if (p.type === "tool-call" && p.toolCallId === call.tool_call_id && !omitted) p.input = args;
    }
  }
}

/** tool_output on a result before the model sees it: the result as it continues, and the verdicts to log with it. */
export async function guardToolResult(
  level: Level,
  turn: Turn,
  call: ToolCallRecord,
  output: unknown,
  is_error: boolean,
): Promise<{ output: unknown; is_error: boolean; events: EventDraft[] }> {
  if (!hasRules(level.run.setup.config.guardrails, "tool_output")) return { output, is_error, events: [] };
  const r = await check(level, turn, "tool_output", output ?? null);
  const events = verdictEvents(level.state, r.verdicts, { tool_call_id: call.tool_call_id });
  if (r.blocked) return { output: `The result of "${call.name}" was withheld. ${blockedBy(r.blocked)}`, is_error: true, events };
  return { output: r.value, is_error, events };
}
