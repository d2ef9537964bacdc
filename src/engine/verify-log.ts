// The event-log invariants (docs/architecture.md), checkable on any prefix of a session's log: tests run it over every
// log they read, so a violation anywhere fails the suite.
import { type EventTable, ignored, onEvent } from "../protocol/event-table";
import type { RuntimeEvent, TerminalType } from "../protocol/events";

type Entry = Pick<RuntimeEvent, "type" | "event_id" | "sequence" | "turn_id" | "step_id" | "tool_call_id" | "action_id"> & { payload?: unknown };

interface Log {
  problems: string[];
  ended: Set<string>;
  openModel: Map<string, string>; // step_id -> turn_id
  openTools: Map<string, string>; // tool_call_id -> turn_id
  started: Set<string>;
  openActions: Map<string, string>; // action_id -> turn_id
  required: Set<string>;
  asked: Set<string>; // tool calls that needed a human decision
  late: Set<string>; // tool calls with a tool.result.late
}

/** A turn's terminal event: it is the only one, and leaves nothing of the turn open. */
function turnEnd(e: Entry & { type: TerminalType }, log: Log, at: string): void {
  const turn = e.turn_id;
  if (!turn) return;
  if (log.ended.has(turn)) log.problems.push(`${at}: turn ${turn} has a second terminal event`);
  log.ended.add(turn);
  const left = (open: Map<string, string>, what: string) => {
    for (const [id, t] of open) if (t === turn) log.problems.push(`${at}: turn ${turn} ended with ${what} ${id} still open`);
  };
  left(log.openModel, "model call");
  left(log.openTools, "tool call");
  left(log.openActions, "action");
}

const CHECK: EventTable<[Log, string], void, Entry> = {
  ...ignored(
    "turn.rolled_back",
    "session.created",
    "session.forked",
    "session.version_changed",
    "turn.submitted",
    "turn.started",
    "queue.changed",
    "run.status",
    "model.delta",
    "subagent.spawned",
    "subagent.completed",
    "subagent.failed",
  ),
  "model.requested": (e, log) => {
    log.openModel.set(e.step_id ?? "", e.turn_id ?? "");
  },
  "model.completed": (e, log) => {
    log.openModel.delete(e.step_id ?? "");
  },
  "tool.started": (e, log) => {
    log.openTools.set(e.tool_call_id ?? "", e.turn_id ?? "");
    log.started.add(e.tool_call_id ?? "");
  },
  "tool.result": (e, log, at) => {
    // A call refused by a human has a result but never started.
    if (!log.started.has(e.tool_call_id ?? "") && !log.asked.has(e.tool_call_id ?? "")) {
      log.problems.push(`${at}: tool.result for ${e.tool_call_id} without tool.started`);
    }
    log.openTools.delete(e.tool_call_id ?? "");
  },
  "action.required": (e, log) => {
    log.asked.add(e.tool_call_id ?? "");
    log.openActions.set(e.action_id ?? "", e.turn_id ?? "");
    log.required.add(e.action_id ?? "");
  },
  "action.approval.recorded": (e, log, at) => {
    if (!log.openActions.has(e.action_id ?? "")) log.problems.push(`${at}: action.approval.recorded for ${e.action_id}, which is not pending`);
  },
  "action.resolved": (e, log, at) => {
    if (!log.required.has(e.action_id ?? "")) log.problems.push(`${at}: action.resolved for ${e.action_id} without action.required`);
    log.openActions.delete(e.action_id ?? "");
  },
  // A call's outcome that arrived after its turn had ended: the call was closed in that turn, and it has one.
  "tool.result.late": (e, log, at) => {
    const { turn_id = "", tool_call_id = "" } = (e.payload ?? {}) as { turn_id?: string; tool_call_id?: string };
    if (e.turn_id) log.problems.push(`${at}: tool.result.late carries a turn_id in its envelope`);
    if (!log.ended.has(turn_id)) log.problems.push(`${at}: tool.result.late for ${tool_call_id} before its turn ${turn_id} ended`);
    if (!log.started.has(tool_call_id) || log.openTools.has(tool_call_id)) log.problems.push(`${at}: tool.result.late for ${tool_call_id}, not a closed call`);
    if (log.late.has(tool_call_id)) log.problems.push(`${at}: a second tool.result.late for ${tool_call_id}`);
    log.late.add(tool_call_id);
  },
  "turn.completed": turnEnd,
  "turn.failed": turnEnd,
  "turn.cancelled": turnEnd,
};

/** Returns every violated invariant, one sentence each; empty when the log is sound. */
export function verifyLog(events: readonly Entry[]): string[] {
  const log: Log = {
    problems: [],
    ended: new Set(),
    openModel: new Map(),
    openTools: new Map(),
    started: new Set(),
    openActions: new Map(),
    required: new Set(),
    asked: new Set(),
    late: new Set(),
  };
  const ids = new Set<string>();
  events.forEach((e, i) => {
    const at = `#${e.sequence} ${e.type}`;
    if (e.sequence !== i + 1) log.problems.push(`${at}: sequence ${e.sequence} where ${i + 1} was due (gap or duplicate)`);
    if (ids.has(e.event_id)) log.problems.push(`${at}: event_id ${e.event_id} repeats`);
    ids.add(e.event_id);
    if (e.turn_id && log.ended.has(e.turn_id)) log.problems.push(`${at}: event of turn ${e.turn_id} after its terminal event`);
    onEvent(CHECK, e, log, at);
  });
  return log.problems;
}
