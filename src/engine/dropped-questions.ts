// Questions a tool's result asked this session's user (asks_user: a remote A2A task waiting for input) that a
// turn's end leaves unanswered. The turn's closing events close the call, but the remote side would wait for ever:
// once the end is recorded, each such tool is told (its `unanswered`, which cancels the remote task), and what
// came of it is recorded as question.dropped. The question's arguments live in the turn's checkpoint, so this
// holds after a restart too.
import { errorMessage } from "../protocol/errors";
import type { EventDraft } from "../protocol/events";
import type { ToolDefinition } from "./tools/types";
import { levels, type TurnState } from "./turn-state";

export interface DroppedQuestion {
  tool_call_id: string;
  name: string;
  answer_args: Record<string, unknown>;
}

/** The calls of the turn (at every level) whose question still waits in its checkpoint, answered or not. */
export function droppedQuestions(root: TurnState): DroppedQuestion[] {
  return levels(root).flatMap(({ state }) =>
    (state.calls ?? [])
      // Approved (its answer applied), the call runs again with the answer and ends the remote task itself.
      .filter((c) => c.status === "started" && c.follow_up && c.approval?.status === "pending")
      .map((c) => ({ tool_call_id: c.tool_call_id, name: c.name, answer_args: c.follow_up! })),
  );
}

/** Tells each dropped question's tool; never throws: one session-level question.dropped per question says how it went. */
export async function releaseQuestions(
  turnId: string,
  dropped: DroppedQuestion[],
  tools: ReadonlyMap<string, ToolDefinition>,
  how: "cancelled" | "interrupted",
  ctx: { session_id: string; fetch: typeof fetch; urlAllowlist: string[]; signal: AbortSignal },
): Promise<EventDraft[]> {
  return Promise.all(
    dropped.map(async (q): Promise<EventDraft> => {
      const tool = tools.get(q.name);
      const message = tool?.unanswered
        ? await tool.unanswered(q.answer_args, how, { ...ctx, tool_call_id: q.tool_call_id }).catch(errorMessage)
        : `The agent no longer has the tool "${q.name}": the side that asked was not told`;
      return { type: "question.dropped", payload: { turn_id: turnId, tool_call_id: q.tool_call_id, name: q.name, message } };
    }),
  );
}
