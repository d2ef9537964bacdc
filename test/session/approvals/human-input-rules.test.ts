// The rules around a person's decision, through HTTP: an approver's edit passes the agent's tool_input
// guardrails like the model's arguments, quorums of distinct approvers, and what a deadline does per tool.
import { runDurableObjectAlarm } from "cloudflare:test";
import { afterEach, describe, expect, it } from "vitest";
import { api, events, expectGapless, submitTurn, waitForEvent, waitForTurnEnd } from "../../support/api";
import { requests, script, toolRequests, toolURL } from "../../support/fake-model";
import { asking, DEPLOY, deployCall, KEY_HASH, only, respond, sleepUntil, stub } from "../../support/hitl";
import { closeAllSockets } from "../../support/ws";

/** A webhook tool with free-text arguments, on the fake server's echo. */
const NOTIFY = {
  name: "notify",
  description: "Posts a message to a channel",
  url: toolURL("echo"),
  parameters: { type: "object", properties: { channel: { type: "string" }, message: { type: "string" } }, required: ["channel", "message"] },
};
const notifyCall = (args: Record<string, unknown>) => ({ tool_calls: [{ name: "notify", arguments: args }] });
const toolArgs = async (sid: string) => (await toolRequests()).filter((r: any) => r?.session_id === sid).map((r: any) => r.args);

/** A second principal: another API key of the test deployment (vitest.config.ts). */
const SECOND = { authorization: "Bearer second-key" };

/** A session whose model calls deploy({env: "prod"}) once, under the given hitl_tools entry. */
async function deploying(entry: Record<string, unknown>) {
  const { sid } = await asking([deployCall({ env: "prod" }), { text: "Done." }], { http_tools: [DEPLOY], hitl_tools: [{ name: "deploy", ...entry }] });
  const { turn_id } = await submitTurn(sid, "deploy");
  const required = await waitForEvent(sid, (e) => e.type === "action.required");
  return { sid, turn_id, required };
}

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

