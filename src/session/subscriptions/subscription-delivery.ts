// Delivery of subscriptions: from each one's cursor, in order, in batches of at most MAX_BATCH_EVENTS events
// or MAX_BATCH_BYTES, POSTed signed (Standard Webhooks, and the deprecated x-runtime-signature). The batch's bounds and id are stored before the request goes out, so a
// crash between sending and advancing the cursor resends the same batch under the same id (at least once,
// never skipped). A 2xx advances the cursor; anything else backs off exponentially, through the object's
// alarm, until the subscription is marked failing after the maximum number of attempts.

import { standardWebhookHeaders } from "../../engine/standard-webhooks";
import { parseAllowlist, urlAllowed } from "../../engine/url-allowlist";
import { type Env, positiveSetting } from "../../env";
import { otlpTraceBody } from "../../views/otlp-spans";
import type { Capability } from "../capability";
import type { LogHost, SettingsHost, TimerHost } from "../hosts";
import { pushBatch, pushHeaders } from "./a2a-push";
import type { SubscriptionRow } from "./subscription-rows";
import type { SubscriptionTable } from "./subscriptions";
import { BATCH_ID_HEADER, SIGNATURE_HEADER, signBody } from "./webhook-signature";

/** The deadline entry (in the object's schedule table) for the next delivery attempt. */
export const SUBSCRIPTIONS_DUE = "subscriptions";
export const MAX_BATCH_EVENTS = 100;
export const MAX_BATCH_BYTES = 1024 * 1024;
/** Retry policy defaults (SUBSCRIPTION_RETRY_BASE_MS, SUBSCRIPTION_MAX_ATTEMPTS, SUBSCRIPTION_TIMEOUT_MS). */
export const RETRY_DEFAULTS = { base_ms: 1000, max_delay_ms: 5 * 60_000, max_attempts: 10, timeout_ms: 10_000 };
/** While a delivery runs, the alarm stays set this far ahead: it resumes delivery if the object goes away. */
const BACKSTOP_MS = 30_000;
/** Events read from the log at a time while looking for a batch's matching events. */
const SCAN = 500;

interface Batch {
  id: string;
  end: number;
  /** The request bodies (one, but for an A2A push config's event that makes several); none when nothing up to `end` is for this subscription. */
  bodies: string[];
  /** An A2A push config's last delivery: its task ended. */
  done?: boolean;
}

/** The slice of the session delivery works on. */
export type DeliverySession = LogHost & TimerHost & SettingsHost;

export class SubscriptionDelivery {
  private readonly running = new Map<string, Promise<void>>();
  /** Active subscriptions (null: not counted yet), so that a session without any pays nothing per commit. */
  private active: number | null = null;
  /** Set when the session is erased: a delivery on its way stops instead of writing to the dropped tables. */
  private stopped = false;

  constructor(
    private readonly s: DeliverySession,
    private readonly table: Pick<SubscriptionTable, "count" | "nextTurnEnd" | "pending" | "row" | "update">,
  ) {}

  /** After a commit: new events may be due to a subscription that is idle. */
  poke(): void {
    this.active ??= this.table.count("active");
    if (this.active > this.running.size) void this.run();
  }

  /** A subscription was added, changed or removed. */
  changed(): void {
    this.active = null;
    void this.run();
  }

  /** Starts delivering every pending subscription that is not backing off; resolves when they are idle. */
  run(): Promise<void> {
    if (this.stopped) return Promise.resolve();
    const now = Date.now();
    let started = false;
    for (const row of this.table.pending()) {
      if (row.next_attempt_at <= now && !this.running.has(row.subscription_id)) {
        started = true;
        const id = row.subscription_id;
        this.running.set(
          id,
          this.deliver(id)
            .catch((err) => console.error("subscription delivery failed", err))
            .finally(() => {
              this.running.delete(id);
              this.rearm();
            }),
        );
      }
    }
    if (started) this.rearm();
    return Promise.all(this.running.values()).then(() => undefined);
  }

