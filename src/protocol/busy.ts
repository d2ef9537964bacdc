// What a new message does when it reaches a session whose turn is still running (docs/guides/busy-sessions.md).
import { z } from "zod";

export const ON_BUSY = ["enqueue", "reject", "interrupt", "rollback", "inject"] as const;

export const OnBusy = z
  .enum(ON_BUSY)
  .describe(
    "When a turn is running: enqueue (queue the new turn behind it), reject (409 session_busy, nothing stored), interrupt (cancel the running turn, start this one next), rollback (the same, and the running turn leaves the conversation), inject (a live message of the running turn)",
  );
export type OnBusy = z.infer<typeof OnBusy>;

export const MAX_DEBOUNCE_MS = 60_000;

export const DebounceMs = z
  .int()
  .min(1)
  .max(MAX_DEBOUNCE_MS, `must be at most ${MAX_DEBOUNCE_MS}`)
  .describe(
    "The new turn waits this long before it starts; messages with the same on_busy and debounce_ms that arrive meanwhile join it, in order (each restarts the wait)",
  );
