// The session's tables of turns (with the queue order) and approvals are projections of its events: each
// event type that touches them has one small function here, run inside `commit` in the same transaction as
// the append. Nothing else writes these tables, so they can always be rebuilt from the log alone.
import type { EventOf, EventType, RuntimeEvent } from "../protocol/events";
import type { TurnRow } from "./session-store";

/** The schedule entry of an approval's deadline (the alarm decides it as timed out). */
export const APPROVAL_DEADLINE = "approval:";

type Projections = { [T in EventType]?: (sql: SqlStorage, e: EventOf<T>) => void };

const setStatus =
  (status: TurnRow["status"]) =>
  (sql: SqlStorage, e: RuntimeEvent): void => {
    sql.exec("UPDATE turns SET status = ? WHERE turn_id = ?", status, e.turn_id);
  };

const PROJECTIONS: Projections = {
  "turn.submitted": (sql, e) => {
    const p = e.payload;
    sql.exec(
      `INSERT INTO turns (turn_id, position, status, input, idempotency_key, created_at, trace_id, trace_parent)
       VALUES (?, (SELECT coalesce(max(position), 0) + 1 FROM turns), 'queued', ?, ?, ?, ?, ?)`,
      e.turn_id,
      p.input,
      p.idempotency_key ?? null,
      e.timestamp,
      e.trace_id ?? null,
      e.parent_span_id ?? null,
    );
  },
  // The queue's order is the event's: its turns move behind every other turn, in that order.
  "queue.changed": (sql, e) => {
    const { queued } = e.payload;
    for (const turnId of queued) sql.exec("UPDATE turns SET position = (SELECT max(position) + 1 FROM turns) WHERE turn_id = ?", turnId);
  },
  "turn.started": setStatus("running"),
  "turn.completed": setStatus("completed"),
  "turn.failed": setStatus("failed"),
  "turn.cancelled": setStatus("cancelled"),
  "action.required": (sql, e) => {
    const p = e.payload;
    sql.exec(
      `INSERT INTO actions (action_id, turn_id, tool_call_id, tool_name, status, expires_at, parent_id, depth, subagent_id)
       VALUES (?, ?, ?, ?, 'pending', ?, ?, ?, ?)`,
      e.action_id,
      e.turn_id,
      e.tool_call_id,
      p.tool_name,
      p.expires_at,
      e.parent_id ?? null,
      e.depth ?? 0,
      e.subagent_id ?? null,
    );
    sql.exec("INSERT OR REPLACE INTO schedule (kind, due_at) VALUES (?, ?)", `${APPROVAL_DEADLINE}${e.action_id}`, p.expires_at);
  },
  "action.resolved": (sql, e) => {
    const p = e.payload;
    sql.exec(
      "UPDATE actions SET status = ?, decided_by = ?, decided_at = ?, reason = ? WHERE action_id = ?",
      p.decision,
      p.by,
      e.timestamp,
      p.reason ?? null,
      e.action_id,
    );
    sql.exec("DELETE FROM schedule WHERE kind = ?", `${APPROVAL_DEADLINE}${e.action_id}`);
  },
};

/** Applies one appended event to the tables it touches. */
export function project(sql: SqlStorage, e: RuntimeEvent): void {
  // The table is keyed by type, so each function gets the event of its own type.
  (PROJECTIONS[e.type] as ((sql: SqlStorage, e: RuntimeEvent) => void) | undefined)?.(sql, e);
}
