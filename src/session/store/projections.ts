// The session's tables of turns (with the queue order), approvals and usage per day are projections of its events: each
// event type that touches them has one small function here, run inside `commit` in the same transaction as
// the append. Nothing else writes these tables, so they can always be rebuilt from the log alone.
import { type EventTable, ignored, onEvent } from "../../protocol/event-table";
import type { RuntimeEvent } from "../../protocol/events";
import { USAGE_COLUMNS } from "../../protocol/session-list";
import type { TurnRow } from "./session-store";

/** The schedule entry of an approval's deadline (the alarm decides it as timed out). */
export const APPROVAL_DEADLINE = "approval:";
/** The schedule entry of an action's next reminder. */
export const ACTION_REMINDER = "reminder:";

const setStatus =
  (status: TurnRow["status"]) =>
  (e: RuntimeEvent, sql: SqlStorage): void => {
    sql.exec("UPDATE turns SET status = ? WHERE turn_id = ?", status, e.turn_id);
  };

/** What an event adds to the usage row of its UTC day (the session's usage_days table). */
type UsageColumn = (typeof USAGE_COLUMNS)[number];
type Usage = Partial<Record<UsageColumn, number>>;
/** One statement whatever the columns an event touches (the others add 0): prepared once per object. */
const ADD_USAGE = `INSERT INTO usage_days (day, ${USAGE_COLUMNS.join(", ")}) VALUES (?, ${USAGE_COLUMNS.map(() => "?").join(", ")})
   ON CONFLICT (day) DO UPDATE SET ${USAGE_COLUMNS.map((c) => `${c} = ${c} + excluded.${c}`).join(", ")}`;

const USAGE: EventTable<[], Usage> = {
  ...ignored(
    "action.approval.recorded",
    "turn.rolled_back",
    "session.created",
    "session.forked",
    "session.version_changed",
    "turn.submitted",
    "turn.started",
    "queue.changed",
    "run.status",
    "model.requested",
    "model.delta",
    "model.completed",
    "tool.result",
    "tool.result.late",
    "action.required",
    "action.resolved",
    "subagent.spawned",
    "subagent.completed",
    "subagent.failed",
  ),
  "turn.completed": () => ({ turns: 1 }),
  "turn.failed": () => ({ turns: 1, failures: 1 }),
  "turn.cancelled": () => ({ turns: 1 }),
  // Every model call of the turn's tree (sub-agents too) records its cost once.
  "cost.recorded": ({ payload: { usage, cost_usd } }) => ({
    model_calls: 1,
    input_tokens: usage.input_tokens,
    cached_input_tokens: usage.cached_input_tokens ?? 0,
    output_tokens: usage.output_tokens,
    cost_usd: cost_usd ?? 0,
    unpriced_model_calls: cost_usd === null ? 1 : 0,
  }),
  "tool.started": () => ({ tool_calls: 1 }),
  // A call a restart cut: its reservation, an estimate, since its bill was never seen (lost-calls.ts).
  "usage.lost": ({ payload: { usage, cost_usd } }) => ({
    model_calls: 1,
    input_tokens: usage.input_tokens,
    output_tokens: usage.output_tokens,
    cost_usd: cost_usd ?? 0,
    unpriced_model_calls: cost_usd === null ? 1 : 0,
  }),
};

