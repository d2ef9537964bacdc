// The session object's timers: one row per kind of wake-up (the turn's heartbeat, a debounce window, index
// retries, deliveries, ...) with when it is due. The object's one alarm is set to the earliest of them.

export class TimerTable {
  constructor(private readonly sql: SqlStorage) {}

  /** Sets (or moves) when `kind` is due. */
  schedule(kind: string, dueAt: number): void {
    this.sql.exec("INSERT OR REPLACE INTO schedule (kind, due_at) VALUES (?, ?)", kind, dueAt);
  }

  /** When the entry `kind` is due; null when there is none. */
  dueAt(kind: string): number | null {
    return this.sql.exec<{ due_at: number }>("SELECT due_at FROM schedule WHERE kind = ?", kind).toArray()[0]?.due_at ?? null;
  }

  unschedule(kind: string): void {
    // Read first: a DELETE is a write even when it matches nothing, and outside a transaction it opens (and commits) one.
    if (this.sql.exec("SELECT 1 FROM schedule WHERE kind = ?", kind).toArray().length > 0) this.sql.exec("DELETE FROM schedule WHERE kind = ?", kind);
  }

  /** Removes and returns the entries due at `now`. */
  takeDue(now: number): string[] {
    const due = this.sql
      .exec<{ kind: string }>("SELECT kind FROM schedule WHERE due_at <= ?", now)
      .toArray()
      .map((r) => r.kind);
    this.sql.exec("DELETE FROM schedule WHERE due_at <= ?", now);
    return due;
  }

  /** The earliest due time of any entry; null when there is none. */
  earliest(): number | null {
    return this.sql.exec<{ d: number | null }>("SELECT min(due_at) AS d FROM schedule").one().d;
  }
}
