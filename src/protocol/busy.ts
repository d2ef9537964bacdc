// What a new message does when it reaches a session whose turn is still running (docs/guides/busy-sessions.md).
import { z } from "zod";

export const ON_BUSY = ["enqueue", "reject", "interrupt", "rollback", "inject"] as const;

export const OnBusy = z
  .enum(ON_BUSY)
  .describe(
    "When a turn is running: enqueue (queue the new turn behind it), reject (409 session_busy, nothing stored), interrupt (cancel the running turn, start this one next), rollback (the same, and the running turn leaves the conversation), inject (a live message of the running turn)",
  );
export type OnBusy = z.infer<typeof OnBusy>;
