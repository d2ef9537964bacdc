// The log verifier itself: each invariant is detected on a log that breaks it, and a sound log passes.
import { describe, expect, it } from "vitest";
import { verifyLog } from "../../src/engine/verify-log";
import type { RuntimeEvent } from "../../src/protocol/events";

type E = Pick<RuntimeEvent, "type" | "event_id" | "sequence" | "turn_id" | "step_id" | "tool_call_id" | "action_id"> & { payload?: unknown };

/** Numbers the events 1..n with fresh ids, as a sound store would. */
function log(...events: Omit<E, "sequence" | "event_id">[]): E[] {
  return events.map((e, i) => ({ ...e, sequence: i + 1, event_id: `evt_${i + 1}` }));
}

const t = "trn_1";
const sound = log(
  { type: "turn.submitted", turn_id: t },
  { type: "turn.started", turn_id: t },
  { type: "model.requested", turn_id: t, step_id: "s1" },
  { type: "model.completed", turn_id: t, step_id: "s1" },
  { type: "action.required", turn_id: t, action_id: "a1", tool_call_id: "c1" },
  { type: "action.resolved", turn_id: t, action_id: "a1", tool_call_id: "c1" },
  { type: "tool.started", turn_id: t, tool_call_id: "c1" },
  { type: "tool.result", turn_id: t, tool_call_id: "c1" },
  { type: "turn.completed", turn_id: t },
);

describe("verifyLog", () => {
  it("passes a sound log, and any prefix of it", () => {
    for (let n = 0; n <= sound.length; n++) expect(verifyLog(sound.slice(0, n))).toEqual([]);
  });

  it("detects a gap, a duplicate sequence and a repeated event id", () => {
    const gap = sound.filter((e) => e.sequence !== 3);
    expect(verifyLog(gap)[0]).toMatch(/#4 model.completed: sequence 4 where 3 was due/);
    const dup = [...sound.slice(0, 3), sound[2]!, ...sound.slice(3)];
    expect(verifyLog(dup).join("\n")).toMatch(/sequence 3 where 4 was due/);
    const sameId = sound.map((e) => (e.sequence === 2 ? { ...e, event_id: "evt_1" } : e));
    expect(verifyLog(sameId)).toEqual(["#2 turn.started: event_id evt_1 repeats"]);
  });

  it("detects a tool.result without tool.started and an action.resolved without action.required", () => {
    const noStart = log({ type: "tool.result", turn_id: t, tool_call_id: "c9" });
    expect(verifyLog(noStart)).toEqual(["#1 tool.result: tool.result for c9 without tool.started"]);
    const noRequest = log({ type: "action.resolved", turn_id: t, action_id: "a9" });
    expect(verifyLog(noRequest)).toEqual(["#1 action.resolved: action.resolved for a9 without action.required"]);
  });

  it("accepts one tool.result.late after its turn's end for a call closed in it; detects one too early, repeated or for an unknown call", () => {
    const late = (tool_call_id: string) => ({ type: "tool.result.late" as const, payload: { turn_id: t, tool_call_id } });
    expect(verifyLog(log(...sound, late("c1")))).toEqual([]);
    expect(verifyLog(log(...sound.slice(0, -1), late("c1"), sound.at(-1)!))).toEqual([
      "#9 tool.result.late: tool.result.late for c1 before its turn trn_1 ended",
    ]);
    expect(verifyLog(log(...sound, late("c1"), late("c1")))).toEqual(["#11 tool.result.late: a second tool.result.late for c1"]);
    expect(verifyLog(log(...sound, late("c7")))).toEqual(["#10 tool.result.late: tool.result.late for c7, not a closed call"]);
  });

  it("detects a model call, a tool call or an action left open when the turn ends", () => {
    const open = log(
      { type: "model.requested", turn_id: t, step_id: "s1" },
      { type: "tool.started", turn_id: t, tool_call_id: "c1" },
      { type: "action.required", turn_id: t, action_id: "a1" },
      { type: "turn.cancelled", turn_id: t },
    );
    expect(verifyLog(open)).toEqual([
      "#4 turn.cancelled: turn trn_1 ended with model call s1 still open",
      "#4 turn.cancelled: turn trn_1 ended with tool call c1 still open",
      "#4 turn.cancelled: turn trn_1 ended with action a1 still open",
    ]);
  });

  it("detects events after a turn's end and a second terminal event", () => {
    const after = log({ type: "turn.completed", turn_id: t }, { type: "model.delta", turn_id: t }, { type: "turn.failed", turn_id: t });
    expect(verifyLog(after)).toEqual([
      "#2 model.delta: event of turn trn_1 after its terminal event",
      "#3 turn.failed: event of turn trn_1 after its terminal event",
      "#3 turn.failed: turn trn_1 has a second terminal event",
    ]);
  });
});
