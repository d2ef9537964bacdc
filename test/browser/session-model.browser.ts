// The inspector's fold of a session's events (web/inspector/src/session/model.ts), for the shapes the
// browser tests do not produce: parallel sub-agents, orchestration steps, a refused call that never
// started, a restart, a handoff, repeated deliveries, the agent version a session runs, and a quota pause
// that resumes with room or after a continue without a note.
import { describe, expect, it } from "vitest";
import type { RuntimeEvent } from "../../src/client/index";
import type { SubAgent, ToolCall } from "../../web/inspector/src/session/items";
import { SessionModel } from "../../web/inspector/src/session/model";

/** A partial event: these tests give only the fields the fold reads (payloads too). */
type Draft = { type: RuntimeEvent["type"]; payload?: any; [field: string]: unknown };

/** Events numbered from 1, on one turn unless they say otherwise. */
function log(drafts: Draft[]): RuntimeEvent[] {
  return drafts.map((d, i) => ({
    event_id: `evt_${i + 1}`,
    timestamp: 1000 + i,
    sequence: i + 1,
    schema_version: 1,
    session_id: "ses_1",
    thread_id: "thr_1",
    turn_id: "trn_1",
    payload: {},
    ...d,
  })) as RuntimeEvent[];
}

function fold(events: RuntimeEvent[]): SessionModel {
  const model = new SessionModel();
  for (const e of events) model.apply(e);
  return model;
}

const start: Draft[] = [
  { type: "session.created", turn_id: undefined, payload: { agent: "lead" } },
  { type: "turn.submitted", payload: { input: "go", queued: false } },
  { type: "turn.started" },
];

