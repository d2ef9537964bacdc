// The built-in scorers: pure functions of a case's result, each a score from 0 to 1 with a reason. Those
// that call out (a judge model, a webhook) are given by the caller (ScorerCalls).
import { type Score, type ScorerConfig, scorerId } from "../../protocol/evals";
import { own } from "../../protocol/own-key";
import { compileSafeRegex } from "../../protocol/safe-regex";
import { schemaErrors } from "../json-schema";
import { canonicalJson } from "../request-fingerprint";
import type { JsonSchema } from "../tools/types";
import { type CaseResult, type ScoreOutcome, type ScorerCalls, textOf } from "./case-result";

const yes = (reason: string): ScoreOutcome => ({ score: 1, reason });
const no = (reason: string): ScoreOutcome => ({ score: 0, reason });
const verdict = (ok: boolean, pass: string, fail: string): ScoreOutcome => (ok ? yes(pass) : no(fail));
const short = (text: string) => (text.length > 80 ? `${text.slice(0, 80)}…` : text);

/** Whether `args` has each field of `want`, equal (canonical JSON). */
function hasArgs(args: unknown, want: Record<string, unknown>): boolean {
  const got = (args ?? {}) as Record<string, unknown>;
  return Object.entries(want).every(([k, v]) => canonicalJson(own(got, k) ?? null) === canonicalJson(v));
}

function parsedOutput(output: unknown): unknown {
  if (typeof output !== "string") return output;
  try {
    return JSON.parse(output);
  } catch {
    return output;
  }
}

function exact(s: Extract<ScorerConfig, { type: "exact" }>, r: CaseResult): ScoreOutcome {
  if (r.expected === undefined) return no("the case expects nothing to compare with");
  const fold = (t: string) => (s.case_sensitive === false ? t.toLowerCase() : t);
  const equal =
    typeof r.expected === "string"
      ? fold(textOf(r.output).trim()) === fold(r.expected.trim())
      : canonicalJson(parsedOutput(r.output)) === canonicalJson(r.expected);
  return verdict(equal, "the output equals the expected answer", `the output "${short(textOf(r.output))}" is not "${short(textOf(r.expected))}"`);
}

function contains(s: Extract<ScorerConfig, { type: "contains" }>, r: CaseResult): ScoreOutcome {
  const want = s.value ?? (r.expected === undefined ? undefined : textOf(r.expected));
  if (want === undefined) return no("no value given and the case expects nothing");
  const fold = (t: string) => (s.case_sensitive ? t : t.toLowerCase());
  return verdict(fold(textOf(r.output)).includes(fold(want)), `the output contains "${short(want)}"`, `the output does not contain "${short(want)}"`);
}

function builtIn(s: Exclude<ScorerConfig, { type: "model" | "webhook" }>, r: CaseResult): ScoreOutcome {
  switch (s.type) {
    case "exact":
      return exact(s, r);
    case "contains":
      return contains(s, r);
    case "regex":
      return verdict(
        compileSafeRegex(s.pattern, s.flags ?? "").test(textOf(r.output)),
        `the output matches /${s.pattern}/`,
        `the output does not match /${s.pattern}/`,
      );
    case "json_schema": {
      const errors = schemaErrors(s.schema as JsonSchema, parsedOutput(r.output));
      return verdict(errors.length === 0, "the output matches the schema", `the output does not match the schema: ${errors.slice(0, 3).join("; ")}`);
    }
    case "tool_called": {
      const calls = r.tool_calls.filter((c) => c.name === s.name);
      const ok = calls.some((c) => !s.args || hasArgs(c.args, s.args));
      const why = calls.length === 0 ? `${s.name} was not called` : `no call of ${s.name} had the arguments ${canonicalJson(s.args)}`;
      return verdict(ok, `${s.name} was called`, why);
    }
    case "no_tool_called": {
      const called = r.tool_calls.filter((c) => s.name === undefined || c.name === s.name).map((c) => c.name);
      return verdict(called.length === 0, s.name ? `${s.name} was not called` : "no tool was called", `called ${[...new Set(called)].join(", ")}`);
    }
    case "max_cost_usd":
      if (r.cost_usd === null) return no("the case's cost is unknown (a model without a price)");
      return verdict(r.cost_usd <= s.max, `cost ${r.cost_usd} USD, at most ${s.max}`, `cost ${r.cost_usd} USD, over ${s.max}`);
    case "max_latency_ms":
      return verdict(r.latency_ms <= s.max, `took ${r.latency_ms} ms, at most ${s.max}`, `took ${r.latency_ms} ms, over ${s.max}`);
    case "max_steps":
      return verdict(r.steps <= s.max, `${r.steps} steps, at most ${s.max}`, `${r.steps} steps, over ${s.max}`);
  }
}

/** A case scored by one scorer: a failed call of a judge or webhook scores 0 with its reason, never throws. */
export async function scoreCase(scorer: ScorerConfig, result: CaseResult, calls: ScorerCalls): Promise<Score & { cost_usd?: number | null }> {
  let outcome: ScoreOutcome;
  try {
    if (scorer.type === "model") outcome = await calls.judge(scorer, result);
    else if (scorer.type === "webhook") outcome = await calls.webhook(scorer, result);
    else outcome = builtIn(scorer, result);
  } catch (err) {
    outcome = no(`the scorer failed: ${err instanceof Error ? err.message : String(err)}`.slice(0, 300));
  }
  const score = Math.min(1, Math.max(0, Number.isFinite(outcome.score) ? outcome.score : 0));
  const passAt = scorer.type === "model" || scorer.type === "webhook" ? (scorer.pass_at ?? 0.5) : 1;
  const scored = { scorer: scorerId(scorer), score, pass: score >= passAt, reason: outcome.reason };
  return outcome.cost_usd === undefined ? scored : { ...scored, cost_usd: outcome.cost_usd };
}
