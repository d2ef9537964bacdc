// A turn's end releases the questions it left waiting (a remote A2A task's input-required), so that the remote
// task does not wait for ever (engine/dropped-questions.ts): the cancels are recorded in the end's transaction,
// then sent, and retried until the remote agent answers (remote-cancels/).
import { droppedQuestions } from "../../engine/dropped-questions";
import type { TurnState } from "../../engine/turn-state";
import type { CancelRow } from "../remote-cancels/cancel-rows";
import type { RemoteCancels } from "../remote-cancels/remote-cancels";

/** `record` inside the transaction that records the end of `state`'s turn, `send` once it is committed. */
export function questionRelease(cancels: Pick<RemoteCancels, "record" | "send">, state: TurnState, how: CancelRow["how"]) {
  const dropped = droppedQuestions(state);
  let rows: CancelRow[] = [];
  return {
    record: () => {
      if (dropped.length > 0) rows = cancels.record(state.turn_id, dropped, how);
    },
    send: () => cancels.send(rows),
  };
}
