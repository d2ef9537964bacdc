// One quota subject's counts, in its object's SQLite (the table's one writer is quota-object.ts): settled usage
// per quota and bucket, reservations of model calls in flight, the turns running, the thresholds that warned.
// Every check and its write happen in one synchronous run of the object, so two reservations never both take
// the last of a limit.
import type { QuotaAmounts, QuotaDimension, QuotaRule } from "../../protocol/quotas";
import { bucketOf, countsAfter, windowAt } from "./quota-windows";

/** A reservation not settled within this long is taken as spent at its amount (its session is gone, say). */
export const RESERVATION_TTL_MS = 3_600_000;
/** A running turn not heard from within this long stops counting toward concurrent_turns. */
export const LEASE_TTL_MS = 3_600_000;

export type Spend = { usd: number; input_tokens: number; output_tokens: number };

export class QuotaLedger {
  constructor(private readonly sql: SqlStorage) {}

  /** Settled usage in the window at `now`, the turns it started, and the oldest bucket counted. */
  settled(rule: QuotaRule, now: number): Spend & { turns: number; oldest: number | null } {
    const row = this.sql
      .exec<Spend & { turns: number; oldest: number | null }>(
        `SELECT coalesce(sum(usd), 0) AS usd, coalesce(sum(input_tokens), 0) AS input_tokens, coalesce(sum(output_tokens), 0) AS output_tokens,
                coalesce(sum(turns), 0) AS turns, min(bucket_start) AS oldest
         FROM usage_buckets WHERE quota_id = ? AND bucket_start > ?`,
        rule.id,
        countsAfter(rule.window, now),
      )
      .one();
    return row;
  }

  /** What the reservations in flight hold against `quotaId`. */
  reserved(quotaId: string): Spend {
    return this.sql
      .exec<Spend>(
        `SELECT coalesce(sum(usd), 0) AS usd, coalesce(sum(input_tokens), 0) AS input_tokens, coalesce(sum(output_tokens), 0) AS output_tokens
         FROM reservations WHERE quota_id = ?`,
        quotaId,
      )
      .one();
  }

  running(quotaId: string, now: number): number {
    return this.sql.exec<{ n: number }>("SELECT count(*) AS n FROM turn_leases WHERE quota_id = ? AND seen_at > ?", quotaId, now - LEASE_TTL_MS).one().n;
  }

  /** Usage of `rule` now, reservations included. */
  used(rule: QuotaRule, now: number): Required<QuotaAmounts> & { oldest: number | null } {
    const s = this.settled(rule, now);
    const r = this.reserved(rule.id);
    return {
      usd: s.usd + r.usd,
      input_tokens: s.input_tokens + r.input_tokens,
      output_tokens: s.output_tokens + r.output_tokens,
      turns: s.turns,
      concurrent_turns: this.running(rule.id, now),
      oldest: s.oldest,
    };
  }

  /** The first limit of `rule` that `more` would cross, or null. */
  crossed(rule: QuotaRule, more: QuotaAmounts, now: number): { dimension: QuotaDimension; limit: number; used: number; requested: number } | null {
    const used = this.used(rule, now);
    for (const [dimension, limit] of Object.entries(rule.limits) as [QuotaDimension, number | undefined][]) {
      const requested = more[dimension] ?? 0;
      if (limit === undefined || requested === 0) continue;
      if (used[dimension] + requested > limit + 1e-12) return { dimension, limit, used: used[dimension], requested };
    }
    return null;
  }

  reserve(id: string, turnId: string, rule: QuotaRule, spend: Spend, now: number): void {
    this.sql.exec(
      "INSERT OR IGNORE INTO reservations (id, quota_id, turn_id, usd, input_tokens, output_tokens, at) VALUES (?, ?, ?, ?, ?, ?, ?)",
      id,
      rule.id,
      turnId,
      spend.usd,
      spend.input_tokens,
      spend.output_tokens,
      now,
    );
  }

  /** Ends reservation `id`: its actual spend (null: nothing, a reservation given back) is added at `now`. */
  settle(id: string, rules: QuotaRule[], actual: Spend | null, now: number): void {
    this.sql.exec("DELETE FROM reservations WHERE id = ?", id);
    if (actual) for (const rule of rules) this.add(rule, { ...actual, turns: 0 }, now);
  }

