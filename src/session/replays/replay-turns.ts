// A replay session's one replayed turn (docs/guides/fork-and-replay.md): its model answers from the recording while the requests
// match and live from the first that differs (replay.diverged), its tools answer from the recorded results or
// run again, and its end adds replay.completed, the comparison with the original, in the same commit.

import type { TurnSetup } from "../../engine/loop";
import { decisionsFrom, REPLAY_DECIDER, type RecordedAnswer } from "../../engine/recorded-decisions";
import { type Divergence, isCutCall, type RecordedCall, RecordedModel } from "../../engine/recorded-model";
import { type RecordedResult, replayTools } from "../../engine/recorded-tools";
import { REPLAY_TURN_KEY } from "../../protocol/event-shapes";
import type { EventDraft } from "../../protocol/events";
import type { MemoryLoaded, MemoryRecalled } from "../../protocol/memory";
import type { LogHost, SqlHost, TurnsHost } from "../hosts";
import { compareTurns, type ReplayComparison, type ReplaySide, turnSide } from "./replay-compare";
import { ReplayRow, type ReplaySpec } from "./replay-row";

/** The slice of the session replayed turns works on. */
export type ReplaySession = LogHost & TurnsHost & SqlHost;

export class ReplayTurns {
  /** The session's replay row, read once (it is written only when the session is created): every turn asks. */
  private spec: ReplaySpec | null | undefined;

  /** The replay table: the one row a replay session is created with. */
  private readonly table: ReplayRow;

  constructor(private readonly s: ReplaySession) {
    this.table = new ReplayRow(s.sql);
  }

  /** Records what the session replays (inside its creation's transaction). */
  save(spec: ReplaySpec): void {
    this.table.insert(spec);
    this.spec = spec;
  }

  /** The setup `turnId` runs with: the recorded model and tools when it is the replayed turn. */
  setupFor(turnId: string, setup: TurnSetup, diverged: (d: Divergence) => void): TurnSetup {
    const row = this.replayed(turnId);
    if (!row) return setup;
    const { calls, results, cut, decisions } = JSON.parse(row.recording_json) as {
      calls: RecordedCall[];
      results: RecordedResult[];
      cut?: string | null;
      decisions?: RecordedAnswer[];
    };
    // A resumed turn goes on where it was: the recorded calls it has had answered, and whether it left the recording.
    const events = this.s.store.eventsOfTurn(turnId).filter((e) => !e.subagent_id);
    const made = events.filter((e) => e.type === "model.completed" && !isCutCall(e.payload.finish_reason)).length;
    const model = new RecordedModel(setup.model, setup.config.model, { calls, cut: cut ?? null }, diverged, { made, divergence: divergenceIn(events) });
    const replayed = replayTools(setup.tools, results, row.tools);
    const recordedDecision = decisionsFrom(decisions ?? [], answeredFromRecording(events), replayed.answersFromRecording);
    return { ...setup, model, tools: replayed.tools, recordedDecision, recordedScript: replayed.recordedScript };
  }

  /** The replayed turn's recorded automatic recall (null: `turnId` is not the replayed turn, or it recalled nothing). */
  recalled(turnId: string): MemoryRecalled | null {
    const row = this.replayed(turnId);
    return row ? ((JSON.parse(row.recording_json) as { recalled?: MemoryRecalled | null }).recalled ?? null) : null;
  }

  /** The replayed turn's recorded working memory reads, in order (none: `turnId` is not the replayed turn, or it showed none). */
  working(turnId: string): MemoryLoaded[] {
    const row = this.replayed(turnId);
    return row ? ((JSON.parse(row.recording_json) as { working?: MemoryLoaded[] }).working ?? []) : [];
  }

  /** replay.completed for the end of `turnId` (`ending`: its last events, not yet stored), when it is the replayed turn. */
  closing(turnId: string, ending: EventDraft[]): EventDraft[] {
    const row = this.replayed(turnId);
    if (!row) return [];
    const events: EventDraft[] = [...this.s.store.eventsOfTurn(turnId), ...ending];
    const ids = { source_session: row.source_session, source_turn_id: row.source_turn_id, turn_id: turnId, tools: row.tools };
    return [{ type: "replay.completed", payload: compareTurns(ids, JSON.parse(row.original_json) as ReplaySide, turnSide(events), divergenceIn(events)) }];
  }

  /** GET /v1/replays/:exec_id: null when this session is no replay. */
  result(): { source_session: string; source_turn_id: string; status: "running" | "completed"; comparison: ReplayComparison | null } | null {
    const row = this.row();
    if (!row) return null;
    const comparison = this.table.completion();
    return { source_session: row.source_session, source_turn_id: row.source_turn_id, status: comparison ? "completed" : "running", comparison };
  }

  private row(): ReplaySpec | null {
    if (this.spec === undefined) {
      this.spec = this.table.read();
    }
    return this.spec;
  }

  private replayed(turnId: string): ReplaySpec | null {
    const row = this.row();
    return row && this.s.store.turn(turnId)?.idempotency_key === REPLAY_TURN_KEY ? row : null;
  }
}

export type ReplayResult = NonNullable<ReturnType<ReplayTurns["result"]>>;

/** The calls the replayed turn had answered from the recording so far (before a restart). */
function answeredFromRecording(events: readonly EventDraft[]): { tool_name: string; args: unknown }[] {
  const replayed = new Set(events.filter((e) => e.type === "action.resolved" && e.payload.by === REPLAY_DECIDER).map((e) => e.action_id));
  return events.flatMap((e) => (e.type === "action.required" && replayed.has(e.action_id) ? [{ tool_name: e.payload.tool_name, args: e.payload.args }] : []));
}

/** Where the replayed turn left its recording, from its replay.diverged event (null: it has not). */
function divergenceIn(events: readonly EventDraft[]): Divergence | null {
  return (events.find((e) => e.type === "replay.diverged")?.payload as Divergence | undefined) ?? null;
}
