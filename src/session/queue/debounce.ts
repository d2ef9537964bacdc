// debounce_ms (docs/guides/busy-sessions.md): a turn submitted with it waits in the queue until its window
// closes, and messages with the same on_busy and debounce_ms that arrive meanwhile join it as live messages,
// which it takes before its first model call. The window is an entry of the object's alarm schedule, so a
// restart keeps it.
import type { SessionStore } from "../store/session-store";
import type { BusyMode } from "./busy-strategies";

/** The alarm kind of a turn's window (its key is the turn id). */
export const DEBOUNCE = "debounce:";

/** Whether `turnId` still waits for its window to close at `now`. */
export function held(store: Pick<SessionStore, "timers">, turnId: string, now: number): boolean {
  return (store.timers.dueAt(DEBOUNCE + turnId) ?? 0) > now;
}

/** The queued turn the submission joins: the latest whose window is open and that was submitted the same way. */
export function joinable(store: Pick<SessionStore, "queuedTurns" | "timers">, body: { on_busy?: BusyMode; debounce_ms?: number }, now: number): string | null {
  if (!body.debounce_ms) return null;
  const onBusy = body.on_busy ?? "enqueue";
  return store.queuedTurns().findLast((t) => held(store, t.turn_id, now) && t.on_busy === onBusy && t.debounce_ms === body.debounce_ms)?.turn_id ?? null;
}
