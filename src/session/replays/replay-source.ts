// What a replay of one of this session's turns starts from (docs/guides/fork-and-replay.md): the conversation as it was when the turn
// started (a fork there), the turn's input, its model calls and tool results as recorded, and its side of the
// comparison, all read from the log.

import type { ModelMessage } from "ai";
import { loadedWorkingMemory } from "../../engine/memory/working-memory";
import { recordedDecisions } from "../../engine/recorded-decisions";
import { type Recording, recordingOf } from "../../engine/recorded-model";
import { recordedResults } from "../../engine/recorded-tools";
import { ApiError } from "../../protocol/errors";
import type { PayloadOf, RuntimeEvent } from "../../protocol/events";
import type { RecordedTurnSource, ReplaySource } from "../../protocol/operations/turns";
import type { Capability } from "../capability";
import { historyAt, type SourceSession, sourceConfig } from "../forks/fork-history";
import { withDocument } from "../memory/session-memory";
import { turnSide } from "./replay-compare";
import type { ReplayTurns } from "./replay-turns";

export function recordedTurn(store: SourceSession["store"], turnId: string): RecordedTurnSource {
  const turn = store.turn(turnId);
  if (!turn) throw ApiError.notFound("Turn", turnId);
  if (!store.terminalEvent(turnId)) throw new ApiError("conflict", `Turn '${turnId}' has not ended; replay it once it has`);
  const events: RuntimeEvent[] = store.eventsOfTurn(turnId);
  const started = events.find((e) => e.type === "turn.started");
  if (!started) throw new ApiError("conflict", `Turn '${turnId}' never started (it was cancelled in the queue); there is nothing to replay`);
  const at_sequence = started.sequence - 1;
  const submitted = events.find((e) => e.type === "turn.submitted");
  const { messages } = historyAt(store, at_sequence);
  return {
    at_sequence,
    input: turn.input,
    ...(submitted?.type === "turn.submitted" && submitted.payload.files ? { files: submitted.payload.files } : {}),
    messages_json: JSON.stringify(messages),
    recording_json: JSON.stringify({
      ...withUnrunCalls(recordingOf(events), events, store.forkReads.turnHistory(turnId)),
      results: recordedResults(events),
      recalled: recordedRecall(events),
      // Each with its document, for the replay session (whose log does not hold the ones this log points at).
      working: loadedWorkingMemory(events).map((m) => withDocument(store, m)),
      decisions: recordedDecisions(events),
    }),
    original_json: JSON.stringify(turnSide(events)),
  };
}

/**
 * The calls of the last answer of a turn that max_steps ended before they started: no event names them, but the
 * turn's messages in the history do (that answer, then their "not executed" results), so the replayed model gives
 * them too and the replay ends as the turn did.
 */
function withUnrunCalls(recording: Recording, events: readonly RuntimeEvent[], messages: readonly ModelMessage[]): Recording {
  const last = recording.calls.at(-1);
  const end = events.findLast((e) => e.type === "turn.completed");
  if (!last || last.tool_calls.length > 0 || end?.type !== "turn.completed" || end.payload.stop_reason !== "max_steps") return recording;
  const answer = messages.findLast((m) => m.role === "assistant")?.content;
  const calls = Array.isArray(answer)
    ? answer.flatMap((p) => (p.type === "tool-call" ? [{ tool_call_id: p.toolCallId, name: p.toolName, args: p.input }] : []))
    : [];
  return calls.length > 0 ? { ...recording, calls: [...recording.calls.slice(0, -1), { ...last, tool_calls: calls }] } : recording;
}

/** The turn's automatic recall as recorded: a replay adds the same hits to its prompt and searches nothing. */
function recordedRecall(events: readonly RuntimeEvent[]): PayloadOf<"memory.recalled"> | null {
  const recalled = events.find((e) => e.type === "memory.recalled");
  return recalled?.type === "memory.recalled" ? recalled.payload : null;
}

/** Its session operations: what a replay of a turn starts from, and (in a replay session) the replay's outcome. */
export function replayCapability(s: SourceSession, replays: Pick<ReplayTurns, "result">) {
  return {
    operations: {
      replayTurn: ({ params }): ReplaySource => ({ ...recordedTurn(s.store, params.turn_id), ...sourceConfig(s) }),
      getReplay: () => {
        const result = replays.result();
        if (!result) throw ApiError.notFound("Replay", s.row().session_id);
        return { exec_id: s.row().session_id, ...result };
      },
    },
  } satisfies Capability;
}
