// SQLite access for one session object. No transactions here: the object wraps each transition in one.
// The turns and actions tables are written only by the projections (projections.ts), from the events.
import type { ModelMessage } from "ai";
import type { InjectedMessage } from "../../engine/ports";
import { traceFields } from "../../engine/trace";
import type { RecordedDecision, TurnState } from "../../engine/turn-state";
import type { EventDraft, RuntimeEvent, TurnTrace } from "../../protocol/events";
import type { FileRef } from "../../protocol/input-parts";
import type { MemoryLoaded } from "../../protocol/memory";
import type { UsageDay } from "../../protocol/session-list";
import type { SessionView } from "../../protocol/views";
import type { ApprovalDecision } from "../../protocol/wire";
import type { TerminalEvent } from "../../views/turn-outcome";

/** Events per INSERT statement: 5 bound values each, under SQLite's limit of 100 a statement on Durable Objects. */
const INSERT_ROWS = 20;

import { ConversationReads } from "./conversation-reads";
import { ForkReads } from "./fork-reads";
import type { ActionRow, SessionRow, StoredEvent, TurnRow } from "./session-rows";
import { TimerTable } from "./timer-table";

export type { ActionRow, SessionRow, StoredEvent, TurnRow };

/** The session's own tables (the log, turns, actions, history, inbox, checkpoints, timers); each capability builds its own from `sql`. */
export class SessionStore {
  /** Reads only: a fork's conversation at one sequence of the log. */
  readonly forkReads: ForkReads;
  /** Reads only: where a turn starts, the newest submissions and rollbacks (the chat's messages and streams). */
  readonly conversationReads: ConversationReads;
  /** The object's timers: what its one alarm wakes for. */
  readonly timers: TimerTable;
  private lastSeq: number;
  /** Rows in turn_messages per checkpointed turn, so a checkpoint need not count them. */
  private readonly savedMessages = new Map<string, number>();
  private readonly traces = new Map<string, TurnTrace>();
  /**
   * Known to be empty: the inbox (no live message waits), and the decided actions of `undecidedTurn`. A running
   * turn asks for both at every step and tool round (docs/performance-history.md), and they are almost always
   * empty; the inbox is written only here and actions only by the projections of appended action.* events.
   */
  private inboxEmpty = false;
  private undecidedTurn: string | null = null;

  constructor(readonly sql: SqlStorage) {
    this.forkReads = new ForkReads(sql);
    this.conversationReads = new ConversationReads(sql);
    this.timers = new TimerTable(sql);
    this.lastSeq = sql.exec<{ s: number | null }>("SELECT max(sequence) AS s FROM events").one().s ?? 0;
  }

  get lastSequence(): number {
    return this.lastSeq;
  }

  /** Stamps and appends events; the caller runs this inside a transaction. */
  append(
    drafts: EventDraft[],
    ids: { session_id: string; thread_id: string },
    now: number,
    newId: (p: string) => string,
  ): { event: RuntimeEvent; stored: StoredEvent }[] {
    const out: { event: RuntimeEvent; stored: StoredEvent }[] = [];
    let seq = this.lastSeq;
    for (const { trace, ...d } of drafts) {
      seq += 1;
      if (trace && d.turn_id) this.traces.set(d.turn_id, trace);
      if (d.type.startsWith("action.")) this.undecidedTurn = null;
      const turnTrace = d.turn_id ? this.traceOf(d.turn_id) : null;
      // The draft's payload was checked against its type where it was built; the envelope is added here.
      const event = {
        type: d.type,
        event_id: newId("evt"),
        timestamp: now,
        sequence: seq,
        schema_version: 1,
        session_id: ids.session_id,
        thread_id: ids.thread_id,
        ...(d.turn_id !== undefined ? { turn_id: d.turn_id } : {}),
        ...(d.step_id !== undefined ? { step_id: d.step_id } : {}),
        ...(d.tool_call_id !== undefined ? { tool_call_id: d.tool_call_id } : {}),
        ...(d.action_id !== undefined ? { action_id: d.action_id } : {}),
        ...(d.subagent_id !== undefined ? { subagent_id: d.subagent_id } : {}),
        parent_id: d.parent_id ?? null,
        depth: d.depth ?? 0,
        ...(turnTrace && d.turn_id ? traceFields(turnTrace, d.turn_id, d) : {}),
        payload: d.payload,
        ...(d.refs ? { refs: d.refs } : {}),
      } as RuntimeEvent;
      out.push({ event, stored: { sequence: seq, type: event.type, body: JSON.stringify(event) } });
    }
    // One statement per INSERT_ROWS events: each exec has a fixed cost, and a step commits a dozen at once.
    for (let i = 0; i < out.length; i += INSERT_ROWS) {
      const rows = out.slice(i, i + INSERT_ROWS);
      this.sql.exec(
        `INSERT INTO events (sequence, event_id, type, turn_id, body) VALUES ${rows.map(() => "(?, ?, ?, ?, ?)").join(", ")}`,
        ...rows.flatMap(({ event, stored }) => [stored.sequence, event.event_id, event.type, event.turn_id ?? null, stored.body]),
      );
    }
    this.lastSeq = seq;
    return out;
  }

