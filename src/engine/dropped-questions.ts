// Questions a tool's result asked this session's user (asks_user: a remote A2A task waiting for input) that a
// turn's end leaves unanswered. The turn's closing events close the call, but the remote side would wait for ever:
// the session records a cancel for each in the end's own transaction and sends it until the remote agent answers
// (session/remote-cancels). The question's arguments live in the turn's checkpoint, so this holds after a restart too.
import { levels, type TurnState } from "./turn-state";

export interface DroppedQuestion {
  tool_call_id: string;
  name: string;
  answer_args: Record<string, unknown>;
  /** The agent whose tool asked (a handoff or a sub-agent's parent may differ from the session's agent by now). */
  asked_by: { agent: string; version: number | null } | null;
}

/** The calls of the turn (at every level) whose question still waits in its checkpoint, answered or not. */
export function droppedQuestions(root: TurnState): DroppedQuestion[] {
  return levels(root).flatMap(({ state }) =>
    (state.calls ?? [])
      // Approved (its answer applied), the call runs again with the answer and ends the remote task itself.
      .filter((c) => c.status === "started" && c.follow_up && c.approval?.status === "pending")
      .map((c) => ({ tool_call_id: c.tool_call_id, name: c.name, answer_args: c.follow_up!, asked_by: c.asked_by ?? null })),
  );
}
