// The remote_cancels table (remote-cancels.ts is its one writer): a CancelTask owed to a remote A2A task whose
// question a turn's end dropped, written in the end's own transaction and deleted once the remote agent answered.

export const REMOTE_CANCEL_TABLES = {
  name: "remote_cancels",
  steps: [
    `CREATE TABLE remote_cancels (
      turn_id TEXT NOT NULL,
      tool_call_id TEXT NOT NULL,
      tool TEXT NOT NULL,
      task_id TEXT NOT NULL,
      agent TEXT,
      version INTEGER,
      how TEXT NOT NULL,
      attempts INTEGER NOT NULL DEFAULT 0,
      next_at INTEGER NOT NULL,
      last_error TEXT,
      PRIMARY KEY (turn_id, tool_call_id)
    )`,
  ],
};

export interface CancelRow {
  turn_id: string;
  tool_call_id: string;
  /** The A2A tool's name: its entry in the asking agent's a2a_agents. */
  tool: string;
  task_id: string;
  /** The agent whose tool asked, and its version (null: the session's agent). */
  agent: string | null;
  version: number | null;
  /** How the turn ended: what the messages say. */
  how: "cancelled" | "interrupted";
  /** CancelTask requests sent so far. */
  attempts: number;
  next_at: number;
  last_error: string | null;
}

export const rowKey = (r: Pick<CancelRow, "turn_id" | "tool_call_id">) => `${r.turn_id}/${r.tool_call_id}`;

export class CancelRows {
  constructor(private readonly sql: SqlStorage) {}

  insert(row: CancelRow): void {
    const keys = Object.keys(row);
    this.sql.exec(`INSERT OR REPLACE INTO remote_cancels (${keys.join(", ")}) VALUES (${keys.map(() => "?").join(", ")})`, ...Object.values(row));
  }

  retried(row: CancelRow, attempts: number, nextAt: number, error: string): void {
    this.sql.exec(
      "UPDATE remote_cancels SET attempts = ?, next_at = ?, last_error = ? WHERE turn_id = ? AND tool_call_id = ?",
      attempts,
      nextAt,
      error,
      row.turn_id,
      row.tool_call_id,
    );
  }

  delete(row: CancelRow): void {
    this.sql.exec("DELETE FROM remote_cancels WHERE turn_id = ? AND tool_call_id = ?", row.turn_id, row.tool_call_id);
  }

  /** Every owed cancel, the oldest first; none in a session that never owed one costs one read. */
  all(): CancelRow[] {
    return this.sql.exec<CancelRow & Record<string, SqlStorageValue>>("SELECT * FROM remote_cancels ORDER BY next_at").toArray();
  }
}
