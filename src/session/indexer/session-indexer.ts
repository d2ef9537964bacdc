// Keeps the session's row in the deployment's index (its shard, index-shards.ts) current: written when the
// session is created, when each turn ends, and within about a second of a change of its status (a turn starts,
// waits for a person, resumes: STATUS_WRITE_DELAY_MS, so a short turn writes once), off the turn's path, one write
// at a time (changes meanwhile coalesce into one more), and retried from the alarm until it lands, so the index converges (docs/scale.md: within RETRY_MS's last step of the shard
// answering again). A write that hangs counts as failed after WRITE_TIMEOUT_MS.
// The row counts the bytes of the session's files, as their ledger keeps them (file-ledger.ts: a query, no R2
// listing); the ledger asks for a write when they change.
// Also the session's retention deadline: idle that long (a pending approval counts as activity until its
// deadline), the session erases itself.

import { indexShard } from "../../objects/index/index-shards";
import { registry } from "../../objects/registry/registry-object";
import { isTerminalTurnEvent } from "../../protocol/events";
import type { SessionSummary, UsageDay } from "../../protocol/session-list";
import type { ThreadStatus } from "../../protocol/views";
import type { Capability } from "../capability";
import type { FilesHost, LogHost, SettingsHost, TimerHost, TurnsHost } from "../hosts";

/** Schedule entries of the alarm. */
export const INDEX_RETRY = "index";
export const RETENTION = "retention";
const RETRY_MS = [1_000, 5_000, 15_000, 60_000];
const WRITE_TIMEOUT_MS = 30_000;
/** A status change is written this long after it (a turn's end at once): a short turn's start and end make one write. */
const STATUS_WRITE_DELAY_MS = 500;
const DAY_MS = 24 * 3600 * 1000;

/** The slice of the session the indexer works on. */
export type IndexerSession = LogHost & TurnsHost & TimerHost & SettingsHost & FilesHost;

export class SessionIndexer {
  private failures = 0;
  /** Set when the session is being erased: a write still on its way must not touch the storage after that. */
  private stopped = false;
  /** The write on its way, and whether another sync was asked for meanwhile (it runs once, after). */
  private writing: Promise<void> | null = null;
  private again = false;
  /** The status the last write asked for showed: a commit that changes it writes the row again. */
  private listedStatus: ThreadStatus | null = null;
  /** The sync asked for and not started yet. */
  private soon: { timer: ReturnType<typeof setTimeout>; at: number } | null = null;

  constructor(private readonly s: IndexerSession) {}

  /** The session's row as the index holds it. */
  summary(storedBytes: number): SessionSummary {
    const row = this.s.row();
    const view = this.s.view();
    const totals = this.days().reduce(
      (t, d) => ({
        input_tokens: t.input_tokens + d.input_tokens,
        output_tokens: t.output_tokens + d.output_tokens,
        cost_usd: t.cost_usd + d.cost_usd,
        unpriced_model_calls: t.unpriced_model_calls + d.unpriced_model_calls,
        turns: t.turns + d.turns,
      }),
      { input_tokens: 0, output_tokens: 0, cost_usd: 0, unpriced_model_calls: 0, turns: 0 },
    );
    return {
      session_id: row.session_id,
      agent: this.s.agent().name,
      agent_version: view.agent_version ?? null,
      owner: row.owner,
      metadata: JSON.parse(row.metadata) as Record<string, unknown>,
      created_at: row.created_at,
      last_activity: this.s.store.lastEventTime() ?? row.created_at,
      status: view.status,
      log_events: view.last_sequence,
      stored_bytes: storedBytes,
      ...totals,
    };
  }

  days(): UsageDay[] {
    return this.s.store.usageDays();
  }

  /**
   * Writes the row. A slow shard holds at most one write of this session: syncs asked for meanwhile become one
   * more write after it, of the state then.
   */
  sync(): Promise<void> {
    if (this.writing) {
      this.again = true;
      return this.writing;
    }
    this.writing = (async () => {
      do this.again = false;
      while ((await this.write()) && this.again);
    })().finally(() => {
      this.writing = null;
    });
    return this.writing;
  }

  /** Syncs in a later task after `delay` ms, or sooner if a sync is already due sooner (one write for both). */
  private syncIn(delay: number): void {
    const at = Date.now() + delay;
    if (this.soon) {
      if (this.soon.at <= at) return;
      clearTimeout(this.soon.timer);
    }
    const timer = setTimeout(() => {
      this.soon = null;
      void this.sync();
    }, delay);
    this.soon = { timer, at };
  }