  private async deliver(id: string): Promise<void> {
    for (;;) {
      const row = this.table.row(id);
      if (row?.status !== "active" || row.next_attempt_at > Date.now()) return;
      const batch = this.batch(row);
      if (!batch) return;
      if (batch.bodies.length === 0) {
        // Nothing in this stretch of the log matches: the cursor passes over it.
        this.table.update(id, { cursor: batch.end });
        continue;
      }
      if (row.batch_id !== batch.id) this.table.update(id, { batch_id: batch.id, batch_end: batch.end });
      const error = await this.sendAll(row, batch);
      if (this.stopped) return;
      if (error === null) {
        const ended = batch.done ? { status: "disabled" as const } : {};
        this.table.update(id, { cursor: batch.end, batch_id: null, batch_end: null, attempts: 0, last_error: null, next_attempt_at: 0, ...ended });
        if (batch.done) this.active = null;
        continue;
      }
      const policy = retryPolicy(this.s.bindings());
      const attempts = row.attempts + 1;
      const failing = attempts >= policy.max_attempts;
      if (failing) this.active = null;
      const delay = Math.min(policy.base_ms * 2 ** (attempts - 1), policy.max_delay_ms);
      this.table.update(id, {
        attempts,
        last_error: error,
        status: failing ? "failing" : "active",
        next_attempt_at: failing ? 0 : Date.now() + delay,
      });
      return;
    }
  }

  /** The batch in flight (its stored bounds), or the next one after the cursor; null when there is none. */
  private batch(row: SubscriptionRow): Batch | null {
    const last = row.batch_end ?? this.s.store.lastSequence;
    if (row.cursor >= last) return null;
    if (row.format === "a2a") {
      const next = pushBatch(row, (turnId) => this.s.store.eventsOfTurn(turnId), last);
      return { ...next, id: this.batchId(row, next.end) };
    }
    return row.format === "otlp" ? this.traceBatch(row, last) : this.eventBatch(row, last);
  }

  /** Events matching the subscription's types, up to MAX_BATCH_EVENTS or MAX_BATCH_BYTES. */
  private eventBatch(row: SubscriptionRow, last: number): Batch {
    const types = row.types ? new Set(JSON.parse(row.types) as string[]) : null;
    const bodies: string[] = [];
    let end = row.cursor;
    let bytes = 0;
    scan: for (let after = row.cursor; after < last; after = end) {
      const page = this.s.store.readEvents(after, Math.min(SCAN, last - after));
      if (page.length === 0) break;
      for (const e of page) {
        if (!types || types.has(e.type)) {
          if (bodies.length === MAX_BATCH_EVENTS || (bodies.length > 0 && bytes + e.body.length > MAX_BATCH_BYTES)) break scan;
          bodies.push(e.body);
          bytes += e.body.length;
        }
        end = e.sequence;
      }
    }
    const id = this.batchId(row, end);
    const head = { subscription_id: row.subscription_id, session_id: this.s.row().session_id, batch_id: id };
    // The stored event bodies go out as they are, without parsing and re-serializing them.
    return { id, end, bodies: bodies.length === 0 ? [] : [`${JSON.stringify(head).slice(0, -1)},"events":[${bodies.join(",")}]}`] };
  }

  /** OTLP: the spans of the next turn that ended after the cursor (its events are read by turn, wherever they are). */
  private traceBatch(row: SubscriptionRow, last: number): Batch {
    const ended = this.table.nextTurnEnd(row.cursor, last);
    if (!ended) return { id: this.batchId(row, last), end: last, bodies: [] };
    return { id: this.batchId(row, ended.sequence), end: ended.sequence, bodies: [otlpTraceBody(this.s.store.eventsOfTurn(ended.turn_id))] };
  }

  private batchId(row: SubscriptionRow, end: number): string {
    return row.batch_id ?? `${row.subscription_id}_${row.cursor + 1}_${end}`;
  }

