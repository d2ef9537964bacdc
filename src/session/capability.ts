// What a part of the session object (the queue, approvals, the turn runner, schedules, subscriptions, the
// indexer, forks, replays, the read views) brings to it: handlers for the session operations it serves (by
// their operationId, typed by operations.ts), the kinds of alarm entries it owns, and what it
// does when events are committed. The object registers them (session-object.ts) and dispatches to them.
import type { TableMigrations } from "../objects/migrate";
import type { Handlers } from "./operations";
import type { StoredEvent } from "./store/session-store";

/** What firing an alarm kind did: `stop` when the session is gone, `background` for work that goes on after the alarm is set again. */
export type AlarmOutcome = void | { stop?: true; background?: Promise<void> };

export interface AlarmKind {
  /** The entry's kind in the schedule table, or with `prefix` the start of it (the rest is passed as `key`). */
  kind: string;
  prefix?: true;
  fire(now: number, key: string): AlarmOutcome | Promise<AlarmOutcome>;
}

export interface Capability {
  /** The handlers of the session operations it serves (written `satisfies Partial<Handlers>`, so they are typed by their declarations). */
  operations?: Partial<Handlers>;
  alarms?: AlarmKind[];
  /**
   * The tables it owns and their migrations, applied under its name after the core's (migrate.ts). Tables made
   * before capabilities owned theirs stay in the core's numbered list (migrations/session/).
   */
  tables?: TableMigrations;
  /** Called after each commit with the events it stored (none for a commit of state alone). */
  committed?(events: StoredEvent[]): void;
  /** The object started over a stored session (a restart, an eviction): what the last instance left goes on. */
  started?(): void;
  /** The session is being erased: background work stops (every capability's, before anything is erased). */
  stop?(): void;
  /** The session is being erased: what it has outside its object goes (in the list's order, after every stop). */
  erase?(reason: string): void | Promise<void>;
}

/** The alarm kind that owns a due entry: its exact kind, or the kind it starts with. */
export function alarmFor(capabilities: readonly Capability[], entry: string): { kind: AlarmKind; key: string } | null {
  for (const c of capabilities) {
    for (const kind of c.alarms ?? []) {
      if (kind.prefix ? entry.startsWith(kind.kind) : entry === kind.kind) return { kind, key: entry.slice(kind.kind.length) };
    }
  }
  return null;
}
