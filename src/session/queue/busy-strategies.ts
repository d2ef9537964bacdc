// What a turn submitted while another runs does: one entry per on_busy value (docs/guides/busy-sessions.md),
// and one the Responses API takes. A strategy either answers at once, making no turn (a live message of the
// running turn, a refusal), or says where the new turn goes: behind the queue (unless it refuses it now), or
// ahead of it, superseding the running turn.
import type { OnBusy } from "../../protocol/busy";
import { ApiError } from "../../protocol/errors";
import type { SessionView } from "../../protocol/views";
import type { TurnSubmitted } from "../../protocol/wire";
import type { TurnRow } from "../store/session-store";

/** The public on_busy values, and the Responses API's: queued behind, unless the running turn waits for a person. */
export type BusyMode = OnBusy | "enqueue_unless_waiting";

type Waiting = SessionView["pending_actions"];

export type BusyStrategy =
  | { answer(running: TurnRow, liveMessage: () => TurnSubmitted): TurnSubmitted }
  /** `refuses` answers why the turn cannot queue while the running turn waits for `waiting` (null: it can). */
  | { place: "behind"; refuses?(waiting: Waiting): ApiError | null }
  /** The running turn is cancelled (rolled back: it leaves the conversation too) and this one starts next. */
  | { place: "ahead"; rollback: boolean };

export const WHILE_BUSY: Record<BusyMode, BusyStrategy> = {
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
  // A Responses request that is not background would wait with the paused turn for as long as nobody answers:
  // as in Responses, the answer comes first. Its items name what waits (open-responses.md).
  enqueue_unless_waiting: { place: "behind", refuses: (waiting) => (waiting.length > 0 ? waitsForAnswer(waiting) : null) },
};

function waitsForAnswer(waiting: Waiting): ApiError {
  const what = waiting.map((a) => (a.kind === "user_input" ? `function_call '${a.tool_call_id}'` : `mcp_approval_request '${a.action_id}'`)).join(", ");
  return new ApiError(
    "conflict",
    `input: previous_response_id's conversation waits for an answer to ${what}: send mcp_approval_response or function_call_output items (or cancel the response) first`,
    [{ path: "input", reason: `the conversation waits for an answer to ${what}` }],
  );
}
