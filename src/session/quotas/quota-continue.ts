// Continuing a turn a pause quota holds (docs/guides/quotas.md, "Paused"): a principal allowed to raise the
// quota (an admin key) may instead let the waiting call go over it once. The decision is recorded first, as
// turn.continued naming who and which quota (the one whose turn.paused it answers); the paused loop sees it at its
// next look (continuedOf, within a quarter second) and makes its call with that quota's check skipped. Another
// quota that also holds the call pauses the turn again (a turn.paused naming it), which needs a continue of its own.
import { ApiError } from "../../protocol/errors";
import type { Capability } from "../capability";
import type { LogHost, SqlHost, TurnsHost } from "../hosts";

export type ContinueSession = LogHost & TurnsHost & SqlHost;

const PAUSE_EVENTS = "('turn.paused', 'turn.resumed', 'turn.continued')";

/** The turn's newest pause event: a turn.paused not followed by another is a pause still waiting. */
function lastPause(sql: SqlStorage, turnId: string): { type: string; payload: { quota_id: string; by?: string } } | null {
  const row = sql
    .exec<{ body: string }>(`SELECT body FROM events WHERE turn_id = ? AND type IN ${PAUSE_EVENTS} ORDER BY sequence DESC LIMIT 1`, turnId)
    .toArray()[0];
  return row ? (JSON.parse(row.body) as { type: string; payload: { quota_id: string; by?: string } }) : null;
}

/** Who continued turn `turnId` while it waits, past which quota (its newest pause event is turn.continued); null: nobody did. */
export function continuedOf(sql: SqlStorage, turnId: string): { by: string; quota_id: string } | null {
  const last = lastPause(sql, turnId);
  return last?.type === "turn.continued" ? { by: last.payload.by ?? "", quota_id: last.payload.quota_id } : null;
}

export function quotaContinue(s: ContinueSession) {
  return {
    operations: {
      continueTurn: ({ params: { turn_id }, body, by }) => {
        if (!s.store.turn(turn_id)) throw ApiError.notFound("Turn", turn_id);
        const last = s.store.runningTurn()?.turn_id === turn_id ? lastPause(s.sql, turn_id) : null;
        if (last?.type === "turn.continued") throw new ApiError("conflict", `Turn '${turn_id}' was already continued; it goes on at its next look`);
        if (last?.type !== "turn.paused")
          throw new ApiError("conflict", `Turn '${turn_id}' is not paused by a quota (only a running turn a pause quota holds can be continued)`);
        const { quota_id } = last.payload;
        s.commit([{ type: "turn.continued", turn_id, payload: { reason: "quota", quota_id, by, ...(body?.note ? { note: body.note } : {}) } }]);
        return { turn_id, quota_id };
      },
    },
  } satisfies Capability;
}