const PROJECTIONS: EventTable<[SqlStorage], void> = {
  ...ignored(
    "turn.rolled_back",
    "session.created",
    "session.forked",
    "session.version_changed",
    "run.status",
    "model.requested",
    "model.delta",
    "model.completed",
    "tool.started",
    "tool.result",
    "tool.result.late",
    "subagent.spawned",
    "subagent.completed",
    "subagent.failed",
  ),
  "turn.submitted": (e, sql) => {
    const p = e.payload;
    sql.exec(
      `INSERT INTO turns (turn_id, position, status, input, idempotency_key, created_at, trace_id, trace_parent, files, on_busy, debounce_ms)
       VALUES (?, (SELECT coalesce(max(position), 0) + 1 FROM turns), 'queued', ?, ?, ?, ?, ?, ?, ?, ?)`,
      e.turn_id,
      p.input,
      p.idempotency_key ?? null,
      e.timestamp,
      e.trace_id ?? null,
      e.parent_span_id ?? null,
      p.files ? JSON.stringify(p.files) : null,
      p.on_busy ?? null,
      p.debounce_ms ?? null,
    );
  },
  // The queue's order is the event's: its turns move behind every other turn, in that order.
  "queue.changed": (e, sql) => {
    const { queued } = e.payload;
    for (const turnId of queued) sql.exec("UPDATE turns SET position = (SELECT max(position) + 1 FROM turns) WHERE turn_id = ?", turnId);
  },
  "turn.started": setStatus("running"),
  "turn.completed": setStatus("completed"),
  "turn.failed": setStatus("failed"),
  "turn.cancelled": setStatus("cancelled"),
  "action.required": (e, sql) => {
    const p = e.payload;
    sql.exec(
      `INSERT INTO actions (action_id, turn_id, tool_call_id, tool_name, status, expires_at, parent_id, depth, subagent_id, kind, response_schema, args_schema, remind_after_ms, approvals_required, on_timeout)
       VALUES (?, ?, ?, ?, 'pending', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      e.action_id,
      e.turn_id,
      e.tool_call_id,
      p.tool_name,
      p.expires_at,
      e.parent_id ?? null,
      e.depth ?? 0,
      e.subagent_id ?? null,
      p.kind,
      p.response_schema ? JSON.stringify(p.response_schema) : null,
      p.args_schema ? JSON.stringify(p.args_schema) : null,
      p.remind_after_ms ?? null,
      p.approvals_required ?? 1,
      p.on_timeout ?? "reject",
    );
    const remindAt = p.remind_after_ms ? e.timestamp + p.remind_after_ms : Number.POSITIVE_INFINITY;
    if (remindAt < p.expires_at) sql.exec("INSERT OR REPLACE INTO schedule (kind, due_at) VALUES (?, ?)", `${ACTION_REMINDER}${e.action_id}`, remindAt);
    sql.exec("INSERT OR REPLACE INTO schedule (kind, due_at) VALUES (?, ?)", `${APPROVAL_DEADLINE}${e.action_id}`, p.expires_at);
  },
  "action.resolved": (e, sql) => {
    const p = e.payload;
    sql.exec(
      "UPDATE actions SET status = ?, decided_by = ?, decided_at = ?, reason = ?, response = ?, args = ? WHERE action_id = ?",
      p.decision,
      p.by,
      e.timestamp,
      p.reason ?? null,
      p.response === undefined ? null : JSON.stringify(p.response),
      p.args === undefined ? null : JSON.stringify(p.args),
      e.action_id,
    );
    sql.exec("DELETE FROM schedule WHERE kind IN (?, ?)", `${APPROVAL_DEADLINE}${e.action_id}`, `${ACTION_REMINDER}${e.action_id}`);
  },
  "action.approval.recorded": (e, sql) => {
    sql.exec("UPDATE actions SET approved_by = json_insert(coalesce(approved_by, '[]'), '$[#]', ?) WHERE action_id = ?", e.payload.by, e.action_id);
  },
  "action.reminder": (e, sql) => {
    const next = e.payload.next_at;
    if (next === null) sql.exec("DELETE FROM schedule WHERE kind = ?", `${ACTION_REMINDER}${e.action_id}`);
    else sql.exec("INSERT OR REPLACE INTO schedule (kind, due_at) VALUES (?, ?)", `${ACTION_REMINDER}${e.action_id}`, next);
  },
};

/** Applies the events of one commit to the tables they touch; usage is added up per day, one write a day. */
export function project(sql: SqlStorage, events: RuntimeEvent[]): void {
  const days = new Map<string, Usage>();
  let stamp = Number.NaN;
  let day = "";
  for (const e of events) {
    onEvent(PROJECTIONS, e, sql);
    const usage = onEvent(USAGE, e);
    if (!usage) continue;
    // The events of one commit share their timestamp.
    if (e.timestamp !== stamp) {
      stamp = e.timestamp;
      day = new Date(stamp).toISOString().slice(0, 10);
    }
    const sum = days.get(day) ?? {};
    for (const column in usage) sum[column as UsageColumn] = (sum[column as UsageColumn] ?? 0) + usage[column as UsageColumn]!;
    days.set(day, sum);
  }
  for (const [d, usage] of days) sql.exec(ADD_USAGE, d, ...USAGE_COLUMNS.map((c) => usage[c] ?? 0));
}
