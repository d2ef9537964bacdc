// The rules around a person's decision, through HTTP: an approver's edit passes the agent's tool_input
// guardrails like the model's arguments, quorums of distinct approvers, and what a deadline does per tool.
import { afterEach, describe, expect, it } from "vitest";
import { events, expectGapless, submitTurn, waitForEvent, waitForTurnEnd } from "./support/api";
import { toolRequests, toolURL } from "./support/fake-model";
import { asking, only, respond } from "./support/hitl";
import { closeAllSockets } from "./support/ws";

/** A webhook tool with free-text arguments, on the fake server's echo. */
const NOTIFY = {
  name: "notify",
  description: "Posts a message to a channel",
  url: toolURL("echo"),
  parameters: { type: "object", properties: { channel: { type: "string" }, message: { type: "string" } }, required: ["channel", "message"] },
};
const notifyCall = (args: Record<string, unknown>) => ({ tool_calls: [{ name: "notify", arguments: args }] });
const toolArgs = async (sid: string) => (await toolRequests()).filter((r: any) => r?.session_id === sid).map((r: any) => r.args);

afterEach(async () => {
  await closeAllSockets();
});

describe("edited arguments and guardrails", () => {
  it("an edit is redacted before it is stored and blocked like the model's arguments would be", async () => {
    const { sid } = await asking([notifyCall({ channel: "#dev", message: "hello" }), notifyCall({ channel: "#dev", message: "again" }), { text: "Sent." }], {
      http_tools: [NOTIFY],
      hitl_tools: ["notify"],
      guardrails: {
        tool_input: [
          { type: "pii", name: "contact", entities: ["email"], action: "redact" },
          { type: "regex", name: "no-ops", pattern: "#ops", action: "block" },
        ],
      },
    });
    const { turn_id } = await submitTurn(sid, "tell the team");
    const first = await waitForEvent(sid, (e) => e.type === "action.required");
    const res = await respond(sid, first.action_id, { decision: "approve", args: { channel: "#dev", message: "write to jane@example.com" } });
    expect(res.status, JSON.stringify(res.body)).toBe(200);

    // The second call's edit names a channel the rules block: the call fails with the rule's reason, and never runs.
    const second = await waitForEvent(sid, (e) => e.type === "action.required" && e.action_id !== first.action_id);
    expect((await respond(sid, second.action_id, { decision: "approve", args: { channel: "#ops", message: "again" } })).status).toBe(200);
    const log = await waitForTurnEnd(sid, turn_id);
    expectGapless(log);

    const redacted = { channel: "#dev", message: "write to [email]" };
    expect(only(log, "action.resolved", first.tool_call_id).payload.args).toEqual(redacted);
    expect(only(log, "tool.started", first.tool_call_id).payload.args).toEqual(redacted);
    expect(JSON.stringify(await events(sid))).not.toContain("jane@example.com");
    const onFirst = log.filter((e) => e.type === "guardrail.checked" && e.tool_call_id === first.tool_call_id).map((e) => e.payload);
    // The model's arguments passed both rules; the edit's redaction is logged with the decision, its other rules in the turn.
    expect(onFirst).toEqual([
      { stage: "tool_input", rule: "contact", kind: "pii", verdict: "pass" },
      { stage: "tool_input", rule: "no-ops", kind: "regex", verdict: "pass" },
      { stage: "tool_input", rule: "contact", kind: "pii", verdict: "redact", reason: "found email" },
      { stage: "tool_input", rule: "no-ops", kind: "regex", verdict: "pass" },
    ]);

    const blocked = only(log, "tool.result", second.tool_call_id).payload;
    expect(blocked).toMatchObject({
      is_error: true,
      output: 'Blocked by guardrail "no-ops" (tool_input): matched the pattern',
      metadata: { approval_status: "approved", args_edited_by: expect.any(String) },
    });
    expect(log.find((e) => e.type === "guardrail.checked" && e.tool_call_id === second.tool_call_id && e.payload.verdict === "block").payload.rule).toBe(
      "no-ops",
    );
    expect(await toolArgs(sid)).toEqual([redacted]);
  });
});