  /** A turn's trace, from the turns table (cached: it never changes). */
  private traceOf(turnId: string): TurnTrace | null {
    let trace = this.traces.get(turnId);
    if (trace === undefined) {
      const row = this.sql
        .exec<{ trace_id: string | null; trace_parent: string | null }>("SELECT trace_id, trace_parent FROM turns WHERE turn_id = ?", turnId)
        .toArray()[0];
      if (!row?.trace_id) return null;
      trace = { trace_id: row.trace_id, parent_span_id: row.trace_parent };
      this.traces.set(turnId, trace);
    }
    return trace;
  }

  /** Call when a transaction was rolled back: what is cached about stored rows may be wrong now. */
  resync(): void {
    this.savedMessages.clear();
    this.traces.clear();
    this.inboxEmpty = false;
    this.undecidedTurn = null;
    this.lastSeq = this.sql.exec<{ s: number | null }>("SELECT max(sequence) AS s FROM events").one().s ?? 0;
  }

  readEvents(after: number, limit: number): StoredEvent[] {
    return this.sql.exec<StoredEvent>("SELECT sequence, type, body FROM events WHERE sequence > ? ORDER BY sequence LIMIT ?", after, limit).toArray();
  }

  eventsOfTurn(turnId: string): RuntimeEvent[] {
    return this.sql
      .exec<{ body: string }>("SELECT body FROM events WHERE turn_id = ? ORDER BY sequence", turnId)
      .toArray()
      .map((r) => JSON.parse(r.body) as RuntimeEvent);
  }

  /** The session's newest memory.loaded (not a sub-agent's) of `agent`'s working memory (null: the resource's own document). */
  lastMemoryLoaded(agent: string | null): { sequence: number; payload: MemoryLoaded } | null {
    const row = this.sql
      .exec<{ sequence: number; body: string }>(
        `SELECT sequence, body FROM events WHERE type = 'memory.loaded' AND json_extract(body, '$.subagent_id') IS NULL
         AND json_extract(body, '$.payload.agent') IS ? ORDER BY sequence DESC LIMIT 1`,
        agent,
      )
      .toArray()[0];
    return row ? { sequence: row.sequence, payload: (JSON.parse(row.body) as { payload: MemoryLoaded }).payload } : null;
  }

  /** The event that ended a turn, if it has ended. */
  terminalEvent(turnId: string): TerminalEvent | null {
    const row = this.sql
      .exec<{ body: string }>("SELECT body FROM events WHERE turn_id = ? AND type IN ('turn.completed', 'turn.failed', 'turn.cancelled') LIMIT 1", turnId)
      .toArray()[0];
    return row ? (JSON.parse(row.body) as TerminalEvent) : null;
  }

  /** The agent the session was opened with, from its `session.created` (the log's first or second event). */
  openedAgent(): string {
    const { body } = this.sql.exec<{ body: string }>("SELECT body FROM events WHERE type = 'session.created' ORDER BY sequence LIMIT 1").one();
    return (JSON.parse(body) as { payload: { agent: string } }).payload.agent;
  }

  session(): SessionRow | null {
    return (
      this.sql
        .exec<SessionRow>("SELECT session_id, thread_id, agent, metadata, policy, created_at, orchestration_depth, owner, resource_id FROM session")
        .toArray()[0] ?? null
    );
  }

