// The replay engine (src/engine/recorded-model.ts, recorded-tools.ts) driven through the loop: a turn is run
// once with a scripted model, then again with the recorded model over a live model that counts its calls, and
// with the recorded tools over tools that count their runs.

import { describe, expect, it } from "vitest";
import type { TurnSetup } from "../../src/engine/ports";
import { type Divergence, RecordedModel, recordedCalls, recordingOf } from "../../src/engine/recorded-model";
import { recordedResults, replayTools, type ToolReplayMode } from "../../src/engine/recorded-tools";
import { canonicalJson, requestFingerprint } from "../../src/engine/request-fingerprint";
import type { ToolDefinition } from "../../src/engine/tools/types";
import type { EventDraft } from "../../src/protocol/events";
import { callTools, defineTool, makeSetup, runNewTurn, say, scriptedModel } from "./support/mock-model";
import { wholeRequestHash } from "./support/whole-request-hash";

/** Runs of the lookup tool of the last lookup() made. */
let lookups = 0;

/** A lookup tool whose answers are taken, one per call, from `answers`. */
function lookup(answers: string[], overrides: Partial<ToolDefinition> = {}): ToolDefinition {
  let i = 0;
  lookups = 0;
  return defineTool(
    "lookup",
    async () => {
      lookups += 1;
      return { meaning: answers[i++] };
    },
    overrides,
  );
}

/** The recorded turn: two lookups in two steps, then an answer (three model calls); with the calls' options. */
async function recordWithCalls() {
  const model = scriptedModel(
    callTools([["call_1", "lookup", { word: "fork" }]]),
    callTools([["call_2", "lookup", { word: "branch" }]]),
    say("A fork is a branch."),
  );
  const { ports } = await runNewTurn(makeSetup({ model, tools: [lookup(["split", "copy"])] }), "what is a fork?");
  return { events: ports.events as EventDraft[], calls: model.doStreamCalls };
}

const record = async (): Promise<EventDraft[]> => (await recordWithCalls()).events;

async function replay(
  recording: EventDraft[],
  live: ReturnType<typeof scriptedModel>,
  setup: Partial<Parameters<typeof makeSetup>[0]> = {},
  tools?: ToolReplayMode,
) {
  const divergences: Divergence[] = [];
  const recorded = new RecordedModel(live, "openai:gpt-4o", recordingOf(recording), (d) => divergences.push(d));
  const base = makeSetup({ model: live, tools: [lookup(["split", "copy"])], ...setup });
  const toolbelt = tools ? replayTools(base.tools, recordedResults(recording), tools).tools : base.tools;
  const { ports } = await runNewTurn({ ...base, model: recorded, tools: toolbelt } satisfies TurnSetup, "what is a fork?");
  const ended = ports.events.find((e) => e.type === "turn.completed" || e.type === "turn.failed");
  const results = ports.events.filter((e) => e.type === "tool.result").map((e) => e.payload);
  return { divergences, live: live.doStreamCalls.length, output: (ended?.payload as { output?: unknown })?.output, ended: ended?.type, results };
}

