// The order of a session's conversation as the model saw it, which every view of the turns follows (the snapshot's
// turns, GET .../messages whole and in pages, the inspector): a turn takes its place when it starts, or when it is
// cancelled before it started (removed from the queue), right after the turns that took theirs before it; turns
// still waiting follow, in the order they were submitted. So after an interrupt the new turn comes before the
// turns queued earlier, as it ran before them, and a cut turn keeps its place with its partial answer.
import type { RuntimeEvent } from "../protocol/events";

/** Whether `e` gives its turn its place in the conversation (for a turn that has none yet). */
export function placesTurn(e: Pick<RuntimeEvent, "type">): boolean {
  return e.type === "turn.started" || e.type === "turn.cancelled";
}

/**
 * `turns` with `turn` moved to its place: after the last of the others that has one (`placed`), ahead of those
 * still waiting. The caller moves a turn once, on the first event that `placesTurn`.
 */
export function placeTurn<T>(turns: readonly T[], turn: T, placed: (t: T) => boolean): T[] {
  const others = turns.filter((t) => t !== turn);
  const at = others.findLastIndex(placed) + 1;
  return [...others.slice(0, at), turn, ...others.slice(at)];
}