describe("the inspector's session model", () => {
  it("names the agent version the session runs, as opened and as moved, and the eval run it is a case of", () => {
    const opened = fold(log([{ type: "session.created", turn_id: undefined, payload: { agent: "lead", version: 2, metadata: { eval_run_id: "evr_1" } } }]));
    expect([opened.agent, opened.agentVersion, opened.evalRun]).toEqual(["lead", 2, "evr_1"]);
    const moved = fold(
      log([...start, { type: "session.version_changed", turn_id: undefined, payload: { agent: "lead", from_version: null, to_version: 3, by: "key_1" } }]),
    );
    expect([moved.agentVersion, moved.evalRun]).toEqual([3, null]);
  });

  it("nests a script's inner calls (an approval among them) under its run_code call, and marks code tools with their version", () => {
    const inner = { parent_id: "call_run", depth: 1 };
    const catalog = [{ name: "shout", code_tool: { version: 3 } }, { name: "clock" }];
    const model = fold(
      log([
        ...start,
        { type: "tool.catalog.resolved", payload: { tools: catalog } },
        { type: "tool.started", tool_call_id: "call_run", payload: { name: "run_code", args: { code: "return 1" } } },
        { type: "tool.started", ...inner, tool_call_id: "call_shout", payload: { name: "shout", args: { text: "hi" } } },
        { type: "tool.result", ...inner, tool_call_id: "call_shout", payload: { name: "shout", output: "HI", metadata: { status: "success" } } },
        { type: "action.required", ...inner, tool_call_id: "call_clock", action_id: "act_1", payload: { kind: "tool_approval", tool_name: "clock", args: {} } },
        { type: "tool.result", tool_call_id: "call_run", payload: { name: "run_code", output: { result: 1, logs: [] }, metadata: { status: "success" } } },
      ]),
    );
    const turn = model.turns[0]!;
    expect(turn.items.map((i) => (i as ToolCall).name)).toEqual(["run_code"]);
    const run = turn.items[0] as ToolCall;
    expect(run.children.map((c) => [c.name, c.status, c.code_version])).toEqual([
      ["shout", "succeeded", 3],
      ["clock", "waiting", null],
    ]);
    expect(model.pendingApprovals.map((a) => a.tool_name)).toEqual(["clock"]);
  });

  it("puts each parallel sub-agent's text and calls inside the call that spawned it", () => {
    const child = (subagent_id: string) => ({ parent_id: "call_spawn", depth: 1, subagent_id });
    const model = fold(
      log([
        ...start,
        { type: "tool.started", tool_call_id: "call_spawn", payload: { name: "spawn_subagents", args: { jobs: [{ task: "a" }, { task: "b" }] } } },
        { type: "subagent.spawned", ...child("sub_a"), payload: { title: "job a", depth: 1 } },
        { type: "subagent.spawned", ...child("sub_b"), payload: { title: "job b", depth: 1 } },
        { type: "model.delta", ...child("sub_b"), payload: { text: "B says" } },
        { type: "model.delta", ...child("sub_a"), payload: { text: "A says" } },
        { type: "tool.started", ...child("sub_a"), tool_call_id: "call_clock", payload: { name: "clock", args: {} } },
        {
          type: "tool.result",
          ...child("sub_a"),
          tool_call_id: "call_clock",
          payload: { name: "clock", output: "noon", metadata: { status: "success", execution_time_ms: 3 } },
        },
        { type: "subagent.completed", ...child("sub_a"), payload: { result: "A done" } },
        { type: "subagent.failed", ...child("sub_b"), payload: { error: "B broke" } },
        { type: "tool.result", tool_call_id: "call_spawn", payload: { name: "spawn_subagents", output: [], metadata: { status: "success" } } },
      ]),
    );
    const turn = model.turns[0]!;
    expect(turn.items.map((i) => i.kind)).toEqual(["tool"]);
    const spawn = turn.items[0] as ToolCall;
    expect(spawn.agents.map((a: SubAgent) => [a.title, a.status, a.result])).toEqual([
      ["job a", "completed", "A done"],
      ["job b", "failed", "B broke"],
    ]);
    const [a, b] = spawn.agents as [SubAgent, SubAgent];
    expect(a.items.map((i) => (i.kind === "text" ? i.text : i.kind === "tool" ? `${i.name} ${i.status} ${i.duration_ms} ms` : i.kind))).toEqual([
      "A says",
      "clock succeeded 3 ms",
    ]);
    expect(b.items).toMatchObject([{ kind: "text", text: "B says", state: "done" }]);
  });

  it("lists an orchestration's transitions inside its card, with the child sessions", () => {
    const model = fold(
      log([
        ...start,
        { type: "tool.started", tool_call_id: "call_orch", payload: { name: "agent_orchestrate", args: { prompt: "plan it" } } },
        { type: "run.status", parent_id: "call_orch", payload: { phase: "plan_init" } },
        { type: "run.status", parent_id: "call_orch", subagent_id: "ses_child", payload: { phase: "dispatching_step" } },
        { type: "run.status", parent_id: "call_orch", payload: { phase: "completed" } },
      ]),
    );
    const call = model.turns[0]!.items[0] as ToolCall;
    expect(call.steps.map((s) => [s.phase, s.exec_id])).toEqual([
      ["plan_init", null],
      ["dispatching_step", "ses_child"],
      ["completed", null],
    ]);
    expect(model.turns[0]!.items).toHaveLength(1); // no transition is shown as a note of the turn
  });

  it("shows a refused call that never started as rejected, and the approval as no longer pending", () => {
    const ids = { tool_call_id: "call_1", action_id: "act_1" };
    const model = fold(
      log([...start, { type: "action.required", ...ids, payload: { kind: "tool_approval", tool_name: "deploy", args: { to: "prod" }, expires_at: 99_000 } }]),
    );
    expect(model.pendingApprovals).toMatchObject([{ action_id: "act_1", tool_name: "deploy", expires_at: 99_000 }]);
    expect((model.turns[0]!.items[0] as ToolCall).status).toBe("waiting");

    const more = log([
      ...start,
      { type: "action.required", ...ids, payload: { kind: "tool_approval", tool_name: "deploy", args: { to: "prod" }, expires_at: 99_000 } },
      { type: "action.resolved", ...ids, payload: { decision: "rejected", reason: "not today" } },
      {
        type: "tool.result",
        ...ids,
        payload: { name: "deploy", output: "rejected", is_error: true, metadata: { status: "rejected", approval_status: "rejected" } },
      },
      { type: "turn.completed", payload: { output: "ok", stop_reason: "final_answer" } },
    ]);
    for (const e of more.slice(model.lastSequence)) model.apply(e);
    const call = model.turns[0]!.items[0] as ToolCall;
    expect([call.status, call.approval?.status, call.approval?.reason]).toEqual(["rejected", "rejected", "not today"]);
    expect(model.pendingApprovals).toEqual([]);
    expect(model.activeTurnId).toBeNull();
  });

  it("marks text cut by a restart, notes the resumption and a handoff, and ignores events it already has", () => {
    const events = log([
      ...start,
      { type: "model.requested", payload: { phase: "executor" } },
      { type: "model.delta", payload: { text: "Once upon" } },
      { type: "model.completed", payload: { finish_reason: "interrupted", usage: { input_tokens: 0, output_tokens: 0 } } },
      { type: "run.status", payload: { phase: "recovering", attempt: 1 } },
      { type: "model.requested", payload: { phase: "executor" } },
      { type: "model.delta", payload: { text: "Once upon a time." } },
      { type: "model.completed", payload: { finish_reason: "stop" } },
      { type: "cost.recorded", payload: { usage: { input_tokens: 12, output_tokens: 4 }, cost_usd: 0.002 } },
      { type: "run.status", payload: { phase: "handoff", from: "lead", to: "helper", reason: "billing" } },
      { type: "message.injected", payload: { content: "and dragons" } },
    ]);
    const model = new SessionModel();
    for (const e of [...events, ...events.slice(3)]) model.apply(e); // a redelivery changes nothing
    expect(model.events.map((e) => e.sequence)).toEqual(events.map((e) => e.sequence));
    const turn = model.turns[0]!;
    expect(turn.items.map((i) => (i.kind === "text" ? `${i.state}: ${i.text}` : i.kind === "note" ? `${i.tone}: ${i.text}` : `${i.kind}`))).toEqual([
      "interrupted: Once upon",
      "warning: The runtime restarted; the turn resumes (attempt 1)",
      "done: Once upon a time.",
      "info: Handed off from lead to helper: billing",
      "injected",
    ]);
    expect([turn.input_tokens, turn.output_tokens, turn.cost_usd]).toEqual([12, 4, 0.002]);
    expect(model.agent).toBe("helper");
  });

  it("notes the guardrail rules that fired on the turn, and not the passes", () => {
    const checked = (payload: Record<string, unknown>, extra: Record<string, unknown> = {}): Draft => ({ type: "guardrail.checked", payload, ...extra });
    const model = fold(
      log([
        ...start,
        checked({ stage: "input", rule: "contact", kind: "pii", verdict: "redact", reason: "found email" }),
        checked({ stage: "input", rule: "input.1", kind: "regex", verdict: "pass" }),
        checked({ stage: "input", rule: "moderation", kind: "webhook", verdict: "block", failed: "timeout", reason: "no answer within 300 ms" }),
      ]),
    );
    expect(model.turns[0]!.items.map((i) => (i.kind === "note" ? `${i.tone}: ${i.text}` : i.kind))).toEqual([
      "warning: Guardrail contact (input, pii): redact (found email)",
      "error: Guardrail moderation (input, webhook): block (no answer within 300 ms; failed: timeout)",
    ]);
  });

  it("shows a model fallback on the turn, and the turn's cache hit share", () => {
    const usage = { input_tokens: 100, cached_input_tokens: 80, output_tokens: 5, total_tokens: 105 };
    const model = fold(
      log([
        ...start,
        { type: "model.requested", payload: { model: "openai:gpt-4.1", phase: "executor" } },
        { type: "model.fallback", payload: { from: "openai:gpt-4.1", to: "anthropic:claude-sonnet-4-5", reason: "overloaded" } },
        { type: "model.completed", payload: { finish_reason: "stop", usage, model: "anthropic:claude-sonnet-4-5" } },
        { type: "cost.recorded", payload: { model: "anthropic:claude-sonnet-4-5", phase: "executor", usage, cost_usd: 0.001 } },
      ]),
    );
    const turn = model.turns[0]!;
    expect(turn.items).toContainEqual(
      expect.objectContaining({ kind: "note", tone: "warning", text: "Model openai:gpt-4.1 failed over to anthropic:claude-sonnet-4-5: overloaded" }),
    );
    expect([turn.input_tokens, turn.cached_input_tokens]).toEqual([100, 80]);
  });

  it("notes a quota's pause, a continue without a note, and a resume with room", () => {
    const paused = (quota_id: string): Draft => ({ type: "turn.paused", payload: { reason: "quota", quota_id, message: "no room", retry_at: null } });
    const model = fold(
      log([
        ...start,
        paused("daily"),
        { type: "turn.continued", payload: { reason: "quota", quota_id: "daily", by: "key_1" } },
        paused("monthly"),
        { type: "turn.resumed", payload: { reason: "quota", quota_id: "monthly" } },
      ]),
    );
    expect(model.turns[0]!.items.map((i) => (i.kind === "note" ? `${i.tone}: ${i.text}` : i.kind))).toEqual([
      "warning: Paused by quota daily: no room",
      "warning: Continued over quota daily by key_1",
      "warning: Paused by quota monthly: no room",
      "info: Resumed: quota monthly has room",
    ]);
  });
});
