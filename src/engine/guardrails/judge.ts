// The model rule: a judge call that answers a structured verdict ({flagged, reason}, asked for as JSON through
// the provider's structured output). It is charged to the turn like any model call (llm_calls, wall clock,
// cost) and its usage is recorded as cost.recorded with phase "guardrail". It has no model.requested: a
// replay's recording holds the executor's calls only, and a judge runs live again.
import type { JSONSchema7 } from "@ai-sdk/provider";
import { z } from "zod";
import type { GuardrailStage } from "../../protocol/guardrails";
import { estimateCall } from "../call-estimate";
import { callOptions, type ModelRequest, streamModel } from "../model-stream";
import { type HeldReservation, reserveCall } from "../quota-reservation";
import { type Level, recordedError, type Turn } from "../turn-context";
import { emptyUsage, type Usage } from "../turn-state";
import type { CallRule, Decision } from "./run";

const VerdictSchema = z.object({ flagged: z.boolean(), reason: z.string().max(500).optional() });
const VERDICT_JSON = z.toJSONSchema(VerdictSchema) as JSONSchema7;

const DIRECTIVE =
  'You are a guardrail. Judge the text below against the rules above. Answer only with JSON: {"flagged": true|false, "reason": "<one short sentence>"}; flagged is true when the text breaks the rules.';

/** Asks the rule's model about `text`; an answer that is not a verdict counts as no answer (the rule fires). */
export async function judge(rule: Extract<CallRule, { type: "model" }>, text: string, stage: GuardrailStage, level: Level, turn: Turn): Promise<Decision> {
  const { setup } = level.run;
  turn.signal.throwIfAborted();
  turn.checkWallClock();
  turn.charge("llm_calls");
  let answer = "";
  let usage: Usage = emptyUsage();
  let failed: Decision | null = null;
  let held: HeldReservation | null = null;
  try {
    const request: ModelRequest = {
      model: setup.resolveModel(rule.model),
      system: `${rule.instructions}\n\n${DIRECTIVE}`,
      messages: [{ role: "user" as const, content: `The ${stage.replace("_", " ")} to judge:\n\n${text}` }],
      temperature: 0,
      jsonSchema: VERDICT_JSON,
      signal: turn.signal,
    };
    const options = { ...callOptions(request), abortSignal: turn.signal };
    held = await reserveCall(level, turn, estimateCall([rule.model], options, setup.prices), options);
    for await (const part of streamModel(request.model, options)) {
      if (part.type === "text") answer += part.text;
      else if (part.type === "finish") usage = part.usage;
    }
  } catch (err) {
    if (turn.signal.aborted) {
      held?.settle(answer ? "reserved" : null, rule.model);
      throw err;
    }
    failed = { flagged: true, failed: "error", reason: `the judge failed: ${recordedError(setup, err).slice(0, 200)}` };
  }
  held?.settle(failed ? (answer ? "reserved" : null) : usage, rule.model);
  const cost_usd = turn.addUsage(level.state, rule.model, usage, setup.prices);
  turn.emit(level, [{ type: "cost.recorded", turn_id: level.state.turn_id, payload: { model: rule.model, phase: "guardrail", usage, cost_usd } }]);
  turn.checkCost();
  if (failed) return failed;
  const parsed = VerdictSchema.safeParse(parseJson(answer));
  if (!parsed.success) return { flagged: true, failed: "error", reason: "the judge's answer was not a verdict" };
  return { flagged: parsed.data.flagged, ...(parsed.data.reason ? { reason: parsed.data.reason } : {}) };
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}
