// Every fold over events is a table with an entry for each event type that can change state (as Temporal's
// workflow activator has a handler for every job kind): a new such type fails the type check in each fold until
// that fold says what it does with it, even if only that it ignores it. Notices (NOTICE_TYPES) are optional
// entries, so a capability that only reports touches no fold. Each handler gets the event of its own type, so
// payloads are read as typed, never cast.
import type { EventOf, EventType, NoticeType, RuntimeEvent } from "./events";

/** The event of type `T`: a whole one, or (a fold that reads only some fields) `E` of that type. */
type Of<E extends { type: EventType }, T extends EventType> = [E] extends [RuntimeEvent] ? EventOf<T> : E & { type: T };

type Handler<A extends unknown[], R, E extends { type: EventType }, T extends EventType> = (e: Of<E, T>, ...args: A) => R;

/** A handler or "ignored" per event type, notices optional; `A` are the fold's own arguments (its state, its
 * output). */
export type EventTable<A extends unknown[], R, E extends { type: EventType } = RuntimeEvent> = {
  readonly [T in Exclude<EventType, NoticeType>]: Handler<A, R, E, T> | "ignored";
} & { readonly [T in NoticeType]?: Handler<A, R, E, T> };

/** One entry for each of `types`, named one by one (spread into a table). */
export function sameFor<T extends EventType, H>(entry: H, ...types: T[]): Record<T, H> {
  return Object.fromEntries(types.map((t) => [t, entry])) as Record<T, H>;
}

/** The entries of the types a fold ignores. */
export function ignored<T extends EventType>(...types: T[]): Record<T, "ignored"> {
  return sameFor("ignored" as const, ...types);
}

/** Runs the handler of `e`'s type; undefined when the table ignores that type, leaves out a notice, or does not
 * know it (a client may read the events of a newer server). */
export function onEvent<A extends unknown[], R, E extends { type: EventType }>(table: EventTable<A, R, E>, e: E, ...args: A): R | undefined {
  // The table is keyed by type, so the handler found takes the event of its own type.
  const handler = table[e.type] as ((e: E, ...args: A) => R) | "ignored" | undefined;
  return typeof handler === "function" ? handler(e, ...args) : undefined;
}
