// Outbound subscriptions of a session: the rows (create, list, enable, delete) and their read model. Each
// subscription reads the event log from its own cursor; delivery (subscription-delivery.ts) moves it.

import { newSigningSecret } from "../../engine/standard-webhooks";
import { parseAllowlist, urlAllowed } from "../../engine/url-allowlist";
import { randomId } from "../../ids";
import { ApiError } from "../../protocol/errors";
import { redactUrl } from "../../protocol/redact";
import type { CreateSubscriptionBody, Subscription, SubscriptionSpec, UpdateSubscriptionBody } from "../../protocol/subscriptions";
import type { Capability } from "../capability";
import type { LogHost, SettingsHost, SqlHost } from "../hosts";
import { newRow, type SubscriptionRow, SubscriptionRows } from "./subscription-rows";

/** Subscriptions one session may hold. */
export const MAX_SUBSCRIPTIONS = 20;
/** How long a replaced secret signs beside the new one when the rotation names no overlap: a day. */
const DEFAULT_OVERLAP_S = 86_400;

/** The slice of the session the subscription table works on. */
export type SubscriptionsSession = LogHost & SettingsHost & SqlHost;

/**
 * Its table's steps since capabilities own theirs (the table itself is older: migrations/session/0007). A
 * rotation (PATCH {secret}) keeps the replaced secret signing beside the new one until previous_secret_until.
 */
const SUBSCRIPTION_TABLES = {
  name: "subscriptions",
  steps: [
    "ALTER TABLE subscriptions ADD COLUMN previous_secret TEXT; ALTER TABLE subscriptions ADD COLUMN previous_secret_until INTEGER;",
    "ALTER TABLE subscriptions ADD COLUMN a2a TEXT;",
  ],
};

export class SubscriptionTable {
  constructor(
    private readonly s: SubscriptionsSession,
    /** Called when a subscription may have something to deliver. */
    private readonly changed: () => void,
  ) {
    this.rows = new SubscriptionRows(s.sql);
  }
  /** The subscriptions table, written only here. */
  private readonly rows: SubscriptionRows;

  /** Adds a subscription; the secret (given or generated) is returned here only. */
  create(body: CreateSubscriptionBody | (SubscriptionSpec & { after?: number }), path = ""): Subscription & { secret: string } {
    if (!urlAllowed(body.url, parseAllowlist(this.s.bindings().TOOL_URL_ALLOWLIST))) {
      throw ApiError.validation([{ path: `${path}url`, reason: "is not under any TOOL_URL_ALLOWLIST prefix" }]);
    }
    const last = this.s.store.lastSequence;
    if (body.after !== undefined && body.after > last) {
      throw ApiError.validation([{ path: `${path}after`, reason: `is past the last event (${last})` }]);
    }
    if (this.count() >= MAX_SUBSCRIPTIONS) throw new ApiError("conflict", `The session already has ${MAX_SUBSCRIPTIONS} subscriptions; delete one first`);
    const row = newRow({
      subscription_id: randomId("sub"),
      url: body.url,
      types: body.types ? JSON.stringify(body.types) : null,
      secret: body.secret ?? newSigningSecret(),
      format: body.format ?? "events",
      cursor: body.after ?? last,
      a2a: null,
    });
    this.s.transact(() => this.rows.insert(row));
    this.changed();
    return { ...view(row), secret: row.secret };
  }

  list(): Subscription[] {
    return [...this.rows.ofFormat("events"), ...this.rows.ofFormat("otlp")].sort((a, b) => a.created_at - b.created_at).map(view);
  }

  /** Adds a row made elsewhere (an A2A push config), in place of `replaces` when given. */
  insert(row: SubscriptionRow, replaces?: string): void {
    this.s.transact(() => {
      if (replaces) this.rows.delete(replaces);
      this.rows.insert(row);
    });
    this.changed();
  }

  remove(id: string): void {
    this.s.transact(() => this.rows.delete(id));
    this.changed();
  }

  ofFormat(format: SubscriptionRow["format"]): SubscriptionRow[] {
    return this.rows.ofFormat(format);
  }

  /**
   * Disables, or re-enables (a failing one starts over with its current batch at once); rotates the secret:
   * the replaced one signs beside it for the overlap.
   */
  patch(id: string, body: UpdateSubscriptionBody): Subscription {
    const row = this.existing(id);
    const rotation =
      body.secret === undefined
        ? {}
        : { secret: body.secret, previous_secret: row.secret, previous_secret_until: Date.now() + (body.overlap_s ?? DEFAULT_OVERLAP_S) * 1000 };
    const enabled = body.enabled === undefined ? {} : { status: body.enabled ? ("active" as const) : ("disabled" as const), attempts: 0, next_attempt_at: 0 };
    this.update(id, { ...rotation, ...enabled });
    if (body.enabled !== undefined) this.changed();
    return view(this.existing(id));
  }

  delete(id: string): { deleted: true } {
    this.existing(id);
    this.remove(id);
    return { deleted: true };
  }

  row(id: string): SubscriptionRow | null {
    return this.rows.byId(id);
  }

  /** Active subscriptions with events after their cursor (or a batch in flight). */
  pending(): SubscriptionRow[] {
    return this.rows.pending(this.s.store.lastSequence);
  }

  count(status?: "active"): number {
    return this.rows.count(status);
  }

  /** The first turn end in the log after `after`, up to `last` (where a batch for a subscription by turns ends). */
  nextTurnEnd(after: number, last: number): { sequence: number; turn_id: string } | null {
    return this.rows.nextTurnEnd(after, last);
  }

  update(id: string, fields: Partial<SubscriptionRow>): void {
    this.s.transact(() => this.rows.update(id, fields));
  }

  private existing(id: string): SubscriptionRow {
    const row = this.row(id);
    if (!row || row.format === "a2a") throw ApiError.notFound("Subscription", id);
    return row;
  }

  /** Its session operations. */
  capability() {
    return {
      tables: SUBSCRIPTION_TABLES,
      operations: {
        createSubscription: ({ body }) => this.create(body),
        listSubscriptions: () => ({ subscriptions: this.list() }),
        updateSubscription: ({ params, body }) => this.patch(params.subscription_id, body),
        deleteSubscription: ({ params }) => this.delete(params.subscription_id),
      },
    } satisfies Capability;
  }
}

function view(row: SubscriptionRow): Subscription {
  const { secret: _secret, previous_secret: _previous, previous_secret_until: until, batch_id: _id, batch_end: _end, types, a2a: _a2a, format, ...rest } = row;
  const overlap = until !== null && until > Date.now() ? until : null;
  // Never "a2a": those rows are read by a2a-push.ts.
  return {
    ...rest,
    format: format as Subscription["format"],
    url: redactUrl(rest.url),
    types: types ? (JSON.parse(types) as string[]) : null,
    previous_secret_until: overlap,
  };
}
