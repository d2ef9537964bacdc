// What a replay ends with (docs/guides/fork-and-replay.md): the replayed turn against the original, each side read from a turn's
// events, so the comparison is the same whether made live or later from the logs.

import type { Divergence } from "../../engine/recorded-model";
import { canonicalJson } from "../../engine/request-fingerprint";
import type { EventDraft, PayloadOf } from "../../protocol/events";

export type ReplaySide = PayloadOf<"replay.completed">["original"];
export type ReplayComparison = PayloadOf<"replay.completed">;

/** A turn's side of a comparison, from its events with its terminal event (tool calls of the root level only). */
export function turnSide(events: readonly EventDraft[]): ReplaySide {
  let steps = 0;
  const tool_calls: ReplaySide["tool_calls"] = [];
  const usage = { input_tokens: 0, output_tokens: 0, total_tokens: 0 };
  let cost: number | null = 0;
  let side: Pick<ReplaySide, "status" | "stop_reason" | "output"> = { status: "cancelled", stop_reason: "cancelled", output: null };
  for (const e of events) {
    // Usage and cost count the whole tree of the turn, as its terminal event does.
    if (e.type === "cost.recorded") {
      usage.input_tokens += e.payload.usage.input_tokens;
      usage.output_tokens += e.payload.usage.output_tokens;
      usage.total_tokens += e.payload.usage.total_tokens;
      cost = cost === null || e.payload.cost_usd === null ? null : cost + e.payload.cost_usd;
    }
    if (e.subagent_id) continue;
    if (e.type === "model.requested" && e.payload.phase === "executor") steps += 1;
    else if (e.type === "tool.started") tool_calls.push({ name: e.payload.name, args: e.payload.args });
    else if (e.type === "turn.completed") side = { status: "completed", stop_reason: e.payload.stop_reason, output: e.payload.output };
    else if (e.type === "turn.failed") side = { status: "failed", stop_reason: e.payload.error.code, output: e.payload.output ?? null };
    else if (e.type === "turn.cancelled") side = { status: "cancelled", stop_reason: "cancelled", output: null };
  }
  return { ...side, steps, tool_calls, usage, cost_usd: cost };
}

export function compareTurns(
  ids: Pick<ReplayComparison, "source_session" | "source_turn_id" | "turn_id" | "tools">,
  original: ReplaySide,
  replay: ReplaySide,
  diverged: Divergence | null,
): ReplayComparison {
  return {
    ...ids,
    diverged,
    original,
    replay,
    output_changed: canonicalJson(original.output) !== canonicalJson(replay.output),
    tool_calls_changed: canonicalJson(original.tool_calls) !== canonicalJson(replay.tool_calls),
    tokens_delta: replay.usage.total_tokens - original.usage.total_tokens,
    cost_delta_usd: original.cost_usd === null || replay.cost_usd === null ? null : replay.cost_usd - original.cost_usd,
  };
}
