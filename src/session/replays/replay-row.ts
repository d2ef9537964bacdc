// The replay table (replay-turns.ts): the one row a replay session is created with, what it replays, and the
// read of the log for the replay's outcome. ReplayTurns is the table's one writer.

import type { ToolReplayMode } from "../../engine/recorded-tools";
import type { RuntimeEvent } from "../../protocol/events";
import type { ReplayComparison } from "./replay-compare";

export type ReplaySpec = { source_session: string; source_turn_id: string; tools: ToolReplayMode; recording_json: string; original_json: string };

export class ReplayRow {
  constructor(private readonly sql: SqlStorage) {}

  insert(spec: ReplaySpec): void {
    this.sql.exec(
      "INSERT INTO replay (id, source_session, source_turn_id, tools, recording, original) VALUES (1, ?, ?, ?, ?, ?)",
      spec.source_session,
      spec.source_turn_id,
      spec.tools,
      spec.recording_json,
      spec.original_json,
    );
  }

  /** What the session replays; null when it is no replay. */
  read(): ReplaySpec | null {
    return (
      this.sql
        .exec<ReplaySpec>("SELECT source_session, source_turn_id, tools, recording AS recording_json, original AS original_json FROM replay")
        .toArray()[0] ?? null
    );
  }

  /** The comparison of the last replay.completed in the log; null before the replayed turn ends. */
  completion(): ReplayComparison | null {
    const done = this.sql.exec<{ body: string }>("SELECT body FROM events WHERE type = 'replay.completed' ORDER BY sequence DESC LIMIT 1").toArray()[0];
    return done ? (JSON.parse(done.body) as Extract<RuntimeEvent, { type: "replay.completed" }>).payload : null;
  }
}