describe("quorum", () => {
  it("approvals: 2 runs the call once two distinct principals approved; the same principal twice is 409, an edit 422", async () => {
    const { sid, turn_id, required } = await deploying({ approvals: 2 });
    const { action_id, tool_call_id } = required;
    expect(required.payload).toMatchObject({ kind: "tool_approval", approvals_required: 2 });
    expect(required.payload.args_schema).toBeUndefined();
    const edit = await respond(sid, action_id, { decision: "approve", args: { env: "staging" } });
    expect(edit.status).toBe(422);
    expect(edit.body.error.details).toEqual([{ path: "args", reason: expect.stringContaining("2 approvals") }]);

    const first = await respond(sid, action_id, { decision: "approve", reason: "looks fine" });
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    expect(first.body).toEqual({ action_id, turn_id, tool_call_id, decision: "pending", approvals: { recorded: 1, required: 2 } });
    const thread = (await api("GET", `/v1/sessions/${sid}/thread`)).body;
    expect(thread.status).toBe("waiting_permission");
    expect(thread.pending_actions).toEqual([expect.objectContaining({ action_id, approvals_required: 2, approved_by: [expect.stringMatching(KEY_HASH)] })]);
    const before = await events(sid);
    const again = await respond(sid, action_id, { decision: "approve" });
    expect(again.status).toBe(409);
    expect(again.body.error.code).toBe("conflict");
    expect(await events(sid)).toEqual(before);
    expect(await toolArgs(sid)).toEqual([]);

    const second = await respond(sid, action_id, { decision: "approve" }, SECOND);
    expect(second.status, JSON.stringify(second.body)).toBe(200);
    expect(second.body).toMatchObject({ decision: "approved", approvals: { recorded: 2, required: 2 } });
    const log = await waitForTurnEnd(sid, turn_id);
    expectGapless(log);
    const recorded = log.filter((e) => e.type === "action.approval.recorded");
    expect(recorded.map((e) => [e.action_id, e.tool_call_id, e.payload.approvals, e.payload.approvals_required])).toEqual([
      [action_id, tool_call_id, 1, 2],
      [action_id, tool_call_id, 2, 2],
    ]);
    const [a, b] = recorded.map((e) => e.payload.by);
    expect(a).toMatch(KEY_HASH);
    expect(b).toMatch(KEY_HASH);
    expect(a).not.toBe(b);
    expect(recorded[0].payload.reason).toBe("looks fine");
    expect(only(log, "action.resolved", tool_call_id).payload).toMatchObject({ decision: "approved", by: b, approved_by: [a, b] });
    expect(only(log, "tool.result", tool_call_id).payload.metadata).toMatchObject({ status: "success", approval_status: "approved" });
    expect(await toolArgs(sid)).toEqual([{ env: "prod" }]);
    expect(log.at(-1).type).toBe("turn.completed");

    // The execution tree shows the wait on the call, and who approved.
    const tree = (await api("GET", `/v1/sessions/${sid}/turns/${turn_id}/tree`)).body;
    const resolvedAt = only(log, "action.resolved", tool_call_id).timestamp;
    expect(tree.nodes).toEqual([
      expect.objectContaining({
        id: tool_call_id,
        name: "deploy",
        human_wait: {
          kind: "tool_approval",
          action_id,
          asked_at: required.timestamp,
          decided_at: resolvedAt,
          duration_ms: resolvedAt - required.timestamp,
          decision: "approved",
          by: b,
          approved_by: [a, b],
        },
      }),
    ]);
  });

  it("a rejection by any approver rejects, after another approved", async () => {
    const { sid, turn_id, required } = await deploying({ approvals: 2 });
    expect((await respond(sid, required.action_id, { decision: "approve" })).body.decision).toBe("pending");
    const no = await respond(sid, required.action_id, { decision: "reject", reason: "not today" }, SECOND);
    expect(no.body).toMatchObject({ decision: "rejected" });
    expect((await respond(sid, required.action_id, { decision: "approve" }, SECOND)).status).toBe(409);
    const log = await waitForTurnEnd(sid, turn_id);
    expectGapless(log);
    expect(only(log, "action.resolved", required.tool_call_id).payload).toMatchObject({ decision: "rejected", reason: "not today" });
    expect(only(log, "tool.result", required.tool_call_id).payload.metadata.status).toBe("rejected");
    expect(await toolArgs(sid)).toEqual([]);
  });

  it("counts a token subject once however it is cased: `reviewer`, `Reviewer` and `REVIEWER` are one approver", async () => {
    const { sid, turn_id, required } = await deploying({ approvals: 2 });
    const { action_id, tool_call_id } = required;
    const approver = async (subject: string) => {
      const res = await api("POST", "/v1/tokens", { subject, session_id: sid, scopes: ["read", "approve"], ttl_s: 600 });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      return { authorization: `Bearer ${res.body.token}` };
    };
    const first = await respond(sid, action_id, { decision: "approve" }, await approver("reviewer"));
    expect(first.body).toMatchObject({ decision: "pending", approvals: { recorded: 1, required: 2 } });
    const before = await events(sid);
    // Look-alikes written otherwise (`reviewer `, `review\u200Ber`, full-width) are not canonical: never minted.
    for (const subject of ["Reviewer", "REVIEWER"]) {
      const again = await respond(sid, action_id, { decision: "approve" }, await approver(subject));
      expect(again.status, JSON.stringify(subject)).toBe(409);
      expect(again.body.error).toMatchObject({ code: "conflict", message: expect.stringContaining("already approved by this principal") });
    }
    expect(await events(sid)).toEqual(before);
    expect(await toolArgs(sid)).toEqual([]);

    // Another person completes it; the log names the minting key of the token that approved.
    const second = await respond(sid, action_id, { decision: "approve" }, await approver("releaser"));
    expect(second.body).toMatchObject({ decision: "approved", approvals: { recorded: 2, required: 2 } });
    const log = await waitForTurnEnd(sid, turn_id);
    const [a, b] = only(log, "action.resolved", tool_call_id).payload.approved_by;
    expect(a).toMatch(/^tok_reviewer@key_[0-9a-f]{16}$/);
    expect(b).toMatch(/^tok_releaser@key_[0-9a-f]{16}$/);
    expect(await toolArgs(sid)).toEqual([{ env: "prod" }]);
  });

  it("ask_user takes no quorum and no approving deadline (422 naming the field)", async () => {
    const res = await api("POST", "/v1/sessions", {
      agent: { name: "asker", model: "demo:fast", tools: ["ask_user"], hitl_tools: [{ name: "ask_user", approvals: 2, on_timeout: "approve" }] },
    });
    expect(res.status).toBe(422);
    expect(res.body.error.details).toEqual([
      { path: "agent.hitl_tools.0.approvals", reason: expect.stringContaining("ask_user takes one answer") },
      { path: "agent.hitl_tools.0.on_timeout", reason: expect.stringContaining("cannot be approved") },
    ]);
  });
});

