// model.requested carries a fingerprint of the request: what a replay compares against to know
// whether a recorded response still answers the request the loop would send now.
import { describe, expect, it } from "vitest";
import { api, submitTurn, waitForTurnEnd } from "../../support/api";
import { script, toolURL, uniqueId } from "../../support/fake-model";

const LOOKUP = {
  name: "lookup",
  description: "Looks a word up",
  url: toolURL("echo"),
  parameters: { type: "object", properties: { word: { type: "string" } }, required: ["word"] },
};

/** One script (its id is part of the model spec, so of the request), scripted afresh for each run. */
const scriptId = uniqueId("fingerprint");

/** The request hashes of one turn ("what is a fork?": a lookup, then an answer) with these instructions. */
async function hashes(instructions: string, lookupDescription = LOOKUP.description): Promise<string[]> {
  await script(scriptId, [{ tool_calls: [{ id: "call_1", name: "lookup", arguments: { word: "fork" } }] }, { text: "A branch." }]);
  const agent = { name: "fp", model: `openai-compatible:${scriptId}`, instructions, http_tools: [{ ...LOOKUP, description: lookupDescription }] };
  const res = await api("POST", "/v1/sessions", { agent });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  const turn = (await submitTurn(res.body.session_id, "what is a fork?")).turn_id;
  const log = await waitForTurnEnd(res.body.session_id, turn);
  return log.filter((e) => e.type === "model.requested").map((e) => e.payload.request_hash);
}

describe("model.requested request_hash", () => {
  it("is the same for the same request in another session, and differs with a tool result, the instructions or a tool schema", async () => {
    const first = await hashes("Be brief.");
    expect(first).toHaveLength(2);
    for (const h of first) expect(h).toMatch(/^[0-9a-f]{64}$/);
    expect(first[0]).not.toBe(first[1]);
    // Step 2 carries the tool's result, which differs: the echo endpoint answers with the session id it was sent.
    const again = await hashes("Be brief.");
    expect(again[0]).toBe(first[0]);
    expect(again[1]).not.toBe(first[1]);
    const otherInstructions = await hashes("Be thorough.");
    expect(otherInstructions[0]).not.toBe(first[0]);
    const otherTool = await hashes("Be brief.", "Finds a word in the dictionary");
    expect(otherTool[0]).not.toBe(first[0]);
  });
});
