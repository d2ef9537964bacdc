// What a turn did, read from its events: its ending, its model calls (steps), tool calls, usage and cost. A
// replay compares two of these (src/session/replays/); an eval run scores one (src/objects/evals/).
import type { EventDraft, PayloadOf } from "../protocol/events";

export type ReplaySide = PayloadOf<"replay.completed">["original"];

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
