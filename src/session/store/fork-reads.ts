// The queries a fork or a replay of the session makes to find its conversation at one sequence of the log
// (fork-history.ts, fork-paused.ts): a few indexed reads of the events and the stored history, never event by
// event. They only read; the events and messages tables are the store's to write.
import type { ModelMessage } from "ai";

export class ForkReads {
  constructor(private readonly sql: SqlStorage) {}

  /** Compactions of the session's own history (not a sub-agent's) after sequence `at`. */
  compactionsAfter(at: number): number {
    return this.sql
      .exec<{ n: number }>(
        "SELECT count(*) AS n FROM events WHERE type = 'context.compaction.completed' AND sequence > ? AND coalesce(json_extract(body, '$.depth'), 0) = 0",
        at,
      )
      .one().n;
  }

  /** The turns that had ended by sequence `at`. */
  turnsEndedBy(at: number): string[] {
    return this.sql
      .exec<{ turn_id: string }>(
        "SELECT turn_id FROM events WHERE sequence <= ? AND type IN ('turn.completed', 'turn.failed', 'turn.cancelled') AND turn_id IS NOT NULL",
        at,
      )
      .toArray()
      .map((r) => r.turn_id);
  }

  /** The history's messages whose turn (or seed) is in `keep`, in order. */
  historyOf(keep: Set<string>): ModelMessage[] {
    return this.sql
      .exec<{ turn_id: string; message: string }>("SELECT turn_id, message FROM messages ORDER BY id")
      .toArray()
      .filter((r) => keep.has(r.turn_id))
      .map((r) => JSON.parse(r.message) as ModelMessage);
  }

  /** The last turn started by sequence `at`. */
  lastStartedBy(at: number): string | null {
    return (
      this.sql
        .exec<{ turn_id: string }>("SELECT turn_id FROM events WHERE sequence <= ? AND type = 'turn.started' ORDER BY sequence DESC LIMIT 1", at)
        .toArray()[0]?.turn_id ?? null
    );
  }

  /** One turn's messages in the history (none until it ended). */
  turnHistory(turnId: string): ModelMessage[] {
    return this.sql
      .exec<{ message: string }>("SELECT message FROM messages WHERE turn_id = ? ORDER BY id", turnId)
      .toArray()
      .map((r) => JSON.parse(r.message) as ModelMessage);
  }

  /** The turn's own executor model calls (not a sub-agent's or a planner's) that completed by `at` without being cut. */
  completedSteps(turnId: string, at: number): number {
    return this.sql
      .exec<{ n: number }>(
        `SELECT count(*) AS n FROM events WHERE turn_id = ? AND sequence <= ? AND type = 'model.completed'
         AND coalesce(json_extract(body, '$.depth'), 0) = 0 AND coalesce(json_extract(body, '$.payload.phase'), 'executor') = 'executor'
         AND json_extract(body, '$.payload.finish_reason') NOT IN ('error', 'interrupted', 'cancelled')`,
        turnId,
        at,
      )
      .one().n;
  }

  /** The turn's own tool results recorded by `at`: call id and payload JSON. */
  toolResults(turnId: string, at: number): { id: string; payload: string }[] {
    return this.sql
      .exec<{ id: string; payload: string }>(
        `SELECT json_extract(body, '$.tool_call_id') AS id, json_extract(body, '$.payload') AS payload FROM events
         WHERE turn_id = ? AND sequence <= ? AND type = 'tool.result' AND coalesce(json_extract(body, '$.depth'), 0) = 0`,
        turnId,
        at,
      )
      .toArray();
  }

  /** The turn's own actions requested by `at` and not resolved by then: call id and payload JSON. */
  openActions(turnId: string, at: number): { tool_call_id: string; payload: string }[] {
    return this.sql
      .exec<{ tool_call_id: string; payload: string }>(
        `SELECT json_extract(r.body, '$.tool_call_id') AS tool_call_id, json_extract(r.body, '$.payload') AS payload FROM events r
         WHERE r.turn_id = ? AND r.sequence <= ? AND r.type = 'action.required' AND coalesce(json_extract(r.body, '$.depth'), 0) = 0
         AND NOT EXISTS (SELECT 1 FROM events d WHERE d.turn_id = r.turn_id AND d.sequence <= ? AND d.type = 'action.resolved'
                         AND json_extract(d.body, '$.action_id') = json_extract(r.body, '$.action_id'))`,
        turnId,
        at,
        at,
      )
      .toArray();
  }
}
