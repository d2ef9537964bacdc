// What a replay ends with (docs/guides/fork-and-replay.md): the replayed turn against the original, each side read from a turn's
// events, so the comparison is the same whether made live or later from the logs.

import type { Divergence } from "../../engine/recorded-model";
import { canonicalJson } from "../../engine/request-fingerprint";
import type { PayloadOf } from "../../protocol/events";
import type { ReplaySide } from "../../views/turn-side";

export type { ReplaySide } from "../../views/turn-side";
export { turnSide } from "../../views/turn-side";
export type ReplayComparison = PayloadOf<"replay.completed">;

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
