// Regular expressions that are not the runtime's own run in linear time (RE2), through HTTP: patterns RE2 cannot
// compile are refused where they are given (agent config 422, a model's ask_user schema as a tool error), and
// catastrophic patterns on long hostile texts finish (with V8's backtracking, each of these turns would hang far
// beyond the test's timeout). No timing is asserted: bench/guardrails.mjs measures.
import { describe, expect, it } from "vitest";
import { api, submitTurn, waitForEvent, waitForTurnEnd } from "../../support/api";
import { requests, type Step, script, toolURL, uniqueId } from "../../support/fake-model";
import { asking, only, respond } from "../../support/hitl";

async function turn(steps: Step[], agent: Record<string, unknown>, input: string): Promise<{ turnId: string; log: any[]; scriptId: string }> {
  const scriptId = uniqueId("re2");
  await script(scriptId, steps);
  const created = await api("POST", "/v1/sessions", { agent: { name: "re2", model: `openai-compatible:${scriptId}`, ...agent } });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  const { turn_id } = await submitTurn(created.body.session_id, input);
  return { turnId: turn_id, log: await waitForTurnEnd(created.body.session_id, turn_id, 30_000), scriptId };
}
const ended = (log: any[]) => log.findLast((e) => e.type.startsWith("turn.") && !["turn.submitted", "turn.started"].includes(e.type));

describe("patterns RE2 cannot run are refused when the agent is saved", () => {
  it("is 422 naming the field for a guardrail backreference or lookbehind, and a tool's, output's or working memory's schema pattern; nothing is stored", async () => {
    const put = (name: string, extra: Record<string, unknown>) => api("PUT", `/v1/agents/${name}`, { model: "demo:x", ...extra });
    const backref = await put("re2-backref", { guardrails: { input: [{ type: "regex", pattern: "(\\w+) \\1", action: "block" }] } });
    expect(backref.status).toBe(422);
    expect(backref.body.error.details).toEqual([{ path: "guardrails.input.0.pattern", reason: expect.stringMatching(/RE2 syntax.*invalid escape sequence/) }]);
    const lookbehind = await put("re2-lookbehind", { guardrails: { tool_output: [{ type: "regex", pattern: "(?<=token=)\\w+", action: "redact" }] } });
    expect(lookbehind.body.error.details).toEqual([
      { path: "guardrails.tool_output.0.pattern", reason: expect.stringContaining("no backreferences or lookaround") },
    ]);

    const tool = await put("re2-tool", {
      http_tools: [{ name: "lookup", url: toolURL("echo"), parameters: { type: "object", properties: { user: { type: "string", pattern: "^(?!admin)" } } } }],
    });
    expect(tool.status).toBe(422);
    expect(tool.body.error.details).toEqual([{ path: "http_tools.0.parameters.properties.user.pattern", reason: expect.stringContaining("RE2 syntax") }]);
    const output = await put("re2-output", {
      output_schema: { type: "object", properties: { tags: { type: "object", patternProperties: { "^(?<k>x)\\k<k>$": { type: "string" } } } } },
    });
    expect(output.body.error.details).toEqual([
      { path: "output_schema.properties.tags.patternProperties.^(?<k>x)\\k<k>$", reason: expect.stringContaining("backreferences") },
    ]);
    const memory = await put("re2-memory", { memory: { working: { schema: { type: "object", properties: { a: { type: "string", pattern: "(a)\\1" } } } } } });
    expect(memory.body.error.details).toEqual([{ path: "memory.working.schema.properties.a.pattern", reason: expect.stringContaining("RE2 syntax") }]);

    for (const name of ["re2-backref", "re2-lookbehind", "re2-tool", "re2-output", "re2-memory"])
      expect((await api("GET", `/v1/agents/${name}`)).status).toBe(404);
    // The same patterns in RE2's own terms are accepted.
    const ok = await put("re2-ok", { guardrails: { input: [{ type: "regex", pattern: "^(a+)+$", action: "block" }] } });
    expect(ok.status, JSON.stringify(ok.body)).toBe(201);
  });
});

