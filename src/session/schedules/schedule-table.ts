// Scheduled turns: rows of the schedules table, each due at `next_run_at`. The object's one alarm wakes for
// the earliest through the deadline entry SCHEDULES_DUE; a due schedule submits its turn through the queue
// like any client would (idempotent per run, so an alarm retried after a crash submits it once), then
// records schedule.fired and moves to its next run, or is removed when it was a one-off.

import { randomId } from "../../ids";
import { ApiError } from "../../protocol/errors";
import type { PayloadOf } from "../../protocol/events";
import type { CreateScheduleBody, Schedule } from "../../protocol/schedule-types";
import { parseTime, TIMESTAMP_WITH_OFFSET } from "../../protocol/strict-values";
import type { Capability } from "../capability";
import type { LogHost, SqlHost, TimerHost } from "../hosts";
import type { TurnQueue } from "../queue/turn-queue";
import { type ScheduleRow, ScheduleRows } from "./schedule-rows";
import { nextRun, parseSchedule, type ScheduleSpec } from "./schedule-times";

/** The deadline entry (in the object's schedule table) for the earliest scheduled turn. */
export const SCHEDULES_DUE = "schedules";
/** Schedules one session may hold. */
export const MAX_SCHEDULES = 100;

/** The slice of the session schedules works on. */
export type SchedulesSession = LogHost & TimerHost & SqlHost;

export class Schedules {
  constructor(
    private readonly s: SchedulesSession,
    private readonly queue: Pick<TurnQueue, "checkSize" | "redacted" | "submit">,
  ) {
    this.rows = new ScheduleRows(s.sql);
  }
  /** The schedules table, written only here. */
  private readonly rows: ScheduleRows;

  create(body: CreateScheduleBody): Schedule & { duplicate?: boolean } {
    const now = Date.now();
    // Stored redacted, like a submitted turn's input; the verdicts are logged when it is submitted.
    body = { ...body, input: this.queue.redacted(body.input).input };
    if (body.idempotency_key) {
      const prior = this.rows.byIdempotencyKey(body.idempotency_key);
      if (prior) {
        if (prior.input !== body.input || !sameSpec(JSON.parse(prior.spec), body)) {
          throw new ApiError("conflict", "idempotency_key was already used with a different body", { schedule_id: prior.schedule_id });
        }
        return { ...view(prior), duplicate: true };
      }
    }
    this.queue.checkSize("input", body.input);
    const { spec, first } = parseSchedule(body, now);
    if (this.rows.count() >= MAX_SCHEDULES) throw new ApiError("conflict", `The session already has ${MAX_SCHEDULES} schedules; delete one first`);
    const row: ScheduleRow = {
      schedule_id: randomId("sch"),
      input: body.input,
      spec: JSON.stringify(spec),
      idempotency_key: body.idempotency_key ?? null,
      next_run_at: first,
      created_at: now,
    };
    this.s.commit([{ type: "schedule.created", payload: { schedule_id: row.schedule_id, input: row.input, ...spec, next_run_at: first } }], () => {
      this.rows.insert(row);
      this.arm();
    });
    this.s.armAlarm();
    return view(row);
  }

  list(): Schedule[] {
    return this.rows.all().map(view);
  }

  delete(scheduleId: string): { deleted: true } {
    if (!this.rows.byId(scheduleId)) throw ApiError.notFound("Schedule", scheduleId);
    this.s.commit([{ type: "schedule.deleted", payload: { schedule_id: scheduleId } }], () => {
      this.rows.delete(scheduleId);
      this.arm();
    });
    this.s.armAlarm();
    return { deleted: true };
  }

  /** From the alarm: submits the turn of every schedule due at `now`, each once however many runs it missed. */
  fireDue(now: number): void {
    for (const row of this.rows.due(now)) this.fire(row, now);
    this.s.transact(() => this.arm());
  }

  /** Points the deadline entry at the earliest run. */
  arm(): void {
    const next = this.rows.earliest();
    if (next === null) this.s.store.timers.unschedule(SCHEDULES_DUE);
    else this.s.store.timers.schedule(SCHEDULES_DUE, next);
  }

  private fire(row: ScheduleRow, now: number): void {
    const payload: PayloadOf<"schedule.fired"> = { schedule_id: row.schedule_id, due_at: row.next_run_at, turn_id: null, next_run_at: null };
    try {
      // One idempotency key per run: an alarm retried after a crash finds the turn it already submitted.
      const key = `schedule:${row.schedule_id}@${row.next_run_at}`;
      payload.turn_id = this.queue.submit({ input: row.input, idempotency_key: key, source: { kind: "schedule", schedule_id: row.schedule_id } }).turn_id;
    } catch (err) {
      const e = err instanceof ApiError ? err : new ApiError("internal_error", err instanceof Error ? err.message : String(err));
      payload.error = { code: e.code, message: e.message };
    }
    payload.next_run_at = nextRun(JSON.parse(row.spec) as ScheduleSpec, row.next_run_at, now);
    this.s.commit([{ type: "schedule.fired", payload }], () => {
      if (payload.next_run_at === null) this.rows.delete(row.schedule_id);
      else this.rows.setNextRun(row.schedule_id, payload.next_run_at);
    });
  }

  /** Its session operations and its alarm kind (the earliest schedule due). */
  capability() {
    return {
      operations: {
        createSchedule: ({ body }) => this.create(body),
        listSchedules: () => ({ schedules: this.list() }),
        deleteSchedule: ({ params }) => this.delete(params.schedule_id),
      },
      alarms: [{ kind: SCHEDULES_DUE, fire: (now) => this.fireDue(now) }],
      // The alarm wakes for the earliest schedule even if a crash lost its timer.
      started: () => this.s.transact(() => this.arm()),
    } satisfies Capability;
  }
}

function view(row: ScheduleRow): Schedule {
  const spec = JSON.parse(row.spec) as ScheduleSpec;
  return {
    schedule_id: row.schedule_id,
    input: row.input,
    ...spec,
    idempotency_key: row.idempotency_key,
    next_run_at: row.next_run_at,
    created_at: row.created_at,
  };
}

/** Whether a repeated request names the same times as the stored spec. */
function sameSpec(spec: ScheduleSpec, body: CreateScheduleBody): boolean {
  if ("at" in spec) {
    const at = body.at === undefined ? null : parseTime(body.at, TIMESTAMP_WITH_OFFSET);
    return at?.ok === true && at.value === spec.at;
  }
  if ("every_s" in spec) return body.every_s === spec.every_s;
  return body.cron === spec.cron && (body.timezone ?? "UTC") === spec.timezone;
}