describe("deadlines per tool", () => {
  it("the tool's timeout_ms is the deadline of the whole quorum: one approval of two, then the deadline, is timed_out", async () => {
    const { sid, turn_id, required } = await deploying({ approvals: 2, timeout_ms: 1000 });
    // The tool's own deadline, not the agent's approval_timeout_ms (15 minutes).
    expect(required.payload.expires_at - required.timestamp).toBeLessThanOrEqual(1000);
    expect((await respond(sid, required.action_id, { decision: "approve" })).body.decision).toBe("pending");
    await sleepUntil(required.payload.expires_at + 50);
    await runDurableObjectAlarm(stub(sid));
    const log = await waitForTurnEnd(sid, turn_id);
    expectGapless(log);
    expect(only(log, "action.resolved", required.tool_call_id).payload).toMatchObject({ decision: "timed_out", by: "runtime" });
    expect(only(log, "tool.result", required.tool_call_id).payload.metadata.status).toBe("timed_out");
    expect(await toolArgs(sid)).toEqual([]);
  });

  it('on_timeout: "approve" runs the call nobody decided when its deadline comes', async () => {
    const { sid, turn_id, required } = await deploying({ timeout_ms: 1000, on_timeout: "approve" });
    expect(required.payload.on_timeout).toBe("approve");
    await sleepUntil(required.payload.expires_at + 50);
    await runDurableObjectAlarm(stub(sid));
    const log = await waitForTurnEnd(sid, turn_id);
    expectGapless(log);
    expect(only(log, "action.resolved", required.tool_call_id).payload).toMatchObject({
      decision: "approved",
      by: "runtime",
      reason: expect.stringContaining("on_timeout"),
    });
    expect(only(log, "tool.result", required.tool_call_id).payload.metadata).toMatchObject({ status: "success", approval_status: "approved" });
    expect(await toolArgs(sid)).toEqual([{ env: "prod" }]);
    expect((await respond(sid, required.action_id, { decision: "reject" })).status).toBe(409);
  });
});

describe("replay", () => {
  it("answers the recorded question and approval from the recording (nobody is asked again) and gets the same result", async () => {
    const { sid, scriptId } = await asking(
      [
        { tool_calls: [{ name: "ask_user", arguments: { question: "Which env?", choices: ["staging", "prod"] } }] },
        deployCall({ env: "prod" }),
        { text: "Deployed to staging." },
      ],
      { http_tools: [DEPLOY], hitl_tools: ["deploy"] },
    );
    const source = await submitTurn(sid, "deploy");
    const question = await waitForEvent(sid, (e) => e.type === "action.required");
    expect((await respond(sid, question.action_id, { response: "staging" })).status).toBe(200);
    const approval = await waitForEvent(sid, (e) => e.type === "action.required" && e.payload.kind === "tool_approval");
    expect((await respond(sid, approval.action_id, { decision: "approve", args: { env: "staging" }, reason: "not prod" })).status).toBe(200);
    await waitForTurnEnd(sid, source.turn_id);

    await script(scriptId, []); // a live model call would fail now
    const started = await api("POST", `/v1/sessions/${sid}/turns/${source.turn_id}/replay`, {});
    expect(started.status, JSON.stringify(started.body)).toBe(201);
    const { exec_id, turn_id } = started.body;
    const log = await waitForTurnEnd(exec_id, turn_id);
    expectGapless(log);
    const resolved = log.filter((e) => e.type === "action.resolved").map((e) => e.payload);
    expect(resolved).toEqual([
      { decision: "answered", tool_name: "ask_user", by: "replay", reason: null, response: "staging" },
      { decision: "approved", tool_name: "deploy", by: "replay", reason: "not prod", args: { env: "staging" } },
    ]);
    const results = log.filter((e) => e.type === "tool.result").map((e) => [e.payload.name, e.payload.output]);
    expect(results[0]).toEqual(["ask_user", "staging"]);
    expect(only(log, "tool.started", log.find((e) => e.type === "tool.result" && e.payload.name === "deploy").tool_call_id).payload.args).toEqual({
      env: "staging",
    });
    const done = await waitForEvent(exec_id, (e) => e.type === "replay.completed");
    expect(done.payload).toMatchObject({ diverged: null, output_changed: false, replay: { status: "completed", output: "Deployed to staging." } });
    expect(await requests(scriptId)).toEqual([]);
    expect(await toolArgs(exec_id)).toEqual([]); // deploy answered from its recorded result too
  });
});
