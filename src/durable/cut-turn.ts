// What a turn cut short for another (on_busy "interrupt") leaves behind: the answer its cut model call had
// streamed, and the queue once the new turn's submission is recorded.
import type { ModelMessage } from "ai";
import type { EventDraft, RuntimeEvent } from "../protocol/events";
import type { TurnState } from "../runtime/turn-state";
import type { TurnRow } from "./session-store";

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
