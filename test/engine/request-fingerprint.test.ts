// The request fingerprint is the SHA-256 of the whole canonical request, as logs recorded before have
// it, but made incrementally: a step hashes only the messages that are new and the text after them.

import { createHash } from "node:crypto";
import type { LanguageModelV3CallOptions, LanguageModelV3StreamPart } from "@ai-sdk/provider";
import { simulateReadableStream } from "ai";
import { afterEach, describe, expect, it, vi } from "vitest";
import { requestFingerprint } from "../../src/engine/request-fingerprint";
import { callTools, defineTool, makeSetup, type Reply, runNewTurn, say, scriptedModel } from "./support/mock-model";
import { wholeRequestHash } from "./support/whole-request-hash";

afterEach(() => vi.restoreAllMocks());

/** The parts of a call the fingerprint reads, as new objects (no identity shared with the loop's). */
const fresh = ({ prompt, tools, toolChoice, temperature, maxOutputTokens, responseFormat }: LanguageModelV3CallOptions): LanguageModelV3CallOptions =>
  structuredClone({ prompt, tools, toolChoice, temperature, maxOutputTokens, responseFormat });

/** Two lookups a step, `steps` steps. */
const lookups = (steps: number) =>
  Array.from({ length: steps }, (_, i) =>
    callTools([
      [`call_${i}a`, "lookup", { word: `w${i}` }],
      [`call_${i}b`, "lookup", { word: `v${i}` }],
    ]),
  );

describe("the incremental request fingerprint", () => {
  it("is the SHA-256 of the whole canonical request: a fixed request's hash is the one logs recorded before have", () => {
    const options = { prompt: [{ role: "user", content: [{ type: "text", text: "hi" }] }] } as LanguageModelV3CallOptions;
    // sha256 of {"model":"m","prompt":[{"content":[{"text":"hi","type":"text"}],"role":"user"}]}
    expect(requestFingerprint("m", options)).toBe("fe5adc9333c95371826e1991530073e15fb62b0ed490a88cd951fe317e9eb021");
    expect(requestFingerprint("m", { ...options, prompt: [{ role: "system", content: "Be brief." }, ...options.prompt] })).toBe(
      createHash("sha256")
        .update('{"model":"m","prompt":[{"content":"Be brief.","role":"system"},{"content":[{"text":"hi","type":"text"}],"role":"user"}]}')
        .digest("hex"),
    );
  });

  it("of every step of a 40-step turn equals the whole request's hash computed from scratch, and tells every step apart", async () => {
    const model = scriptedModel(...lookups(40), say("Done."));
    const lookup = defineTool("lookup", async (args) => ({ meaning: `of ${(args as { word: string }).word}` }));
    const { ports } = await runNewTurn(makeSetup({ model, tools: [lookup], config: { instructions: "Be brief.", max_steps: 50 } }), "look up 80 words");
    const recorded = ports.ofType("model.requested").map((e) => e.payload.request_hash as string);
    expect(recorded).toHaveLength(41);
    expect(recorded).toEqual(model.doStreamCalls.map((call) => wholeRequestHash("openai:gpt-4o", fresh(call))));
    expect(new Set(recorded).size).toBe(41);
  });

  it("hashes about as many bytes at step 40 as at step 5: only what is new in the conversation", async () => {
    let hashed = 0;
    const hash = Object.getPrototypeOf(createHash("sha256")) as { update(data: string): unknown };
    const update = hash.update;
    vi.spyOn(hash, "update").mockImplementation(function (this: unknown, data: string) {
      hashed += new TextEncoder().encode(data).byteLength;
      return update.call(this, data);
    });
    // Bytes hashed before each model call (the fingerprint is made just before the call).
    const before: number[] = [];
    const step =
      (parts: LanguageModelV3StreamPart[]): Reply =>
      () => {
        before.push(hashed);
        return { stream: simulateReadableStream({ chunks: parts, initialDelayInMs: null, chunkDelayInMs: null }) };
      };
    const model = scriptedModel(...lookups(40).map(step), step(say("Done.")));
    const lookup = defineTool("lookup", async () => ({ meaning: "a word of the same length every time" }));
    await runNewTurn(makeSetup({ model, tools: [lookup], config: { max_steps: 50 } }), "look up 80 words");
    const perStep = before.map((b, i) => b - (before[i - 1] ?? 0));
    expect(perStep).toHaveLength(41);
    expect(perStep[4]!).toBeGreaterThan(0);
    expect(perStep[39]!).toBeLessThan(perStep[4]! * 1.2);
  });

  it("changes with any earlier message, the model or the tool schemas, whatever the order of object keys", async () => {
    const model = scriptedModel(callTools([["call_1", "lookup", { word: "fork" }]]), say("A branch."));
    await runNewTurn(makeSetup({ model, tools: [defineTool("lookup", async () => "split")] }), "what is a fork?");
    const last = model.doStreamCalls[1]!;
    const base = requestFingerprint("openai:gpt-4o", last);
    expect(requestFingerprint("openai:gpt-4o", fresh(last))).toBe(base);
    // The same conversation objects with one earlier message replaced (the first, or one in the middle): the
    // state kept for the conversation is not reused past it.
    const at = (role: string) => last.prompt.findIndex((m) => m.role === role);
    const user = structuredClone(last.prompt[at("user")]!) as { content: { text: string }[] };
    user.content[0]!.text = "what is a spoon?";
    const call = structuredClone(last.prompt[at("assistant")]!) as { content: { input: unknown }[] };
    call.content[0]!.input = { word: "spoon" };
    for (const [i, edited] of [
      [at("user"), user],
      [at("assistant"), call],
    ] as const) {
      const prompt = last.prompt.with(i, edited as never);
      expect(requestFingerprint("openai:gpt-4o", { ...last, prompt })).not.toBe(base);
      expect(requestFingerprint("openai:gpt-4o", { ...last, prompt })).toBe(wholeRequestHash("openai:gpt-4o", { ...last, prompt }));
      expect(requestFingerprint("openai:gpt-4o", last)).toBe(base);
    }
    expect(requestFingerprint("openai:gpt-4o-mini", last)).not.toBe(base);
    const otherTools = { ...last, tools: [{ ...last.tools![0]!, description: "Finds a word" }] };
    expect(requestFingerprint("openai:gpt-4o", otherTools as LanguageModelV3CallOptions)).not.toBe(base);
    // The same request with its keys in another order: the same fingerprint.
    const reordered = Object.fromEntries(Object.entries(fresh(last)).reverse()) as unknown as LanguageModelV3CallOptions;
    expect(requestFingerprint("openai:gpt-4o", reordered)).toBe(base);
  });
});
