// The sessions made from a session, its forks and replays (docs/guides/fork-and-replay.md): each registered with its source
// before it is created, so that erasing the source finds every one that may exist, and erases it too.

export type DerivedKind = "fork" | "replay";

export class DerivedSessions {
  constructor(private readonly sql: SqlStorage) {}

  add(sessionId: string, kind: DerivedKind, now: number): void {
    this.sql.exec("INSERT OR IGNORE INTO derived_sessions (session_id, kind, created_at) VALUES (?, ?, ?)", sessionId, kind, now);
  }

  ids(): string[] {
    return this.sql
      .exec<{ session_id: string }>("SELECT session_id FROM derived_sessions ORDER BY created_at")
      .toArray()
      .map((r) => r.session_id);
  }
}
