// The batching of model.delta commits (src/durable/delta-batcher.ts): the first delta after a quiet spell
// goes through at once, the ones right after it wait for one flush per window, and any other commit takes
// what waits, in order. End to end, test/streams.test.ts shows deltas still arrive while a model stalls.
import { describe, expect, it } from "vitest";
import { DeltaBatcher } from "../src/durable/delta-batcher";
import type { EventDraft } from "../src/protocol/events";

const delta = (text: string): EventDraft => ({ type: "model.delta", turn_id: "trn_1", step_id: "stp_1", payload: { text } });
const texts = (drafts: EventDraft[]) => drafts.map((d) => (d.payload as { text: string }).text);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("DeltaBatcher", () => {
  it("lets the first delta through, then flushes the deltas that follow once per window", async () => {
    const flushed: string[][] = [];
    const batcher: DeltaBatcher = new DeltaBatcher(() => flushed.push(texts(batcher.take())), 30);
    expect(batcher.add([delta("a")])).toBe(true);
    expect(texts(batcher.take())).toEqual(["a"]);

    expect(batcher.add([delta("b")])).toBe(false);
    expect(batcher.add([delta("c"), delta("d")])).toBe(false);
    expect(flushed).toEqual([]);
    await sleep(80);
    expect(flushed).toEqual([["b", "c", "d"]]);

    // After a quiet spell longer than the window, the next delta goes through at once again.
    expect(batcher.add([delta("e")])).toBe(true);
    expect(texts(batcher.take())).toEqual(["e"]);
  });

  it("a commit that takes the waiting deltas cancels their flush", async () => {
    let flushes = 0;
    const batcher = new DeltaBatcher(() => (flushes += 1), 30);
    expect(batcher.add([delta("a")])).toBe(true);
    batcher.take();
    expect(batcher.add([delta("b")])).toBe(false);
    expect(texts(batcher.take())).toEqual(["b"]);
    expect(batcher.take()).toEqual([]);
    await sleep(80);
    expect(flushes).toBe(0);
  });

  it("deltas a failed commit took go back ahead of the ones queued since", () => {
    const batcher = new DeltaBatcher(() => {}, 30);
    batcher.add([delta("a"), delta("b")]);
    const taken = batcher.take();
    batcher.add([delta("c")]);
    batcher.restore(taken);
    expect(texts(batcher.take())).toEqual(["a", "b", "c"]);
  });
});
