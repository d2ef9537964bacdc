// The queries the chat's reads make of the log beyond reading it in order (log-reads.ts, views/chat-page.ts): where a
// turn's events start, the newest events that act across turns, read backwards, and the version a turn ran. They only read; the events
// table is the store's to write.
export class ConversationReads {
  constructor(private readonly sql: SqlStorage) {}

  /** The sequence of the turn's first event (null: the log has none of it). */
  firstSequenceOf(turnId: string): number | null {
    return this.sql.exec<{ s: number | null }>("SELECT min(sequence) AS s FROM events WHERE turn_id = ?", turnId).one().s;
  }

  /**
   * The bodies of the newest `count` events that act across turns, newest first: submissions and rollbacks, and
   * the starts and cancellations that give turns their place in the conversation (conversation-order.ts).
   */
  newestCrossTurnEvents(count: number): { type: string; body: string }[] {
    return this.sql
      .exec<{ type: string; body: string }>(
        "SELECT type, body FROM events WHERE type IN ('turn.submitted', 'turn.rolled_back', 'turn.started', 'turn.cancelled') ORDER BY sequence DESC LIMIT ?",
        count,
      )
      .toArray();
  }

  /**
   * The agent and version the session ran at `sequence`: the last session.created or session.version_changed
   * up to it (session-level events: the turn index's NULL range). Version null: an inline agent.
   */
  versionAt(sequence: number): { agent: string; version: number | null } | null {
    const row = this.sql
      .exec<{ type: string; body: string }>(
        "SELECT type, body FROM events WHERE turn_id IS NULL AND sequence <= ? AND type IN ('session.created', 'session.version_changed') ORDER BY sequence DESC LIMIT 1",
        sequence,
      )
      .toArray()[0];
    if (!row) return null;
    const { payload } = JSON.parse(row.body) as { payload: { agent: string; version?: number; to_version?: number } };
    return { agent: payload.agent, version: payload.to_version ?? payload.version ?? null };
  }
}