describe("catastrophic patterns on long hostile texts finish", () => {
  it("a guardrail ^(a+)+$ passes a 10,000-character near miss and blocks the match", async () => {
    const agent = { guardrails: { input: [{ type: "regex", name: "all-a", pattern: "^(a+)+$", action: "block" }] } };
    const nearMiss = await turn([{ text: "ok" }], agent, `${"a".repeat(10_000)}!`);
    expect(ended(nearMiss.log).type).toBe("turn.completed");
    const match = await turn([{ text: "never" }], agent, "a".repeat(10_000));
    expect(ended(match.log).payload.error).toMatchObject({ code: "guardrail_blocked", rule: "all-a" });
    expect(await requests(match.scriptId)).toEqual([]);
  });

  it('the email PII rule redacts an input of "a." x 50,000 followed by an address', async () => {
    const agent = { guardrails: { input: [{ type: "pii", entities: ["email"], action: "redact" }] } };
    const { turnId, log } = await turn([{ text: "noted" }], agent, `${"a.".repeat(50_000)} write to bob@example.com`);
    expect(ended(log).type).toBe("turn.completed");
    expect(log.find((e) => e.turn_id === turnId && e.type === "turn.submitted").payload.input).toBe(`${"a.".repeat(50_000)} write to [email]`);
  });

  it("a redacting pattern whose every match looks far ahead redacts a short text match by match, and a 40,000-digit text whole (failed: error) while /healthz answers", async () => {
    // Corp addresses or any digit: each digit of a long digit run is a match, and each search for one reads the
    // run to its end for an address (RE2's find-all is quadratic in such texts).
    const rule = { type: "regex", name: "corp-or-digit", pattern: "[\\w.]+@corp\\.example|\\d", action: "redact" };
    const agent = { guardrails: { input: [rule] } };
    const short = await turn([{ text: "noted" }], agent, "call 55 or bob@corp.example");
    expect(short.log.find((e) => e.type === "turn.submitted").payload.input).toBe("call [redacted][redacted] or [redacted]");

    const scriptId = uniqueId("re2");
    await script(scriptId, [{ text: "noted" }]);
    const created = await api("POST", "/v1/sessions", { agent: { name: "re2", model: `openai-compatible:${scriptId}`, ...agent } });
    const submitted = api("POST", `/v1/sessions/${created.body.session_id}/turns`, { input: `id ${"7".repeat(40_000)} end` });
    const health = await api("GET", "/healthz");
    expect(health.status).toBe(200);
    const res = await submitted;
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    const log = await waitForTurnEnd(created.body.session_id, res.body.turn_id, 30_000);
    expect(ended(log).type).toBe("turn.completed");
    // Past its bound the rule fails closed: the whole text is redacted, and the verdict says why.
    expect(log.find((e) => e.type === "turn.submitted").payload.input).toBe("[redacted]");
    expect(log.find((e) => e.type === "guardrail.checked").payload).toEqual({
      stage: "input",
      rule: "corp-or-digit",
      kind: "regex",
      verdict: "redact",
      failed: "error",
      reason: expect.stringMatching(/^the pattern's matches took more than .* reads of a text of 40,007 characters: the whole text is redacted$/),
    });
    expect(JSON.stringify(await requests(scriptId))).not.toContain("7777");
  });

  it("a tool argument checked against a parameter pattern ^(a|aa)+$ is refused or accepted", async () => {
    const agent = {
      http_tools: [{ name: "code", url: toolURL("echo"), parameters: { type: "object", properties: { code: { type: "string", pattern: "^(a|aa)+$" } } } }],
    };
    const calls = [{ tool_calls: [{ name: "code", arguments: { code: `${"a".repeat(5_000)}b` } }] }, { text: "done" }];
    const { log } = await turn(calls, agent, "go");
    expect(log.find((e) => e.type === "tool.result").payload).toMatchObject({ is_error: true, output: expect.stringContaining("does not match pattern") });
  });
});

describe("a model's ask_user response_schema", () => {
  const schema = (pattern: string) => ({ type: "object", properties: { code: { type: "string", pattern } }, required: ["code"] });

  it("with ^(a|aa)+$ refuses a 5,000-character near miss (422, recording nothing) and takes a match", async () => {
    const { sid } = await asking([
      { tool_calls: [{ name: "ask_user", arguments: { question: "Code?", response_schema: schema("^(a|aa)+$") } }] },
      { text: "thanks" },
    ]);
    const { turn_id } = await submitTurn(sid, "ask me");
    const { action_id } = await waitForEvent(sid, (e) => e.type === "action.required");
    const miss = await respond(sid, action_id, { response: { code: `${"a".repeat(5_000)}b` } });
    expect(miss.status).toBe(422);
    expect(miss.body.error.details).toEqual([{ path: "response.code", reason: expect.stringContaining("does not match pattern") }]);
    const answered = await respond(sid, action_id, { response: { code: "a".repeat(5_000) } });
    expect(answered.status, JSON.stringify(answered.body)).toBe(200);
    const log = await waitForTurnEnd(sid, turn_id);
    expect(ended(log).type).toBe("turn.completed");
    expect(log.find((e) => e.type === "tool.result").payload).toMatchObject({ is_error: false, output: { code: "a".repeat(5_000) } });
  });

  it("with a lookahead is an error result for the model, and nobody is asked", async () => {
    const { sid } = await asking([
      { tool_calls: [{ name: "ask_user", arguments: { question: "Code?", response_schema: schema("^(?=a)") } }] },
      { text: "sorry" },
    ]);
    const { turn_id } = await submitTurn(sid, "ask me");
    const log = await waitForTurnEnd(sid, turn_id);
    expect(log.filter((e) => e.type === "action.required")).toEqual([]);
    const result = log.find((e) => e.type === "tool.result");
    expect(only(log, "tool.result", result.tool_call_id).payload).toMatchObject({
      is_error: true,
      output: expect.stringMatching(
        /^Invalid arguments for "ask_user": \/response_schema\/properties\/code\/pattern: is not a valid regular expression in RE2 syntax/,
      ),
    });
  });
});
