// How a turn ended, read from its terminal event in one place (the read model, the MCP route, orchestration
// steps and the client all use it), and one way to follow a turn to its end over a stream of events.
import type { EventOf, PayloadOf, RuntimeEvent, TerminalType } from "../protocol/events";
import { isTerminalTurnEvent } from "../protocol/events";

export type TerminalEvent = EventOf<TerminalType>;

export interface TurnOutcome {
  status: "completed" | "failed" | "cancelled";
  output: unknown;
  stop_reason: string | null;
  error: PayloadOf<"turn.failed">["error"] | null;
  /** Why it was cancelled. */
  reason: string | null;
}

/** A terminal event, or just its type and payload (a draft). */
export type TerminalLike = { [T in TerminalType]: { type: T; payload: PayloadOf<T> } }[TerminalType];

export function turnOutcome(end: TerminalLike): TurnOutcome {
  switch (end.type) {
    case "turn.completed":
      return { status: "completed", output: end.payload.output ?? null, stop_reason: end.payload.stop_reason, error: null, reason: null };
    case "turn.failed":
      return { status: "failed", output: end.payload.output ?? null, stop_reason: null, error: end.payload.error, reason: null };
    case "turn.cancelled":
      return { status: "cancelled", output: null, stop_reason: null, error: null, reason: end.payload.reason };
  }
}

/** The terminal event of `turnId` in `events` (a replay then live stream); null if the stream ends first. */
export async function followTurn(
  events: AsyncIterable<RuntimeEvent>,
  turnId: string,
  /** Sees every event of the turn, the terminal one included (awaited: a slow observer slows the reading, not the turn). */
  onEvent?: (e: RuntimeEvent) => void | Promise<void>,
): Promise<TerminalEvent | null> {
  for await (const e of events) {
    if (e.turn_id !== turnId) continue;
    await onEvent?.(e);
    if (isTerminalTurnEvent(e.type)) return e as TerminalEvent;
  }
  return null; // the stream ended first: the caller says why
}
