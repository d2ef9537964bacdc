// One response of the AI SDK UI message stream for a turn: the start, the chunks TurnProjection (ui-stream.ts)
// makes of the turn's events, and its end (the turn's end, or a pause for approvals, which the client
// answers with a new POST).
import type { RuntimeEvent } from "../protocol/events";
import { type ChatMessageMetadata, TurnProjection, type UiChunk } from "./ui-stream";

export interface TurnStreamOptions {
  turnId: string;
  /** The session's events from before the turn's first one, in order, then live. */
  events: AsyncIterable<RuntimeEvent>;
  metadata: ChatMessageMetadata;
  /**
   * The request answered these approvals: the client has the message up to the pause before them, so
   * what precedes it is not sent again.
   */
  decided?: ReadonlySet<string>;
  /** Whether the turn still waits for all of `actionIds` and nothing follows `sequence` in the log yet. */
  stillWaiting(actionIds: string[], sequence: number): Promise<boolean>;
}

/**
 * One response of the UI message stream for a turn: `start`, its chunks, and the end of the turn or a pause
 * for approvals: the client answers those with a new request, which continues the same message.
 */
export async function* turnStream(o: TurnStreamOptions): AsyncGenerator<UiChunk> {
  yield { type: "start", messageId: o.turnId, messageMetadata: o.metadata };
  const projection = new TurnProjection(o.turnId);
  // Catching up to the pause the client answered: it has every chunk up to the last pause before the
  // decisions; what came after that pause is sent once the first decision shows.
  let held: UiChunk[] | null = o.decided ? [] : null;
  for await (const e of o.events) {
    let chunks = projection.push(e);
    const paused = projection.pausedOn;
    if (held) {
      const ours = e.type === "action.resolved" && e.turn_id === o.turnId && o.decided?.has(e.action_id!);
      if (!ours) {
        held = paused ? [] : [...held, ...chunks];
        continue;
      }
      chunks = [...held, ...chunks];
      held = null;
    }
    yield* chunks;
    if (projection.ended) return;
    // A pause that lasts ends the response; the step stays open in the log, which the next step closes.
    if (paused && (await o.stillWaiting(paused, e.sequence))) {
      yield { type: "finish-step" };
      yield { type: "finish", finishReason: "tool-calls" };
      return;
    }
  }
}
