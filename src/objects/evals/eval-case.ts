// One eval case: a fresh session of the run's agent version, the item's input submitted once (by an
// idempotency key, so a restart finds the same turn), the turn's end awaited, read from its events and scored.

import type { CaseResult, ScorerCalls } from "../../engine/evals/case-result";
import { textOf } from "../../engine/evals/case-result";
import { scoreCase } from "../../engine/evals/scorers";
import { lineDiff } from "../../engine/evals/text-diff";
import type { Env } from "../../env";
import type { DatasetItem } from "../../protocol/datasets";
import type { Result } from "../../protocol/errors";
import { scorerId } from "../../protocol/evals";
import { DEFAULT_POLICY } from "../../protocol/policy";
import { turnSide } from "../../views/turn-side";
import type { CaseOutcome, RunSpec } from "./eval-run-store";
import { openReplay } from "./open-replay";
import { followTurn, interruptTurn, replaySourceOf, sessionObject, submitOnce, turnEvents } from "./session-reads";

export interface CaseSteps {
  /** The turn is submitted: record its id. */
  submitted(turnId: string): void;
  /** Whether the run was cancelled (a case not yet submitted stops; one just submitted is interrupted). */
  cancelled(): boolean;
}

export const CANCELLED = "the eval run was cancelled";

/** Runs (or, after a restart, goes on watching) case `idx` in session `sid`. */
export async function runCase(
  env: Env,
  spec: RunSpec,
  idx: number,
  item: DatasetItem,
  at: { sid: string; turnId: string | null },
  calls: ScorerCalls,
  steps: CaseSteps,
): Promise<CaseOutcome> {
  const { sid } = at;
  let turnId = at.turnId;
  if (turnId === null) {
    if (steps.cancelled()) return failed(CANCELLED, spec);
    turnId = item.source && spec.recorded ? await replayCase(env, spec, idx, item.source, sid) : await freshCase(env, spec, idx, item, sid);
    if (turnId === null) return failed("the case's session could not be opened", spec);
    steps.submitted(turnId);
    if (steps.cancelled()) await interruptTurn(env, sid, CANCELLED, spec.by);
  }
  await followTurn(env, sid, turnId);
  const events = await turnEvents(env, sid, turnId);
  const side = turnSide(events);
  const from = events.find((e) => e.type === "turn.submitted")?.timestamp ?? 0;
  const to = events.at(-1)?.timestamp ?? from;
  const result: CaseResult = {
    input: item.input,
    ...(item.expected === undefined ? {} : { expected: item.expected }),
    output: side.output,
    status: side.status,
    tool_calls: side.tool_calls,
    steps: side.steps,
    cost_usd: side.cost_usd,
    latency_ms: to - from,
  };
  let scoring = 0;
  const scores = [];
  for (const scorer of spec.scorers) {
    const { cost_usd, ...score } = await scoreCase(scorer, result, calls);
    scoring += cost_usd ?? 0;
    scores.push(score);
  }
  return {
    output: side.output,
    turn_status: side.status,
    ...(side.status === "completed" ? {} : { error: `the turn ${side.status}: ${side.stop_reason ?? ""}`.trim() }),
    scores,
    ...(scoring > 0 ? { scoring_cost_usd: scoring } : {}),
    cost_usd: side.cost_usd,
    latency_ms: result.latency_ms,
    steps: side.steps,
    tool_calls: side.tool_calls,
    ...(item.expected === undefined ? {} : { diff: lineDiff(textOf(item.expected), textOf(side.output)) }),
  };
}

/** Opens the case's fresh session of the version (or finds it, after a restart) and submits the item's input once. */
async function freshCase(env: Env, spec: RunSpec, idx: number, item: DatasetItem, sid: string): Promise<string | null> {
  const created = (await sessionObject(env, sid).create({
    session_id: sid,
    agent: spec.config,
    agent_version: { version: spec.version, label: null },
    policy: DEFAULT_POLICY,
    metadata: { eval_run_id: spec.id, eval_case: idx },
    owner: null,
  })) as Result<unknown>;
  if (!created.ok && created.error.code !== "conflict") return null;
  return submitOnce(env, sid, item.input, `eval:${spec.id}:${idx}`, spec.by);
}

/** A recorded turn replayed in session `sid` against the version: the source's conversation before it, its tools' recorded results. */
async function replayCase(env: Env, spec: RunSpec, idx: number, from: { session_id: string; turn_id: string }, sid: string): Promise<string> {
  const source = await replaySourceOf(env, from.session_id, from.turn_id, spec.by);
  return openReplay(env, {
    sid: from.session_id,
    turnId: from.turn_id,
    source,
    execId: sid,
    agent: spec.config,
    agentVersion: { version: spec.version, label: null },
    tools: "recorded",
    owner: source.owner,
    metadata: { eval_run_id: spec.id, eval_case: idx },
    by: spec.by,
    resume: true,
  });
}

/** A case that could not run: every scorer scores it 0. */
export function failed(error: string, spec: Pick<RunSpec, "scorers">): CaseOutcome {
  return { error, scores: spec.scorers.map((s) => ({ scorer: scorerId(s), score: 0, pass: false, reason: error })) };
}
