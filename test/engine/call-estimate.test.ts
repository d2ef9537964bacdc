// One estimate of a model call's most for budgets and quotas (src/engine/call-estimate.ts): what model.requested
// records (and a restart charges as usage.lost) is what the quota reserved, an upper bound on the input (every
// UTF-8 byte of the request, the tool schemas too) priced at the dearest model of the fallback chain.
import { describe, expect, it } from "vitest";
import type { QuotaPort, QuotaSpend } from "../../src/engine/ports";
import { MemoryPorts } from "./support/memory-ports";
import { defineTool, makeSetup, runNewTurn, say, scriptedModel } from "./support/mock-model";

/** A spend quota that takes every reservation and remembers what each reserved. */
function recordingQuota(): { port: QuotaPort; reserved: QuotaSpend[] } {
  const reserved: QuotaSpend[] = [];
  const port: QuotaPort = {
    applies: async () => ({ spend: true, turns: false }),
    begin: async () => ({ ok: true }),
    reserve: async (_id, most) => {
      reserved.push(most);
      return { ok: true };
    },
    settle: () => {},
    settleCut: () => {},
    continued: () => null,
    sleep: async () => {},
  };
  return { port, reserved };
}

describe("a model call's estimate", () => {
  it("is the one figure model.requested records and the quota reserves", async () => {
    const { port, reserved } = recordingQuota();
    const ports = Object.assign(new MemoryPorts(), { quota: port });
    const lookup = defineTool("lookup", async () => "found", {
      parameters: { type: "object", properties: { q: { type: "string", description: "x".repeat(500) } } },
    });
    await runNewTurn(makeSetup({ model: scriptedModel(say("ok")), tools: [lookup], config: { max_tokens: 300 } }), "hello", ports);
    const { reservation } = ports.ofType("model.requested")[0]!.payload;
    expect(reserved).toEqual([{ usd: reservation.cost_usd, input_tokens: reservation.input_tokens, output_tokens: reservation.max_output_tokens }]);
    expect(reservation.max_output_tokens).toBe(300);
    // The tool's schema is sent with the call, so it is counted.
    expect(reservation.input_tokens).toBeGreaterThan(500);
  });

  it("bounds the input by the request's bytes, not a guess of four characters a token", async () => {
    const ports = new MemoryPorts();
    const input = "語".repeat(1000); // 3 bytes each in UTF-8, and about a token each
    await runNewTurn(makeSetup({ model: scriptedModel(say("ok")) }), input, ports);
    const { reservation } = ports.ofType("model.requested")[0]!.payload;
    expect(reservation.input_tokens).toBeGreaterThanOrEqual(3000);
    expect(reservation.cost_usd).toBeCloseTo((reservation.input_tokens * 2.5 + 4096 * 10) / 1e6, 12);
  });

  it("is priced at the dearest model of the fallback chain, which may answer", async () => {
    const ports = new MemoryPorts();
    const config = { max_tokens: 1000, fallback_models: ["anthropic:claude-sonnet-4"] };
    await runNewTurn(makeSetup({ model: scriptedModel(say("ok")), config }), "hello", ports);
    const { reservation } = ports.ofType("model.requested")[0]!.payload;
    // claude-sonnet-4: 3 and 15 USD per million input and output tokens, above gpt-4o's 2.5 and 10.
    expect(reservation.cost_usd).toBeCloseTo((reservation.input_tokens * 3 + 1000 * 15) / 1e6, 12);
  });
});
