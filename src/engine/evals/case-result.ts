// What a scorer reads of one eval case: the item, and how the agent's turn went.
import type { ScorerConfig } from "../../protocol/evals";

export interface CaseResult {
  input: unknown;
  expected?: unknown;
  output: unknown;
  status: "completed" | "failed" | "cancelled";
  tool_calls: { name: string; args: unknown }[];
  steps: number;
  cost_usd: number | null;
  latency_ms: number;
}

export interface ScoreOutcome {
  score: number;
  reason: string;
  /** Cost of scoring (a judge's call), USD. */
  cost_usd?: number | null;
}

/** The text of an output or expected value: a string as it is, anything else as JSON. */
export function textOf(value: unknown): string {
  if (value === undefined || value === null) return "";
  return typeof value === "string" ? value : JSON.stringify(value);
}

/** Scorers that call out: a judge model and a webhook. Given by the caller, which owns the network and the prices. */
export interface ScorerCalls {
  judge(scorer: Extract<ScorerConfig, { type: "model" }>, result: CaseResult): Promise<ScoreOutcome>;
  webhook(scorer: Extract<ScorerConfig, { type: "webhook" }>, result: CaseResult): Promise<ScoreOutcome>;
}