  /**
   * POSTs a batch's bodies in order, stopping at the first that fails; null when all got a 2xx. A body after the
   * first goes under the batch id with its index, so a batch sent again resends each under its own id.
   */
  private async sendAll(row: SubscriptionRow, batch: Batch): Promise<string | null> {
    for (const [i, body] of batch.bodies.entries()) {
      const error = await this.send(row, i === 0 ? batch.id : `${batch.id}_${i}`, body);
      if (error !== null) return error;
    }
    return null;
  }

  /** POSTs one body; null on a 2xx, otherwise what went wrong. */
  private async send(row: SubscriptionRow, batchId: string, body: string): Promise<string | null> {
    const env = this.s.bindings();
    // The allowlist may have narrowed since the subscription was made.
    if (!urlAllowed(row.url, parseAllowlist(env.TOOL_URL_ALLOWLIST))) return "the URL is no longer under TOOL_URL_ALLOWLIST";
    try {
      const nowS = Math.floor(Date.now() / 1000);
      const rotating = row.previous_secret !== null && (row.previous_secret_until ?? 0) > Date.now() ? [row.previous_secret] : [];
      const res = await fetch(row.url, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          // Standard Webhooks: the batch id is the message id, the same on every attempt of the batch.
          ...(await standardWebhookHeaders(batchId, body, [row.secret, ...rotating], nowS)),
          [SIGNATURE_HEADER]: await signBody(row.secret, body, nowS),
          [BATCH_ID_HEADER]: batchId,
          ...pushHeaders(row),
        },
        body,
        redirect: "manual",
        signal: AbortSignal.timeout(retryPolicy(env).timeout_ms),
      });
      await res.body?.cancel();
      return res.status >= 200 && res.status < 300 ? null : `HTTP ${res.status}`;
    } catch (err) {
      return err instanceof Error && err.name === "TimeoutError" ? "timed out" : `request failed: ${err instanceof Error ? err.message : String(err)}`;
    }
  }

  /** The session is being erased: no delivery starts or goes on, and the alarm is left alone. */
  stop(): void {
    this.stopped = true;
  }

  /** Points the deadline entry at the next attempt: a backoff's end, or the backstop of a running delivery. */
  private rearm(): void {
    if (this.stopped) return;
    const now = Date.now();
    const due = this.table
      .pending()
      .map((r) => (this.running.has(r.subscription_id) ? now + BACKSTOP_MS : Math.max(r.next_attempt_at, now)))
      .reduce((a, b) => Math.min(a, b), Number.POSITIVE_INFINITY);
    this.s.transact(() =>
      due === Number.POSITIVE_INFINITY ? this.s.store.timers.unschedule(SUBSCRIPTIONS_DUE) : this.s.store.timers.schedule(SUBSCRIPTIONS_DUE, due),
    );
    this.s.armAlarm();
  }

  /** Its alarm kind (a delivery due; it goes on after the alarm is set again) and its reaction to commits. */
  capability() {
    return {
      alarms: [{ kind: SUBSCRIPTIONS_DUE, fire: () => ({ background: this.run() }) }],
      committed: () => this.poke(),
      // A delivery cut off by the restart goes on at once (its batch keeps its id).
      started: () => this.poke(),
      stop: () => this.stop(),
    } satisfies Capability;
  }
}

function retryPolicy(env: Env): typeof RETRY_DEFAULTS {
  return {
    base_ms: positiveSetting(env.SUBSCRIPTION_RETRY_BASE_MS, RETRY_DEFAULTS.base_ms),
    max_delay_ms: RETRY_DEFAULTS.max_delay_ms,
    max_attempts: positiveSetting(env.SUBSCRIPTION_MAX_ATTEMPTS, RETRY_DEFAULTS.max_attempts),
    timeout_ms: positiveSetting(env.SUBSCRIPTION_TIMEOUT_MS, RETRY_DEFAULTS.timeout_ms),
  };
}