  /** One write; on failure, schedules a retry with backoff (the alarm syncs again). Whether it landed. */
  private async write(): Promise<boolean> {
    if (this.stopped) return false;
    let summary: SessionSummary;
    try {
      summary = this.summary(await this.s.fileLedger().storedBytes());
    } catch {
      return false; // erased meanwhile
    }
    let written = true;
    let timer: ReturnType<typeof setTimeout> | null = null;
    try {
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no answer in ${WRITE_TIMEOUT_MS} ms`)), WRITE_TIMEOUT_MS);
      });
      await Promise.race([indexShard(this.s.bindings(), summary.session_id).indexSession(summary, this.days(), this.s.openedAgent()), timeout]);
    } catch (err) {
      console.error("session index write failed; retrying from the alarm", err);
      written = false;
    } finally {
      clearTimeout(timer);
    }
    if (this.stopped) return false; // the session was erased while the write was on its way
    if (written) {
      this.failures = 0;
      this.s.store.timers.unschedule(INDEX_RETRY);
    } else {
      const delay = RETRY_MS[Math.min(this.failures, RETRY_MS.length - 1)]!;
      this.failures += 1;
      this.s.store.timers.schedule(INDEX_RETRY, Date.now() + delay);
    }
    this.scheduleRetention(summary.last_activity);
    this.s.armAlarm();
    return written;
  }

  /** The session is being erased: no more index writes, and none still on its way writes here. */
  stop(): void {
    this.stopped = true;
  }

  /** How long the session may stay idle, in ms (null: forever). */
  retentionMs(): number | null {
    const env = this.s.bindings();
    const seconds = Number(env.SESSION_RETENTION_SECONDS_FOR_TESTS);
    if (env.SESSION_RETENTION_SECONDS_FOR_TESTS && Number.isFinite(seconds) && seconds > 0) return seconds * 1000;
    const days = Number(env.SESSION_RETENTION_DAYS);
    return env.SESSION_RETENTION_DAYS && Number.isFinite(days) && days > 0 ? days * DAY_MS : null;
  }

  /** When the session becomes erasable: idle for the retention period, pending approvals counting as activity until their deadline. */
  retentionDue(lastActivity: number): number | null {
    const retention = this.retentionMs();
    if (retention === null) return null;
    const deadlines = this.s.view().pending_actions.map((a) => a.expires_at ?? 0);
    return Math.max(lastActivity, ...deadlines) + retention;
  }

  private scheduleRetention(lastActivity: number): void {
    const due = this.retentionDue(lastActivity);
    if (due !== null) this.s.store.timers.schedule(RETENTION, due);
  }

  /** From the alarm: whether the session is due for erasure now (else the deadline moves on). */
  retentionExpired(now: number): boolean {
    const view = this.s.view();
    const due = this.retentionDue(this.s.store.lastEventTime() ?? this.s.row().created_at);
    if (due === null) return false;
    // A turn that runs (or waits in the queue) is activity: look again one period later.
    if (due > now || view.active_turn_id !== null || view.queued_turns.length > 0) {
      this.s.store.timers.schedule(RETENTION, Math.max(due, now + (this.retentionMs() ?? 0)));
      return false;
    }
    return true;
  }

  /**
   * Its alarm kinds (a write to retry, the retention deadline, which erases the session) and its reaction
   * to commits: the index learns of the session when it starts, when its status changes and when each turn ends,
   * in a later task (where the index object shares this thread, its write would otherwise hold back the frames
   * just sent).
   */
  capability() {
    return {
      alarms: [
        { kind: INDEX_RETRY, fire: () => this.sync() },
        {
          kind: RETENTION,
          fire: async (now) => {
            if (!this.retentionExpired(now)) return;
            await this.s.eraseNow("the session's retention period ended");
            return { stop: true };
          },
        },
      ],
      committed: (events) => {
        const status = this.s.view().status;
        // A move to another version changes the row's agent_version, which lists filter by.
        const now = events.some((e) => e.type === "session.created" || e.type === "session.version_changed" || isTerminalTurnEvent(e.type));
        if (now || status !== this.listedStatus) {
          this.listedStatus = status;
          this.syncIn(now ? 0 : STATUS_WRITE_DELAY_MS);
        }
      },
      stop: () => this.stop(),
      // Its row goes before the session's storage: if the index cannot be reached, nothing of the session is lost yet.
      erase: async () => {
        const sid = this.s.row().session_id;
        await indexShard(this.s.bindings(), sid).eraseFromIndex(sid);
        // A deleted agent's versions go with its last session (best effort: a failure leaves them readable).
        await registry(this.s.bindings())
          .sessionsGone([...new Set([this.s.agent().name, this.s.openedAgent()])])
          .catch((err) => console.error("releasing the agent's versions failed", err));
      },
    } satisfies Capability;
  }
}