  insertSession(row: SessionRow): void {
    this.sql.exec(
      "INSERT INTO session (id, session_id, thread_id, agent, metadata, policy, created_at, orchestration_depth, owner, resource_id) VALUES (1, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
      row.session_id,
      row.thread_id,
      row.agent,
      row.metadata,
      row.policy,
      row.created_at,
      row.orchestration_depth,
      row.owner,
      row.resource_id,
    );
  }

  setSessionAgent(agentJson: string): void {
    this.sql.exec("UPDATE session SET agent = ? WHERE id = 1", agentJson);
  }

  turn(turnId: string): TurnRow | null {
    return this.sql.exec<TurnRow>("SELECT * FROM turns WHERE turn_id = ?", turnId).toArray()[0] ?? null;
  }

  turnByIdempotencyKey(key: string): TurnRow | null {
    return this.sql.exec<TurnRow>("SELECT * FROM turns WHERE idempotency_key = ?", key).toArray()[0] ?? null;
  }

  hasTurns(): boolean {
    return this.sql.exec("SELECT 1 FROM turns LIMIT 1").toArray().length > 0;
  }

  runningTurn(): TurnRow | null {
    return this.sql.exec<TurnRow>("SELECT * FROM turns WHERE status = 'running'").toArray()[0] ?? null;
  }

  queuedTurns(): TurnRow[] {
    return this.sql.exec<TurnRow>("SELECT * FROM turns WHERE status = 'queued' ORDER BY position").toArray();
  }

  turnState(turnId: string): TurnState | null {
    const row = this.sql.exec<{ state: string }>("SELECT state FROM turn_state WHERE turn_id = ?", turnId).toArray()[0];
    if (!row) return null;
    const messages = this.sql
      .exec<{ message: string }>("SELECT message FROM turn_messages WHERE turn_id = ? ORDER BY idx", turnId)
      .toArray()
      .map((r) => JSON.parse(r.message) as ModelMessage);
    return { ...(JSON.parse(row.state) as Omit<TurnState, "messages">), messages };
  }

  /** Checkpoints a turn: its scalar state, plus the messages appended since the last checkpoint (they are append-only). */
  saveTurnState(state: TurnState): void {
    const { messages, ...rest } = state;
    const stored =
      this.savedMessages.get(state.turn_id) ?? this.sql.exec<{ n: number }>("SELECT count(*) AS n FROM turn_messages WHERE turn_id = ?", state.turn_id).one().n;
    for (let i = stored; i < messages.length; i++) {
      this.sql.exec("INSERT INTO turn_messages (turn_id, idx, message) VALUES (?, ?, ?)", state.turn_id, i, JSON.stringify(messages[i]));
    }
    this.savedMessages.set(state.turn_id, Math.max(stored, messages.length));
    this.sql.exec("INSERT OR REPLACE INTO turn_state (turn_id, state) VALUES (?, ?)", state.turn_id, JSON.stringify(rest));
  }

  deleteTurnState(turnId: string): void {
    this.savedMessages.delete(turnId);
    this.sql.exec("DELETE FROM turn_state WHERE turn_id = ?", turnId);
    this.sql.exec("DELETE FROM turn_messages WHERE turn_id = ?", turnId);
  }

  history(): ModelMessage[] {
    return this.sql
      .exec<{ message: string }>("SELECT message FROM messages ORDER BY id")
      .toArray()
      .map((r) => JSON.parse(r.message) as ModelMessage);
  }

  appendHistory(turnId: string, messages: ModelMessage[]): void {
    for (const m of messages) this.sql.exec("INSERT INTO messages (turn_id, message) VALUES (?, ?)", turnId, JSON.stringify(m));
  }

  /** How many of the history's messages one turn added (0 once a compaction summarized them). */
  turnMessageCount(turnId: string): number {
    return this.sql.exec<{ n: number }>("SELECT count(*) AS n FROM messages WHERE turn_id = ?", turnId).one().n;
  }

  /** Removes one turn's messages from the history (a rolled back turn that had ended). */
  removeTurnMessages(turnId: string): void {
    this.sql.exec("DELETE FROM messages WHERE turn_id = ?", turnId);
  }

