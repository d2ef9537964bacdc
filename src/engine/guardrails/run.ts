// Evaluating one stage's guardrails on one value. The order is fixed, whatever the config's: redactions first
// (so no later rule, judge or webhook sees what they remove), then the deterministic blocks and warnings,
// then the model and webhook rules, each group in config order; the first block ends the stage.
import type { PayloadOf } from "../../protocol/events";
import { type GuardrailRule, type GuardrailStage, type Guardrails, isDeterministic, ruleId } from "../../protocol/guardrails";
import { asText, type CompiledRule, compileRule } from "./rules";

export type Verdict = PayloadOf<"guardrail.checked">;
export type CallRule = Extract<GuardrailRule, { type: "model" | "webhook" }>;

/** A model or webhook rule's answer: whether it fires and why, or that it gave no answer (the rule then fires). */
export interface Decision {
  flagged: boolean;
  reason?: string;
  failed?: "timeout" | "error";
}
export type Decide = (rule: CallRule, text: string, stage: GuardrailStage, id: string) => Promise<Decision>;

interface Entry {
  id: string;
  rule: GuardrailRule;
  compiled: CompiledRule | null;
}

export interface StageOutcome {
  /** The value with every redaction applied. */
  value: unknown;
  verdicts: Verdict[];
  /** The verdict that blocked, if one did. */
  blocked: Verdict | null;
}

/** The rules of each stage of a config, compiled and in evaluation order (computed once per config object). */
const compiledStages = new WeakMap<Guardrails, Partial<Record<GuardrailStage, Entry[]>>>();

function entries(guardrails: Guardrails, stage: GuardrailStage): Entry[] {
  let stages = compiledStages.get(guardrails);
  if (!stages) compiledStages.set(guardrails, (stages = {}));
  let list = stages[stage];
  if (!list) {
    const all = (guardrails[stage] ?? []).map((rule, i) => ({ id: ruleId(stage, rule, i), rule, compiled: isDeterministic(rule) ? compileRule(rule) : null }));
    const rank = (e: Entry) => (e.rule.action === "redact" ? 0 : e.compiled ? 1 : 2);
    list = stages[stage] = all.sort((a, b) => rank(a) - rank(b)); // a stable sort keeps config order within a group
  }
  return list;
}

/** Whether a stage has rules at all (a stage without any costs nothing). */
export function hasRules(guardrails: Guardrails | undefined, stage: GuardrailStage, part: "redact" | "decide" | "all" = "all"): boolean {
  return !!guardrails && entries(guardrails, stage).some((e) => part === "all" || (e.rule.action === "redact") === (part === "redact"));
}

function verdictOf(stage: GuardrailStage, e: Entry, fired: boolean, extra: { reason?: string; failed?: "timeout" | "error" } = {}): Verdict {
  return { stage, rule: e.id, kind: e.rule.type, verdict: fired ? e.rule.action : "pass", ...extra };
}

/** Applies one deterministic rule; the verdict, and the value as it continues. */
function applyRule(stage: GuardrailStage, e: Entry, value: unknown): { verdict: Verdict; value: unknown } {
  const found = e.compiled!.check(value, e.rule.action === "redact");
  if (!found) return { verdict: verdictOf(stage, e, false), value };
  return { verdict: verdictOf(stage, e, true, { reason: found.reason, ...(found.failed ? { failed: found.failed } : {}) }), value: found.redacted };
}

/** The redaction rules of a stage only (all deterministic): run where the text is stored, before it is. */
export function redactStage(guardrails: Guardrails | undefined, stage: GuardrailStage, value: unknown): { value: unknown; verdicts: Verdict[] } {
  const verdicts: Verdict[] = [];
  if (!guardrails) return { value, verdicts };
  for (const e of entries(guardrails, stage)) {
    if (e.rule.action !== "redact") break;
    const r = applyRule(stage, e, value);
    verdicts.push(r.verdict);
    value = r.value;
  }
  return { value, verdicts };
}

/**
 * The input stage's redactions as applied to the text of a text file the input attaches: the file keeps its
 * bytes, and the model and the other input rules read its text redacted (file-parts.ts, withFiles).
 */
export function fileTextRedaction(guardrails: Guardrails | undefined): (text: string) => string {
  if (!hasRules(guardrails, "input", "redact")) return (text) => text;
  return (text) => redactStage(guardrails, "input", text).value as string;
}

/** Runs a stage's rules on `value`; `skipRedactions` when they already ran where the value was stored. */
export async function checkStage(
  guardrails: Guardrails | undefined,
  stage: GuardrailStage,
  value: unknown,
  decide: Decide,
  skipRedactions = false,
): Promise<StageOutcome> {
  const verdicts: Verdict[] = [];
  if (!guardrails) return { value, verdicts, blocked: null };
  for (const e of entries(guardrails, stage)) {
    if (skipRedactions && e.rule.action === "redact") continue;
    let verdict: Verdict;
    if (e.compiled) {
      ({ verdict, value } = applyRule(stage, e, value));
    } else {
      const d = await decide(e.rule as CallRule, asText(value), stage, e.id);
      const fired = d.flagged || d.failed !== undefined;
      verdict = verdictOf(stage, e, fired, { ...(d.reason ? { reason: d.reason } : {}), ...(d.failed ? { failed: d.failed } : {}) });
    }
    verdicts.push(verdict);
    if (verdict.verdict === "block") return { value, verdicts, blocked: verdict };
  }
  return { value, verdicts, blocked: null };
}
