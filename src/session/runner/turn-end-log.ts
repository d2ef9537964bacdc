// The structured log line of a turn's end (src/log.ts): ids, the outcome and its numbers, never a payload.
import type { TurnState } from "../../engine/turn-state";
import { logLine } from "../../log";
import type { TerminalDraft } from "../../protocol/events";
import { turnOutcome } from "../../views/turn-outcome";
import type { RunnerSession } from "./turn-session";

export function logTurnEnd(s: Pick<RunnerSession, "agent" | "bindings" | "row">, event: TerminalDraft, state: TurnState): void {
  const outcome = turnOutcome(event);
  void logLine(s.bindings(), {
    log: "turn",
    session_id: s.row().session_id,
    turn_id: state.turn_id,
    agent: s.agent().name,
    status: outcome.status,
    stop_reason: outcome.stop_reason ?? outcome.error?.code ?? null,
    duration_ms: Date.now() - state.started_at,
    input_tokens: state.usage.input_tokens,
    output_tokens: state.usage.output_tokens,
    cost_usd: state.cost_usd ?? null,
  });
}