  /** Replaces the whole thread history (compaction). */
  replaceHistory(messages: ModelMessage[]): void {
    this.sql.exec("DELETE FROM messages");
    this.appendHistory("compaction", messages);
  }

  action(actionId: string): ActionRow | null {
    return this.sql.exec<ActionRow>("SELECT * FROM actions WHERE action_id = ?", actionId).toArray()[0] ?? null;
  }

  /** Decisions recorded for a turn's approvals (applied to its state by the loop). */
  decisions(turnId: string): Map<string, RecordedDecision> {
    if (this.undecidedTurn === turnId) return new Map();
    const rows = this.sql
      .exec<Pick<ActionRow, "action_id" | "status" | "reason" | "response" | "args" | "decided_by">>(
        "SELECT action_id, status, reason, response, args, decided_by FROM actions WHERE turn_id = ? AND status != 'pending'",
        turnId,
      )
      .toArray();
    if (rows.length === 0) this.undecidedTurn = turnId;
    return new Map(
      rows.map((r) => [
        r.action_id,
        {
          status: r.status as ApprovalDecision,
          reason: r.reason,
          ...(r.response === null ? {} : { response: JSON.parse(r.response) as unknown }),
          ...(r.args === null ? {} : { args: JSON.parse(r.args) as Record<string, unknown>, by: r.decided_by ?? "" }),
        },
      ]),
    );
  }

  /** Records a live message (with the references of its files) for the running turn; returns its inbox position. */
  addToInbox(turnId: string, messageId: string, content: string, now: number, files?: FileRef[]): number {
    const refs = files?.length ? JSON.stringify(files) : null;
    this.inboxEmpty = false;
    this.sql.exec("INSERT INTO inbox (turn_id, message_id, content, created_at, files) VALUES (?, ?, ?, ?, ?)", turnId, messageId, content, now, refs);
    return this.sql.exec<{ seq: number }>("SELECT last_insert_rowid() AS seq").one().seq;
  }

  /** A turn's live messages after inbox position `after`, oldest first. */
  inbox(turnId: string, after: number): InjectedMessage[] {
    if (this.inboxEmpty) return [];
    const messages = this.sql
      .exec<Omit<InjectedMessage, "files"> & { files: string | null }>(
        "SELECT seq, message_id, content, files FROM inbox WHERE turn_id = ? AND seq > ? ORDER BY seq",
        turnId,
        after,
      )
      .toArray()
      .map(({ files, ...m }) => (files ? { ...m, files: JSON.parse(files) as FileRef[] } : m));
    if (messages.length === 0) this.inboxEmpty = this.inboxSize() === 0;
    return messages;
  }

  /** Live messages waiting in the inbox (of any turn). */
  inboxSize(): number {
    if (this.inboxEmpty) return 0;
    return this.sql.exec<{ n: number }>("SELECT count(*) AS n FROM inbox").one().n;
  }

  /** Removes the messages a checkpoint took into the turn's conversation. */
  dropFromInbox(turnId: string, upTo: number): void {
    this.sql.exec("DELETE FROM inbox WHERE turn_id = ? AND seq <= ?", turnId, upTo);
  }

  clearInbox(turnId: string): void {
    this.sql.exec("DELETE FROM inbox WHERE turn_id = ?", turnId);
  }

  /** The time of the last event (null before the first). */
  lastEventTime(): number | null {
    const row = this.sql.exec<{ body: string }>("SELECT body FROM events ORDER BY sequence DESC LIMIT 1").toArray()[0];
    return row ? (JSON.parse(row.body) as { timestamp: number }).timestamp : null;
  }

  usageDays(): UsageDay[] {
    return this.sql.exec<UsageDay & Record<string, SqlStorageValue>>("SELECT * FROM usage_days ORDER BY day").toArray();
  }

  snapshot(): SessionView | null {
    const row = this.sql.exec<{ body: string }>("SELECT body FROM snapshot").toArray()[0];
    return row ? (JSON.parse(row.body) as SessionView) : null;
  }

  saveSnapshot(view: SessionView): void {
    this.sql.exec("INSERT OR REPLACE INTO snapshot (id, sequence, body) VALUES (1, ?, ?)", view.last_sequence, JSON.stringify(view));
  }
}
