// What a part of the session object (the queue, approvals, the turn runner, schedules, subscriptions, the
// indexer, forks, replays, the read views) brings to it: handlers for the session operations it serves (by
// their name in the declarations, src/protocol/operations/), the kinds of alarm entries it owns, and what it
// does when events are committed. The object registers them (session-object.ts) and dispatches to them.
import type { TurnTrace } from "../protocol/events";
import type { SessionHandler } from "../protocol/operations/operation";
import type { StoredEvent } from "./store/session-store";

/** What a session operation's handler gets: the operation's path parameters and validated body, and who calls. */
export interface OperationInput {
  params: Record<string, string>;
  /** The operation's validated query (the bounds of a page of the log or of the conversation). */
  query?: { after?: number; limit?: number; before?: string };
  body?: unknown;
  /** Who calls (a hash of the API key, or a token's id), recorded on decisions. */
  by: string;
  /** The caller's trace (its W3C traceparent), which a turn it submits joins. */
  trace?: TurnTrace;
  /** The surface a turn comes from when its defaults differ: "chat" takes the agent's chat_on_busy. */
  via?: "chat";
}

export type OperationHandler = (input: OperationInput) => unknown;

/** What firing an alarm kind did: `stop` when the session is gone, `background` for work that goes on after the alarm is set again. */
export type AlarmOutcome = void | { stop?: true; background?: Promise<void> };

export interface AlarmKind {
  /** The entry's kind in the schedule table, or with `prefix` the start of it (the rest is passed as `key`). */
  kind: string;
  prefix?: true;
  fire(now: number, key: string): AlarmOutcome | Promise<AlarmOutcome>;
}

export interface Capability {
  operations?: Partial<Record<SessionHandler, OperationHandler>>;
  alarms?: AlarmKind[];
  /** Called after each commit with the events it stored (none for a commit of state alone). */
  committed?(events: StoredEvent[]): void;
}

/** The capabilities' handlers by operation name (each name served once). */
export function operationTable(capabilities: Capability[]): Map<SessionHandler, OperationHandler> {
  const table = new Map<SessionHandler, OperationHandler>();
  for (const c of capabilities) {
    for (const [name, handler] of Object.entries(c.operations ?? {}) as [SessionHandler, OperationHandler][]) {
      if (table.has(name)) throw new Error(`session operation ${name} is served twice`);
      table.set(name, handler);
    }
  }
  return table;
}

/** The alarm kind that owns a due entry: its exact kind, or the kind it starts with. */
export function alarmFor(capabilities: Capability[], entry: string): { kind: AlarmKind; key: string } | null {
  for (const c of capabilities) {
    for (const kind of c.alarms ?? []) {
      if (kind.prefix ? entry.startsWith(kind.kind) : entry === kind.kind) return { kind, key: entry.slice(kind.kind.length) };
    }
  }
  return null;
}
