// What a turn cut short for another (on_busy "interrupt", "rollback") leaves behind: the answer its cut
// model call had streamed, the tool calls it had started, and the queue once the new turn's submission is recorded.
import type { ModelMessage } from "ai";
import type { TurnState } from "../../engine/turn-state";
import type { EventDraft, PayloadOf, RuntimeEvent } from "../../protocol/events";
import type { TurnRow } from "../store/session-store";

/** The text the root's open executor call streamed before the cut, as an assistant message (none when it streamed nothing). */
export function partialAnswer(state: TurnState, events: RuntimeEvent[]): ModelMessage[] {
  const open = state.open_model_step;
  if (open?.phase !== "executor") return [];
  const text = events
    .filter((e) => e.type === "model.delta" && e.step_id === open.step_id)
    .map((e) => (e.type === "model.delta" ? e.payload.text : ""))
    .join("");
  return text ? [{ role: "assistant", content: text }] : [];
}

/** The queue after `drafts` are recorded: their last queue.changed, else the queue as stored. */
export function queueAfter(drafts: EventDraft[], stored: TurnRow[]): string[] {
  const changed = drafts.findLast((d) => d.type === "queue.changed");
  return changed?.type === "queue.changed" ? changed.payload.queued : stored.map((t) => t.turn_id);
}

/** The tool calls the turn started (sub-agents' too), and whether their result arrived before the cut. */
export function startedCalls(events: RuntimeEvent[]): PayloadOf<"turn.rolled_back">["side_effects"] {
  const done = new Set(events.filter((e) => e.type === "tool.result").map((e) => e.tool_call_id));
  return events.flatMap((e) =>
    e.type === "tool.started" && e.tool_call_id ? [{ tool_call_id: e.tool_call_id, name: e.payload.name, completed: done.has(e.tool_call_id) }] : [],
  );
}
