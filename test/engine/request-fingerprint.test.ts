// The request fingerprint as a hash chain (issue 38): a step hashes only the messages that are new, and what it
// gives is what hashing the same request from scratch (fresh objects, nothing kept) gives.
import type { LanguageModelV3CallOptions, LanguageModelV3StreamPart } from "@ai-sdk/provider";
import { simulateReadableStream } from "ai";
import { afterEach, describe, expect, it, vi } from "vitest";
import { requestFingerprint } from "../../src/runtime/request-fingerprint";
import { callTools, defineTool, makeSetup, type Reply, runNewTurn, say, scriptedModel } from "./support/mock-model";

afterEach(() => vi.restoreAllMocks());

/** The parts of a call the fingerprint reads, as new objects (no identity shared with the loop's). */
const fresh = ({ prompt, tools, toolChoice, temperature, maxOutputTokens, responseFormat }: LanguageModelV3CallOptions): LanguageModelV3CallOptions =>
  structuredClone({ prompt, tools, toolChoice, temperature, maxOutputTokens, responseFormat });

describe("the chained request fingerprint", () => {
  it("of every step of a 40-step turn equals the fingerprint computed from scratch, and tells every step apart", async () => {
    const steps = Array.from({ length: 40 }, (_, i) => callTools([[`call_${i}`, "lookup", { word: `w${i}` }]]));
    const model = scriptedModel(...steps, say("Done."));
    const lookup = defineTool("lookup", async (args) => ({ meaning: `of ${(args as { word: string }).word}` }));
    const { ports } = await runNewTurn(makeSetup({ model, tools: [lookup], config: { instructions: "Be brief.", max_steps: 50 } }), "look up 40 words");
    const recorded = ports.ofType("model.requested").map((e) => e.payload.request_hash as string);
    expect(recorded).toHaveLength(41);
    const scratch = await Promise.all(model.doStreamCalls.map((call) => requestFingerprint("openai:gpt-4o", fresh(call))));
    expect(recorded).toEqual(scratch);
    expect(new Set(recorded).size).toBe(41);
    for (const h of recorded) expect(h).toMatch(/^v2:[0-9a-f]{64}$/);
  });

  it("hashes about as many bytes at step 40 as at step 5: only what is new in the conversation", async () => {
    let hashed = 0;
    const digest = crypto.subtle.digest.bind(crypto.subtle);
    vi.spyOn(crypto.subtle, "digest").mockImplementation(async (algorithm, data) => {
      hashed += (data as Uint8Array).byteLength;
      return digest(algorithm, data);
    });
    // Bytes hashed before each model call (the fingerprint is made just before the call).
    const before: number[] = [];
    const step =
      (parts: LanguageModelV3StreamPart[]): Reply =>
      () => {
        before.push(hashed);
        return { stream: simulateReadableStream({ chunks: parts, initialDelayInMs: null, chunkDelayInMs: null }) };
      };
    const steps = Array.from({ length: 40 }, (_, i) => step(callTools([[`call_${i}`, "lookup", { word: `w${i}` }]])));
    const model = scriptedModel(...steps, step(say("Done.")));
    const lookup = defineTool("lookup", async () => ({ meaning: "a word of the same length every time" }));
    await runNewTurn(makeSetup({ model, tools: [lookup], config: { max_steps: 50 } }), "look up 40 words");
    const perStep = before.map((b, i) => b - (before[i - 1] ?? 0));
    expect(perStep).toHaveLength(41);
    expect(perStep[39]!).toBeLessThan(perStep[4]! * 1.2);
  });

  it("changes with any earlier message, the model or the tool schemas, whatever the order of object keys", async () => {
    const model = scriptedModel(callTools([["call_1", "lookup", { word: "fork" }]]), say("A branch."));
    await runNewTurn(makeSetup({ model, tools: [defineTool("lookup", async () => "split")] }), "what is a fork?");
    const last = fresh(model.doStreamCalls[1]!);
    const base = await requestFingerprint("openai:gpt-4o", last);
    const edited = fresh(last);
    (edited.prompt[0]!.content as { type: "text"; text: string }[])[0]!.text = "what is a spoon?";
    expect(await requestFingerprint("openai:gpt-4o", edited)).not.toBe(base);
    expect(await requestFingerprint("openai:gpt-4o-mini", last)).not.toBe(base);
    const otherTools = { ...fresh(last), tools: [{ ...last.tools![0]!, description: "Finds a word" }] };
    expect(await requestFingerprint("openai:gpt-4o", otherTools as LanguageModelV3CallOptions)).not.toBe(base);
    // The same request with its keys in another order: the same fingerprint.
    const reordered = Object.fromEntries(Object.entries(fresh(last)).reverse()) as unknown as LanguageModelV3CallOptions;
    expect(await requestFingerprint("openai:gpt-4o", reordered)).toBe(base);
  });
});