describe("RecordedModel", () => {
  it("reads a turn's model calls from its events: request hash, text, tool calls, usage", async () => {
    const calls = recordedCalls(await record());
    expect(calls).toHaveLength(3);
    for (const c of calls) expect(c.request_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(calls.map((c) => c.tool_calls.map((t) => [t.tool_call_id, t.name, t.args]))).toEqual([
      [["call_1", "lookup", { word: "fork" }]],
      [["call_2", "lookup", { word: "branch" }]],
      [],
    ]);
    expect(calls[2]!.text).toBe("A fork is a branch.");
    expect(calls[2]!.finish_reason).toBe("stop");
  });

  it("with the same request at every step makes no live call and gives the recorded output", async () => {
    const result = await replay(await record(), scriptedModel());
    expect(result).toMatchObject({ divergences: [], live: 0, output: "A fork is a branch.", ended: "turn.completed" });
  });

  it("with recorded tools also runs no tool: both results come from the recording", async () => {
    const result = await replay(await record(), scriptedModel(), {}, "recorded");
    expect(result).toMatchObject({ divergences: [], live: 0, output: "A fork is a branch." });
    expect(lookups).toBe(0);
    expect(result.results.map((r) => r.output)).toEqual([{ meaning: "split" }, { meaning: "copy" }]);
  });

  it("with live tools runs them again, and a changed result makes the model call live from there", async () => {
    const result = await replay(await record(), scriptedModel(say("Live.")), { tools: [lookup(["split", "spoon"])] }, "live");
    expect(lookups).toBe(2);
    expect(result.divergences).toEqual([{ step: 3, reason: expect.stringContaining("request differs") }]);
    expect(result).toMatchObject({ live: 1, output: "Live." });
  });

  it("runs a call the recording never made only for a safe or knowledge tool; others get an error result", async () => {
    const changed = () => scriptedModel(callTools([["call_9", "lookup", { word: "spoon" }]]), say("Done."));
    const safe = await replay(await record(), changed(), { config: { instructions: "Other." } }, "recorded");
    expect(lookups).toBe(1);
    expect(safe.results[0]).toMatchObject({ is_error: false, output: { meaning: "split" } });
    const network = await replay(
      await record(),
      changed(),
      { config: { instructions: "Other." }, tools: [lookup(["x"], { permission_class: "network" })] },
      "recorded",
    );
    expect(lookups).toBe(0);
    expect(network.results[0]).toMatchObject({ is_error: true });
    expect(JSON.stringify(network.results[0]!.output)).toContain("not called with these arguments in the recorded turn");
  });

  it("diverges at the first call when the instructions change, and the live model answers from there", async () => {
    const result = await replay(await record(), scriptedModel(say("Forks split.")), { config: { instructions: "Be terse." } });
    expect(result.divergences).toEqual([{ step: 1, reason: expect.stringContaining("request differs") }]);
    expect(result).toMatchObject({ live: 1, output: "Forks split.", ended: "turn.completed" });
  });

  it("diverges at a middle call when a tool's result changes before it", async () => {
    const tools = [lookup(["spoon", "copy"])];
    const result = await replay(await record(), scriptedModel(say("A fork is cutlery.")), { tools });
    expect(result.divergences).toEqual([{ step: 2, reason: expect.stringContaining("request differs") }]);
    expect(result).toMatchObject({ live: 1, output: "A fork is cutlery." });
  });

  it("diverges at the last call when the last tool result changes", async () => {
    const tools = [lookup(["split", "spoon"])];
    const result = await replay(await record(), scriptedModel(say("Different.")), { tools });
    expect(result.divergences).toEqual([{ step: 3, reason: expect.stringContaining("request differs") }]);
    expect(result).toMatchObject({ live: 1, output: "Different." });
  });

  it("goes live past the end of the recording", async () => {
    const recording = await record();
    const cut = recording.slice(
      0,
      recording.findLastIndex((e) => e.type === "model.requested"),
    );
    const result = await replay(cut, scriptedModel(say("Live answer.")));
    expect(result.divergences).toEqual([{ step: 3, reason: expect.stringContaining("no more model calls") }]);
    expect(result).toMatchObject({ live: 1, output: "Live answer." });
  });
});

describe("recordings made before the incremental fingerprint", () => {
  it("replay from the recording: their hashes, of each whole request at once, are the ones made now", async () => {
    const { events, calls } = await recordWithCalls();
    let i = 0;
    // The recording as a log from before has it: each request_hash the SHA-256 of the whole canonical request.
    const old = events.map((e) =>
      e.type === "model.requested" ? { ...e, payload: { ...e.payload, request_hash: wholeRequestHash("openai:gpt-4o", calls[i++]!) } } : e,
    );
    expect(i).toBe(3);
    expect(await replay(old, scriptedModel())).toMatchObject({ divergences: [], live: 0, output: "A fork is a branch." });
    const changed = await replay(old, scriptedModel(say("Forks split.")), { config: { instructions: "Be terse." } });
    expect(changed.divergences).toEqual([{ step: 1, reason: expect.stringContaining("request differs") }]);
  });
});

describe("request fingerprints of files", () => {
  const withImage = (bytes: Uint8Array) => ({
    prompt: [{ role: "user" as const, content: [{ type: "file" as const, data: bytes, mediaType: "image/png" }] }],
  });

  it("writes a file's bytes as base64 (one string, not a key per byte), and tells different bytes apart", async () => {
    expect(canonicalJson({ data: new Uint8Array([1, 2, 3]) })).toBe('{"data":"AQID"}');
    const big = new Uint8Array(3 * 1024 * 1024).fill(7);
    const same = await requestFingerprint("m", withImage(big.slice()));
    expect(await requestFingerprint("m", withImage(big.slice()))).toBe(same);
    const other = big.slice();
    other[other.length - 1] = 8;
    expect(await requestFingerprint("m", withImage(other))).not.toBe(same);
  });
});