  /** Reservations older than the TTL are settled at their amount: a call nobody settled may have been paid. */
  expire(rules: QuotaRule[], now: number): void {
    const stale = this.sql.exec<Spend & { id: string; quota_id: string }>("SELECT * FROM reservations WHERE at < ?", now - RESERVATION_TTL_MS).toArray();
    for (const r of stale) {
      const rule = rules.find((q) => q.id === r.quota_id);
      if (rule) this.add(rule, { usd: r.usd, input_tokens: r.input_tokens, output_tokens: r.output_tokens, turns: 0 }, now);
      this.sql.exec("DELETE FROM reservations WHERE id = ? AND quota_id = ?", r.id, r.quota_id);
    }
  }

  /** Starts counting turn `turnId`; false when it is counted already (a resumed turn). */
  begin(rule: QuotaRule, turnId: string, now: number): boolean {
    const fresh = this.sql.exec("INSERT OR IGNORE INTO turn_leases (quota_id, turn_id, started_at, seen_at) VALUES (?, ?, ?, ?)", rule.id, turnId, now, now);
    if (fresh.rowsWritten === 0) {
      this.seen(turnId, now);
      return false;
    }
    this.add(rule, { usd: 0, input_tokens: 0, output_tokens: 0, turns: 1 }, now);
    return true;
  }

  seen(turnId: string, now: number): void {
    this.sql.exec("UPDATE turn_leases SET seen_at = ? WHERE turn_id = ?", now, turnId);
  }

  /** The turn ended: it no longer runs. `refund`: it never ran (another quota refused it), so it does not count either. */
  end(turnId: string, rules: QuotaRule[], refund: boolean, now: number): void {
    const leases = this.sql.exec<{ quota_id: string }>("DELETE FROM turn_leases WHERE turn_id = ? RETURNING quota_id", turnId).toArray();
    if (!refund) return;
    for (const { quota_id } of leases) {
      const rule = rules.find((q) => q.id === quota_id);
      if (rule) this.add(rule, { usd: 0, input_tokens: 0, output_tokens: 0, turns: -1 }, now);
    }
  }

  /** Thresholds of `rule` crossed in this window and not warned yet; each is recorded as warned. */
  warnings(rule: QuotaRule, now: number): { threshold: number; dimension: QuotaDimension; used: number; limit: number }[] {
    if (!rule.warn_at?.length) return [];
    const used = this.used(rule, now);
    const start = windowAt(rule.window, now).start;
    const out: { threshold: number; dimension: QuotaDimension; used: number; limit: number }[] = [];
    for (const threshold of [...rule.warn_at].sort((a, b) => b - a)) {
      const hit = (Object.entries(rule.limits) as [QuotaDimension, number | undefined][]).find(
        ([d, limit]) => limit !== undefined && limit > 0 && used[d] >= limit * threshold,
      );
      if (!hit) continue;
      // A rolling window warns again once a whole window has passed since the last warning.
      const last = this.sql
        .exec<{ window_start: number }>("SELECT window_start FROM warnings WHERE quota_id = ? AND threshold = ?", rule.id, threshold)
        .toArray()[0];
      const again = typeof rule.window === "string" ? last?.window_start !== start : !last || last.window_start <= start;
      if (!again) continue;
      this.sql.exec(
        "INSERT OR REPLACE INTO warnings (quota_id, threshold, window_start) VALUES (?, ?, ?)",
        rule.id,
        threshold,
        typeof rule.window === "string" ? start : now,
      );
      out.push({ threshold, dimension: hit[0], used: used[hit[0]], limit: hit[1]! });
    }
    return out;
  }

  /** Buckets no window of `rules` counts any more go; so do a deleted quota's rows. */
  prune(rules: QuotaRule[], now: number): void {
    for (const rule of rules) this.sql.exec("DELETE FROM usage_buckets WHERE quota_id = ? AND bucket_start <= ?", rule.id, countsAfter(rule.window, now));
  }

  private add(rule: QuotaRule, d: Spend & { turns: number }, now: number): void {
    const { start, ms } = bucketOf(rule.window, now);
    this.sql.exec(
      `INSERT INTO usage_buckets (quota_id, bucket_start, bucket_ms, usd, input_tokens, output_tokens, turns) VALUES (?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (quota_id, bucket_start, bucket_ms) DO UPDATE SET usd = usd + excluded.usd, input_tokens = input_tokens + excluded.input_tokens,
         output_tokens = output_tokens + excluded.output_tokens, turns = turns + excluded.turns`,
      rule.id,
      start,
      ms,
      d.usd,
      d.input_tokens,
      d.output_tokens,
      d.turns,
    );
  }
}
