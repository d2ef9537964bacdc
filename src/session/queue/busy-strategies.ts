// What a turn submitted while another runs does: one entry per on_busy value (docs/guides/busy-sessions.md).
// A strategy either answers at once, making no turn (a live message of the running turn, a refusal), or
// says where the new turn goes: behind the queue, or ahead of it, superseding the running turn.
import type { OnBusy } from "../../protocol/busy";
import { ApiError } from "../../protocol/errors";
import type { TurnSubmitted } from "../../protocol/wire";
import type { TurnRow } from "../store/session-store";

export type BusyStrategy =
  | { answer(running: TurnRow, liveMessage: () => TurnSubmitted): TurnSubmitted }
  | { place: "behind" }
  /** The running turn is cancelled (rolled back: it leaves the conversation too) and this one starts next. */
  | { place: "ahead"; rollback: boolean };

export const WHILE_BUSY: Record<OnBusy, BusyStrategy> = {
  enqueue: { place: "behind" },
  // The live message keeps no idempotency key: a retry that repeats it adds it again.
  inject: { answer: (_running, liveMessage) => liveMessage() },
  reject: {
    answer: (running) => {
      throw new ApiError("session_busy", `Turn '${running.turn_id}' is running; on_busy "reject" refuses a new turn meanwhile`, {
        running_turn_id: running.turn_id,
      });
    },
  },
  interrupt: { place: "ahead", rollback: false },
  rollback: { place: "ahead", rollback: true },
};
