// The scorers that call out: a judge model answering {score, reason} as structured output (priced like any
// model call, bounded in time), and a webhook POSTed the case (under the URL allowlist, as webhook tools are).
import type { JSONSchema7, LanguageModelV3 } from "@ai-sdk/provider";
import { z } from "zod";
import type { ScorerConfig } from "../../protocol/evals";
import { callOptions, streamModel } from "../model-stream";
import { costOf, type PriceOverrides } from "../pricing";
import type { Usage } from "../turn-state";
import { urlAllowed } from "../url-allowlist";
import { type CaseResult, type ScoreOutcome, type ScorerCalls, textOf } from "./case-result";

const Answer = z.object({ score: z.number().min(0).max(1), reason: z.string().max(2000).optional() });
const ANSWER_JSON = z.toJSONSchema(Answer) as JSONSchema7;
const DIRECTIVE =
  'You grade an AI agent\'s answer against the rubric above. Answer only with JSON: {"score": <a number from 0 to 1>, "reason": "<one short sentence>"}.';
const TIMEOUT_MS = 60_000;

export interface ScorerCallDeps {
  resolveModel(spec: string): LanguageModelV3;
  prices: PriceOverrides;
  allowlist: string[];
  fetch: typeof fetch;
}

const caseBody = (r: CaseResult) => ({
  input: r.input,
  expected: r.expected ?? null,
  output: r.output,
  status: r.status,
  tool_calls: r.tool_calls,
  steps: r.steps,
  cost_usd: r.cost_usd,
  latency_ms: r.latency_ms,
});

async function judge(deps: ScorerCallDeps, s: Extract<ScorerConfig, { type: "model" }>, r: CaseResult): Promise<ScoreOutcome> {
  const signal = AbortSignal.timeout(TIMEOUT_MS);
  const content = [
    `The input:\n${textOf(r.input)}`,
    r.expected === undefined ? "" : `The expected answer:\n${textOf(r.expected)}`,
    `The agent's answer:\n${textOf(r.output)}`,
    r.tool_calls.length ? `Its tool calls:\n${JSON.stringify(r.tool_calls)}` : "",
  ]
    .filter(Boolean)
    .join("\n\n");
  const request = {
    model: deps.resolveModel(s.model),
    system: `${s.rubric}\n\n${DIRECTIVE}`,
    messages: [{ role: "user" as const, content }],
    temperature: 0,
    jsonSchema: ANSWER_JSON,
    signal,
  };
  let answer = "";
  let usage: Usage | null = null;
  for await (const part of streamModel(request.model, { ...callOptions(request), abortSignal: signal })) {
    if (part.type === "text") answer += part.text;
    else if (part.type === "finish") usage = part.usage;
  }
  const cost_usd = usage ? costOf(s.model, usage, deps.prices) : null;
  let parsed: ReturnType<typeof Answer.safeParse>;
  try {
    parsed = Answer.safeParse(JSON.parse(answer));
  } catch {
    return { score: 0, reason: "the judge's answer was not JSON", cost_usd };
  }
  if (!parsed.success) return { score: 0, reason: "the judge's answer was not {score, reason}", cost_usd };
  return { score: parsed.data.score, reason: parsed.data.reason ?? "", cost_usd };
}

async function webhook(deps: ScorerCallDeps, s: Extract<ScorerConfig, { type: "webhook" }>, r: CaseResult): Promise<ScoreOutcome> {
  if (!urlAllowed(s.url, deps.allowlist)) return { score: 0, reason: "the webhook's URL is not under TOOL_URL_ALLOWLIST" };
  const res = await deps.fetch(s.url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(caseBody(r)),
    redirect: "manual",
    signal: AbortSignal.timeout(TIMEOUT_MS),
  });
  const text = await res.text();
  if (!res.ok) return { score: 0, reason: `the webhook answered ${res.status}` };
  let parsed: ReturnType<typeof Answer.safeParse>;
  try {
    parsed = Answer.safeParse(JSON.parse(text));
  } catch {
    return { score: 0, reason: "the webhook's answer was not JSON" };
  }
  return parsed.success ? { score: parsed.data.score, reason: parsed.data.reason ?? "" } : { score: 0, reason: "the webhook's answer was not {score, reason}" };
}

export function scorerCalls(deps: ScorerCallDeps): ScorerCalls {
  return { judge: (s, r) => judge(deps, s, r), webhook: (s, r) => webhook(deps, s, r) };
}
