// The events that wait a moment for their commit (src/session/store/pending-writes.ts): the first text delta after a
// quiet spell is flushed right after the current task, the ones after it once per window; a tool result held
// while its step's other calls run waits at most the hold; any other commit takes what waits, in order, with the
// latest held checkpoint. End to end, test/session/streams/streams.test.ts shows deltas still arrive while a model stalls;
// test/engine/loop.test.ts shows which results the loop offers to hold.
import { describe, expect, it } from "vitest";
import type { EventDraft } from "../../src/protocol/events";
import { PendingWrites } from "../../src/session/store/pending-writes";
import { toolResultDraft } from "../support/drafts";

const delta = (text: string): EventDraft => ({ type: "model.delta", turn_id: "trn_1", step_id: "stp_1", payload: { text } });
const result = (id: string): EventDraft => toolResultDraft("trn_1", id, "lookup", id);
const names = (drafts: EventDraft[]) => drafts.map((d) => (d.type === "model.delta" ? (d.payload as { text: string }).text : d.tool_call_id));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("PendingWrites", () => {
  it("flushes the first delta after a quiet spell right after the current task, then the ones that follow once per window", async () => {
    const flushed: (string | undefined)[][] = [];
    const pending: PendingWrites = new PendingWrites(() => flushed.push(names(pending.take().drafts)), 30);
    pending.deltas([delta("a")]);
    pending.deltas([delta("b")]); // arrived with it: written together
    expect(flushed).toEqual([]);
    await sleep(0);
    expect(flushed).toEqual([["a", "b"]]);

    pending.deltas([delta("c")]);
    pending.deltas([delta("d"), delta("e")]);
    await sleep(5);
    expect(flushed).toHaveLength(1); // within the window after the last flush
    await sleep(80);
    expect(flushed).toEqual([
      ["a", "b"],
      ["c", "d", "e"],
    ]);

    // After a quiet spell longer than the window, the next delta goes right after the current task again.
    pending.deltas([delta("f")]);
    await sleep(0);
    expect(flushed.at(-1)).toEqual(["f"]);
  });

  it("a commit that takes the waiting deltas cancels their flush", async () => {
    let flushes = 0;
    const pending = new PendingWrites(() => (flushes += 1), 30);
    pending.deltas([delta("a")]);
    expect(names(pending.take().drafts)).toEqual(["a"]);
    pending.deltas([delta("b")]);
    expect(names(pending.take().drafts)).toEqual(["b"]);
    expect(pending.take()).toEqual({ drafts: [], checkpoint: null });
    await sleep(80);
    expect(flushes).toBe(0);
  });

  it("events a failed commit took go back ahead of the ones queued since", () => {
    const pending = new PendingWrites(() => {}, 30);
    pending.deltas([delta("a"), delta("b")]);
    const taken = pending.take();
    pending.deltas([delta("c")]);
    pending.restore(taken);
    expect(names(pending.take().drafts)).toEqual(["a", "b", "c"]);
  });

  it("holds results at most the hold, with the latest checkpoint, and a delta window does not delay them", async () => {
    const flushed: { drafts: (string | undefined)[]; checkpoint: string | null }[] = [];
    const written: string[] = [];
    const pending: PendingWrites = new PendingWrites(
      () => {
        const t = pending.take();
        t.checkpoint?.();
        flushed.push({ drafts: names(t.drafts), checkpoint: written.at(-1) ?? null });
      },
      1_000,
      5,
    );
    pending.deltas([delta("a")]);
    pending.take();
    pending.deltas([delta("b")]); // waits for a window of 1 s
    pending.hold([result("call_1")], () => written.push("state after call_1"));
    pending.hold([result("call_2")], () => written.push("state after call_2"));
    await sleep(60);
    expect(flushed).toEqual([{ drafts: ["b", "call_1", "call_2"], checkpoint: "state after call_2" }]);
    expect(written).toEqual(["state after call_2"]);
  });

  it("a commit takes held results and their checkpoint first; a failed one puts both back", () => {
    const pending = new PendingWrites(() => {}, 30, 1_000);
    const checkpoint = () => {};
    pending.hold([result("call_1")], checkpoint);
    const taken = pending.take();
    expect(names(taken.drafts)).toEqual(["call_1"]);
    expect(taken.checkpoint).toBe(checkpoint);
    pending.restore(taken);
    const again = pending.take();
    expect(names(again.drafts)).toEqual(["call_1"]);
    expect(again.checkpoint).toBe(checkpoint);
  });
});
