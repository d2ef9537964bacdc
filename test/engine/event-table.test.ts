// The tables every fold over events is written as (src/protocol/event-table.ts): each handler gets the event
// of its own type, an ignored type or one the table does not know (a newer server's) is passed over, and a
// table that leaves a type out does not type-check.
import { describe, expect, it } from "vitest";
import { type EventTable, ignored, onEvent, sameFor } from "../../src/protocol/event-table";
import { EVENT_TYPES, type EventType, isNotice, NOTICE_TYPES, type NoticeType, type RuntimeEvent } from "../../src/protocol/events";

const event = (type: string, payload: unknown): RuntimeEvent =>
  ({ event_id: "e", timestamp: 0, sequence: 1, schema_version: 1, session_id: "s", thread_id: "s", type, payload }) as RuntimeEvent;

type Named = Exclude<EventType, NoticeType | "model.delta" | "turn.cancelled">;
const rest = EVENT_TYPES.filter((t): t is Named => !isNotice(t) && t !== "model.delta" && t !== "turn.cancelled");

describe("event tables", () => {
  const table: EventTable<[string[]], number> = {
    ...ignored(...rest),
    "model.delta": (e, seen) => seen.push(`delta ${e.payload.text}`),
    "turn.cancelled": (e, seen) => seen.push(`cancelled ${e.payload.reason}`),
  };

  it("runs the handler of the event's type with the fold's arguments and returns what it returns", () => {
    const seen: string[] = [];
    expect(onEvent(table, event("model.delta", { text: "hi" }), seen)).toBe(1);
    expect(onEvent(table, event("turn.cancelled", { reason: "user" }), seen)).toBe(2);
    expect(seen).toEqual(["delta hi", "cancelled user"]);
  });

  it("passes over an ignored type, and a type the table does not know", () => {
    const seen: string[] = [];
    expect(onEvent(table, event("turn.started", { agent: "a", model: "m" }), seen)).toBeUndefined();
    expect(onEvent(table, event("some.future.event", {}), seen)).toBeUndefined();
    expect(seen).toEqual([]);
  });

  it("leaves notices out unless it handles them", () => {
    const seen: string[] = [];
    expect(onEvent(table, event("quota.warning", { quota_id: "q" }), seen)).toBeUndefined();
    const warned: EventTable<[string[]], number> = { ...table, "quota.warning": (e, out) => out.push(e.payload.quota_id) };
    expect(onEvent(warned, event("quota.warning", { quota_id: "q" }), seen)).toBe(1);
    expect(seen).toEqual(["q"]);
    expect(NOTICE_TYPES.every((t) => EVENT_TYPES.includes(t))).toBe(true);
  });

  it("gives several types one entry with sameFor", () => {
    const names: EventTable<[], string> = { ...sameFor((e: RuntimeEvent) => e.type, ...EVENT_TYPES) };
    expect(onEvent(names, event("tool.started", {}))).toBe("tool.started");
  });

  it("refuses a table that leaves an event type out", () => {
    // @ts-expect-error model.delta has no entry
    const partial: EventTable<[], void> = { ...ignored(...rest), "turn.cancelled": "ignored" };
    expect(Object.keys(partial)).toHaveLength(EVENT_TYPES.length - NOTICE_TYPES.length - 1);
  });
});
