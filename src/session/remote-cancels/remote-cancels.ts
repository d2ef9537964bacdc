// Cancels owed to remote A2A tasks whose question a turn's end dropped (engine/dropped-questions.ts), so that
// they cannot be lost: each is a row written in the end's own transaction, sent once the end is committed, and
// deleted when the remote agent answers (the task cancelled, or TaskNotFound / TaskNotCancelable: nothing left to
// cancel). A remote agent that cannot be reached is tried again with a doubling backoff through the session's
// alarm, and at once by the next instance after a restart, until A2A_CANCEL_MAX_ATTEMPTS requests. The first
// attempt's outcome is question.dropped; a retried cancel's end is question.cancel_settled. Erasing the session
// drops what is still owed (after the erase's own turn end has sent its cancel once).
import type { DroppedQuestion } from "../../engine/dropped-questions";
import { type CancelOutcome, cancelRemoteTask } from "../../engine/tools/a2a-rpc";
import { droppedMessage } from "../../engine/tools/a2a-tool";
import { parseAllowlist } from "../../engine/url-allowlist";
import { type Env, positiveSetting } from "../../env";
import { agentConfig, agentVersion } from "../../objects/registry/agent-cache";
import type { AgentConfig } from "../../protocol/agent-config";
import { ApiError, errorMessage } from "../../protocol/errors";
import type { EventDraft } from "../../protocol/events";
import type { Capability } from "../capability";
import type { LogHost, SettingsHost, SqlHost, TimerHost } from "../hosts";
import { type CancelRow, CancelRows, REMOTE_CANCEL_TABLES, rowKey } from "./cancel-rows";

/** The entry (in the object's schedule table) of the next retry. */
export const REMOTE_CANCELS_DUE = "remote-cancels";
/** Defaults of A2A_CANCEL_RETRY_BASE_MS and A2A_CANCEL_MAX_ATTEMPTS: 20 tries over about three hours. */
const DEFAULTS = { base_ms: 1000, max_attempts: 20 };
const MAX_DELAY_MS = 15 * 60_000;
/** While an attempt runs, the alarm stays this far ahead: it tries again if the object goes away. */
const BACKSTOP_MS = 30_000;

export type CancelsSession = LogHost & TimerHost & SettingsHost & SqlHost;

export class RemoteCancels {
  private readonly rows: CancelRows;
  /** Rows with a request in flight in this instance. */
  private readonly running = new Set<string>();
  /** The session is being erased: nothing is retried or written any more. */
  private stopped = false;

  constructor(private readonly s: CancelsSession) {
    this.rows = new CancelRows(s.sql);
  }

  /** Inside the transaction that records the turn's end: a row for each dropped question, and its backstop. */
  record(turnId: string, dropped: DroppedQuestion[], how: CancelRow["how"]): CancelRow[] {
    const now = Date.now();
    const rows = dropped.map(
      (q): CancelRow => ({
        turn_id: turnId,
        tool_call_id: q.tool_call_id,
        tool: q.name,
        task_id: String(q.answer_args.task_id),
        agent: q.asked_by?.agent ?? null,
        version: q.asked_by?.version ?? null,
        how,
        attempts: 0,
        next_at: now,
        last_error: null,
      }),
    );
    for (const row of rows) this.rows.insert(row);
    if (rows.length > 0) this.s.store.timers.schedule(REMOTE_CANCELS_DUE, now + retryPolicy(this.s.bindings()).base_ms);
    return rows;
  }

  /** Once the end is committed: the first attempts (also when an erase ended the turn: its remote tasks are told). */
  send(rows: CancelRow[]): void {
    for (const row of rows) void this.attempt(row);
  }

  /** The owed cancels due now (`all`: every one never tried, after a restart, as well). */
  private retry(all = false): Promise<void> {
    if (this.stopped) return Promise.resolve();
    const now = Date.now();
    const due = this.rows.all().filter((r) => !this.running.has(rowKey(r)) && (r.next_at <= now || (all && r.attempts === 0)));
    const runs = due.map((r) => this.attempt(r)); // each is marked running before its first await
    this.rearm();
    return Promise.all(runs).then(() => {});
  }

  private async attempt(row: CancelRow): Promise<void> {
    const key = rowKey(row);
    if (this.running.has(key)) return;
    this.running.add(key);
    // Read now, before any await: an erase deletes the session's agent and settings once its turn's end is recorded.
    const env = this.s.bindings();
    const current = this.s.agent();
    const currentVersion = this.s.view().agent_version ?? null;
    try {
      const outcome = await this.cancel(row, env, current, currentVersion);
      if (this.stopped) return;
      this.settle(row, outcome, retryPolicy(env));
    } catch (err) {
      if (!(err instanceof ApiError && err.code === "not_found")) console.error("an owed A2A cancel failed", row.task_id, err);
    } finally {
      this.running.delete(key);
      this.rearm();
    }
  }

