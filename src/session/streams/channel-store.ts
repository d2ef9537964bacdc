// Remote channels: a client's named cursor, acknowledged over its WebSocket, so it resumes where it left off.

export type ChannelRow = {
  channel_id: string;
  acked_sequence: number;
  updated_at: number;
};

export class ChannelStore {
  constructor(private readonly sql: SqlStorage) {}

  list(): ChannelRow[] {
    return this.sql.exec<ChannelRow>("SELECT * FROM channels ORDER BY channel_id").toArray();
  }

  cursor(channelId: string): number | null {
    const row = this.sql.exec<{ acked_sequence: number }>("SELECT acked_sequence FROM channels WHERE channel_id = ?", channelId).toArray()[0];
    return row ? row.acked_sequence : null;
  }

  /** Records an ack; the cursor never moves backwards. */
  ack(channelId: string, sequence: number, now: number): void {
    this.sql.exec(
      `INSERT INTO channels (channel_id, acked_sequence, updated_at) VALUES (?, ?, ?)
       ON CONFLICT (channel_id) DO UPDATE SET acked_sequence = max(acked_sequence, excluded.acked_sequence), updated_at = excluded.updated_at`,
      channelId,
      sequence,
      now,
    );
  }
}
