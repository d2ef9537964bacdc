// The event-log invariants (issue 6), checkable on any prefix of a session's log: tests run it over every
// log they read, so a violation anywhere fails the suite.
import { isTerminalTurnEvent, type RuntimeEvent } from "../protocol/events";

/** Returns every violated invariant, one sentence each; empty when the log is sound. */
export function verifyLog(
  events: readonly Pick<RuntimeEvent, "type" | "event_id" | "sequence" | "turn_id" | "step_id" | "tool_call_id" | "action_id">[],
): string[] {
  const problems: string[] = [];
  const ids = new Set<string>();
  const ended = new Set<string>();
  const openModel = new Map<string, string>(); // step_id -> turn_id
  const openTools = new Map<string, string>(); // tool_call_id -> turn_id
  const started = new Set<string>();
  const openActions = new Map<string, string>(); // action_id -> turn_id
  const required = new Set<string>();
  const asked = new Set<string>(); // tool calls that needed a human decision
  events.forEach((e, i) => {
    const at = `#${e.sequence} ${e.type}`;
    if (e.sequence !== i + 1) problems.push(`${at}: sequence ${e.sequence} where ${i + 1} was due (gap or duplicate)`);
    if (ids.has(e.event_id)) problems.push(`${at}: event_id ${e.event_id} repeats`);
    ids.add(e.event_id);
    const turn = e.turn_id;
    if (turn && ended.has(turn)) problems.push(`${at}: event of turn ${turn} after its terminal event`);
    switch (e.type) {
      case "model.requested":
        openModel.set(e.step_id ?? "", turn ?? "");
        break;
      case "model.completed":
        openModel.delete(e.step_id ?? "");
        break;
      case "tool.started":
        openTools.set(e.tool_call_id ?? "", turn ?? "");
        started.add(e.tool_call_id ?? "");
        break;
      case "tool.result":
        // A call refused by a human has a result but never started.
        if (!started.has(e.tool_call_id ?? "") && !asked.has(e.tool_call_id ?? "")) {
          problems.push(`${at}: tool.result for ${e.tool_call_id} without tool.started`);
        }
        openTools.delete(e.tool_call_id ?? "");
        break;
      case "action.required":
        asked.add(e.tool_call_id ?? "");
        openActions.set(e.action_id ?? "", turn ?? "");
        required.add(e.action_id ?? "");
        break;
      case "action.resolved":
        if (!required.has(e.action_id ?? "")) problems.push(`${at}: action.resolved for ${e.action_id} without action.required`);
        openActions.delete(e.action_id ?? "");
        break;
    }
    if (isTerminalTurnEvent(e.type) && turn) {
      if (ended.has(turn)) problems.push(`${at}: turn ${turn} has a second terminal event`);
      ended.add(turn);
      const left = (open: Map<string, string>, what: string) => {
        for (const [id, t] of open) if (t === turn) problems.push(`${at}: turn ${turn} ended with ${what} ${id} still open`);
      };
      left(openModel, "model call");
      left(openTools, "tool call");
      left(openActions, "action");
    }
  });
  return problems;
}
