// The subscriptions table (subscriptions.ts, subscription-delivery.ts): its rows and the named queries on them,
// and the one read of the log that OTLP delivery makes. SubscriptionTable is the table's one writer.
import type { Subscription } from "../../protocol/subscriptions";

export type SubscriptionRow = Omit<Subscription, "types" | "format"> & {
  types: string | null;
  /** "a2a": an A2A task's push notification config (a2a-push.ts). */
  format: Subscription["format"] | "a2a";
  /** The push config of an "a2a" row, as JSON; null for the others. */
  a2a: string | null;
  secret: string;
  previous_secret: string | null;
  batch_id: string | null;
  batch_end: number | null;
};

/** A new row: what it delivers, where and from where, with its delivery state not yet begun. */
export function newRow(r: Pick<SubscriptionRow, "subscription_id" | "url" | "types" | "secret" | "format" | "cursor" | "a2a">): SubscriptionRow {
  const { subscription_id, url, types, secret, format, cursor, a2a } = r;
  const fresh = { status: "active" as const, attempts: 0, last_error: null, next_attempt_at: 0, batch_id: null, batch_end: null };
  return { subscription_id, url, types, secret, previous_secret: null, previous_secret_until: null, format, cursor, ...fresh, created_at: Date.now(), a2a };
}

export class SubscriptionRows {
  constructor(private readonly sql: SqlStorage) {}

  insert(row: SubscriptionRow): void {
    const keys = Object.keys(row);
    this.sql.exec(`INSERT INTO subscriptions (${keys.join(", ")}) VALUES (${keys.map(() => "?").join(", ")})`, ...Object.values(row));
  }

  update(id: string, fields: Partial<SubscriptionRow>): void {
    const keys = Object.keys(fields);
    this.sql.exec(
      `UPDATE subscriptions SET ${keys.map((k) => `${k} = ?`).join(", ")} WHERE subscription_id = ?`,
      ...(Object.values(fields) as (string | number | null)[]),
      id,
    );
  }

  delete(id: string): void {
    this.sql.exec("DELETE FROM subscriptions WHERE subscription_id = ?", id);
  }

  byId(id: string): SubscriptionRow | null {
    return this.rows("WHERE subscription_id = ?", id)[0] ?? null;
  }

  /** Every row of one format, the oldest first. */
  ofFormat(format: SubscriptionRow["format"]): SubscriptionRow[] {
    return this.rows("WHERE format = ? ORDER BY created_at, subscription_id", format);
  }

  /** Active subscriptions with events after their cursor, up to `last`, or a batch in flight. */
  pending(last: number): SubscriptionRow[] {
    return this.rows("WHERE status = 'active' AND (cursor < ? OR batch_id IS NOT NULL)", last);
  }

  /** Active rows of any format, or the session's own subscriptions (A2A push configs are counted per task). */
  count(status?: "active"): number {
    const where = status ? "WHERE status = 'active'" : "WHERE format != 'a2a'";
    return this.sql.exec<{ n: number }>(`SELECT count(*) AS n FROM subscriptions ${where}`).one().n;
  }

  /** The first turn that ended after sequence `after` and by `last`: where an OTLP batch ends. */
  nextTurnEnd(after: number, last: number): { sequence: number; turn_id: string } | null {
    return (
      this.sql
        .exec<{ sequence: number; turn_id: string }>(
          "SELECT sequence, turn_id FROM events WHERE sequence > ? AND sequence <= ? AND type IN ('turn.completed', 'turn.failed', 'turn.cancelled') ORDER BY sequence LIMIT 1",
          after,
          last,
        )
        .toArray()[0] ?? null
    );
  }

  private rows(where: string, ...args: (string | number)[]): SubscriptionRow[] {
    return this.sql.exec<SubscriptionRow>(`SELECT * FROM subscriptions ${where}`, ...args).toArray();
  }
}