  /** Resolves the asking agent's A2A entry (a handoff or a sub-agent's parent may not be the session's agent now) and sends CancelTask. */
  private async cancel(row: CancelRow, env: Env, current: AgentConfig, currentVersion: number | null): Promise<CancelOutcome> {
    let config: AgentConfig | null = current;
    try {
      const same = row.agent === null || (row.agent === current.name && (row.version === null || row.version === currentVersion));
      if (!same) config = row.version !== null ? await agentVersion(env, row.agent!, row.version) : await agentConfig(env, row.agent!);
    } catch (err) {
      return { status: "retry", reason: `the agent "${row.agent}" could not be read: ${errorMessage(err)}` };
    }
    const spec = config?.a2a_agents?.find((a) => a.name === row.tool);
    if (!spec) return { status: "refused", reason: `the agent no longer has the tool "${row.tool}"` };
    const reach = {
      fetch: (input: RequestInfo | URL, init?: RequestInit) => fetch(input, init),
      urlAllowlist: parseAllowlist(env.TOOL_URL_ALLOWLIST),
      tool_call_id: row.tool_call_id,
    };
    return cancelRemoteTask(spec, reach, row.task_id);
  }

  /** Records what the attempt came to: the row deleted with its event, or kept for the next try. */
  private settle(row: CancelRow, outcome: CancelOutcome, policy: typeof DEFAULTS): void {
    const attempts = row.attempts + 1;
    const first = row.attempts === 0;
    const done = outcome.status === "cancelled" || outcome.status === "ended";
    const keep = outcome.status === "retry" && attempts < policy.max_attempts;
    const state = done ? "cancelled" : keep ? "retrying" : "abandoned";
    const ref = { turn_id: row.turn_id, tool_call_id: row.tool_call_id, name: row.tool };
    const reason = "reason" in outcome ? outcome.reason : "";
    let message = droppedMessage(row.tool, row.how, row.task_id, keep || done ? outcome.status : "refused");
    if (!done) message += ` (${reason}${attempts > 1 ? `; ${attempts} attempts` : ""})`;
    const drafts: EventDraft[] = first
      ? [{ type: "question.dropped", payload: { ...ref, message, cancel: state } }]
      : keep
        ? []
        : [{ type: "question.cancel_settled", payload: { ...ref, cancel: done ? "cancelled" : "abandoned", attempts, message } }];
    const delay = Math.min(policy.base_ms * 2 ** (attempts - 1), MAX_DELAY_MS);
    this.s.commit(drafts, () => (keep ? this.rows.retried(row, attempts, Date.now() + delay, reason) : this.rows.delete(row)));
  }

  /** Points the schedule entry at the next retry (or the backstop of one in flight); none when nothing is owed. */
  private rearm(): void {
    if (this.stopped) return;
    const now = Date.now();
    const due = this.rows
      .all()
      .map((r) => (this.running.has(rowKey(r)) ? now + BACKSTOP_MS : Math.max(r.next_at, now)))
      .reduce((a, b) => Math.min(a, b), Number.POSITIVE_INFINITY);
    const { timers } = this.s.store;
    if (due === Number.POSITIVE_INFINITY && timers.dueAt(REMOTE_CANCELS_DUE) === null) return;
    this.s.transact(() => (due === Number.POSITIVE_INFINITY ? timers.unschedule(REMOTE_CANCELS_DUE) : timers.schedule(REMOTE_CANCELS_DUE, due)));
    this.s.armAlarm();
  }

  /** Its table, its alarm kind (a retry due), and what a restart and an erase do. */
  capability() {
    return {
      tables: REMOTE_CANCEL_TABLES,
      alarms: [{ kind: REMOTE_CANCELS_DUE, fire: () => ({ background: this.retry() }) }],
      // A cancel recorded by an instance that died before sending it (or between tries) goes now.
      started: () => void this.retry(true),
      stop: () => {
        this.stopped = true;
      },
    } satisfies Capability;
  }
}

function retryPolicy(env: Env): typeof DEFAULTS {
  return {
    base_ms: positiveSetting(env.A2A_CANCEL_RETRY_BASE_MS, DEFAULTS.base_ms),
    max_attempts: positiveSetting(env.A2A_CANCEL_MAX_ATTEMPTS, DEFAULTS.max_attempts),
  };
}
