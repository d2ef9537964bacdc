// The schedules table (scheduled turns, schedule-table.ts): its rows and the named queries on them. Schedules
// is its one writer; its slice of the session reaches the table only through these.

export type ScheduleRow = { schedule_id: string; input: string; spec: string; idempotency_key: string | null; next_run_at: number; created_at: number };

export class ScheduleRows {
  constructor(private readonly sql: SqlStorage) {}

  byId(scheduleId: string): ScheduleRow | null {
    return this.rows("WHERE schedule_id = ?", scheduleId)[0] ?? null;
  }

  byIdempotencyKey(key: string): ScheduleRow | null {
    return this.rows("WHERE idempotency_key = ?", key)[0] ?? null;
  }

  /** Every schedule, the next to run first. */
  all(): ScheduleRow[] {
    return this.rows("ORDER BY next_run_at, schedule_id");
  }

  /** The schedules due at `now`, the earliest first. */
  due(now: number): ScheduleRow[] {
    return this.rows("WHERE next_run_at <= ? ORDER BY next_run_at", now);
  }

  count(): number {
    return this.sql.exec<{ n: number }>("SELECT count(*) AS n FROM schedules").one().n;
  }

  /** When the earliest schedule runs next; null when there is none. */
  earliest(): number | null {
    return this.sql.exec<{ d: number | null }>("SELECT min(next_run_at) AS d FROM schedules").one().d;
  }

  insert(row: ScheduleRow): void {
    this.sql.exec(
      "INSERT INTO schedules (schedule_id, input, spec, idempotency_key, next_run_at, created_at) VALUES (?, ?, ?, ?, ?, ?)",
      row.schedule_id,
      row.input,
      row.spec,
      row.idempotency_key,
      row.next_run_at,
      row.created_at,
    );
  }

  delete(scheduleId: string): void {
    this.sql.exec("DELETE FROM schedules WHERE schedule_id = ?", scheduleId);
  }

  setNextRun(scheduleId: string, nextRunAt: number): void {
    this.sql.exec("UPDATE schedules SET next_run_at = ? WHERE schedule_id = ?", nextRunAt, scheduleId);
  }

  private rows(where: string, ...args: (string | number)[]): ScheduleRow[] {
    return this.sql.exec<ScheduleRow>(`SELECT * FROM schedules ${where}`, ...args).toArray();
  }
}
