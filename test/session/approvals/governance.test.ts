// Tool governance through the public surface: human approval of hitl_tools calls (HTTP and WebSocket
// decisions, deadlines, interrupts, restarts while waiting), tool-result metadata, session policy and
// permission classes, and exclusive locks.
import { abortAllDurableObjects, env, evictDurableObject, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { afterEach, describe, expect, it } from "vitest";
import { api, events, expectGapless, KEY, submitTurn, waitForCount, waitForEvent, waitForTurnEnd } from "../../support/api";
import { requests, type Step, script, toolRequests, toolURL, uniqueId } from "../../support/fake-model";
import { closeAllSockets, openWs } from "../../support/ws";

const SECOND_KEY = "second-key";
/** Who decided, as action.resolved records it: a hash of the caller's key, never the key. */
const KEY_HASH = /^key_[0-9a-f]{16}$/;
const DEFAULT_APPROVAL_TIMEOUT_MS = 15 * 60 * 1000;

const stub = (sid: string) => env.SESSIONS.get(env.SESSIONS.idFromName(sid));

const objectParams = (properties: Record<string, unknown>, required: string[] = []) => ({ type: "object", properties, required });

/** An HTTP tool on the fake webhook server (class network unless told otherwise). */
function httpTool(name: string, endpoint = "echo", extra: Record<string, unknown> = {}) {
  return {
    name,
    description: `The ${name} tool`,
    url: toolURL(endpoint),
    parameters: objectParams({ env: { type: "string" } }),
    ...extra,
  };
}

const DEPLOY = httpTool("deploy", "echo", { parameters: objectParams({ env: { type: "string" } }, ["env"]) });

/** A session on a scripted model, created with POST /v1/sessions (and a policy when given). */
async function governed(steps: Step[], config: Record<string, unknown>, policy?: unknown): Promise<{ sid: string; scriptId: string }> {
  const scriptId = uniqueId("governance");
  await script(scriptId, steps);
  const res = await api("POST", "/v1/sessions", {
    agent: { name: "governed", model: `openai-compatible:${scriptId}`, ...config },
    ...(policy === undefined ? {} : { policy }),
  });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return { sid: res.body.session_id, scriptId };
}

function decide(sid: string, actionId: string, decision: unknown, reason?: string, key = KEY) {
  return api("POST", `/v1/sessions/${sid}/actions/${actionId}`, { decision, ...(reason === undefined ? {} : { reason }) }, { authorization: `Bearer ${key}` });
}

async function thread(sid: string): Promise<any> {
  const res = await api("GET", `/v1/sessions/${sid}/thread`);
  expect(res.status).toBe(200);
  return res.body;
}

/** Bodies the fake webhook endpoints received for this session's tool calls. */
async function webhookCalls(sid: string): Promise<any[]> {
  return (await toolRequests()).filter((r: any) => r && r.session_id === sid);
}

/** The one event of `type` for a tool call (fails when there is not exactly one). */
function only(log: any[], type: string, toolCallId: string): any {
  const found = log.filter((e) => e.type === type && e.tool_call_id === toolCallId);
  expect(found, `${type} for ${toolCallId}`).toHaveLength(1);
  return found[0];
}

const indexOf = (log: any[], type: string, toolCallId: string) => log.findIndex((e) => e.type === type && e.tool_call_id === toolCallId);

/** Tool messages of a Chat Completions request, as [tool_call_id, content]. */
const toolMessages = (request: any) => request.messages.filter((m: any) => m.role === "tool").map((m: any) => [m.tool_call_id, m.content]);

/** expires_at is the moment of the request plus the agent's approval_timeout_ms. */
function expectDeadline(required: any, timeoutMs: number): void {
  const slack = required.payload.expires_at - timeoutMs - required.timestamp;
  expect(slack).toBeLessThanOrEqual(0);
  expect(slack).toBeGreaterThan(-100);
}

/** Waits until the absolute time `at` (ms since the epoch) has passed. */
const sleepUntil = (at: number) => new Promise((r) => setTimeout(r, Math.max(0, at - Date.now())));

afterEach(async () => {
  await closeAllSockets();
});

describe("approvals of hitl_tools", () => {
  it("asks before running, shows waiting_permission, and runs the tool once approved", async () => {
    const { sid, scriptId } = await governed(
      [{ text: "Deploying.", tool_calls: [{ name: "deploy", arguments: { env: "prod", ticket: "T-1" } }] }, { text: "Deployed." }],
      { http_tools: [DEPLOY], hitl_tools: ["deploy"], injected_tool_args: { ticket: "The change ticket" } },
    );
    const { turn_id } = await submitTurn(sid, "deploy to prod");
    const required = await waitForEvent(sid, (e) => e.type === "action.required");
    const { action_id, tool_call_id } = required;
    expect(required).toMatchObject({ turn_id, action_id: expect.any(String), tool_call_id: expect.any(String) });
    expect(required.payload).toEqual({
      kind: "tool_approval",
      tool_name: "deploy",
      args: { env: "prod" },
      injected_args: { ticket: "T-1" },
      expires_at: expect.any(Number),
      // An approver may edit the arguments: they are checked against the tool's parameters.
      args_schema: DEPLOY.parameters,
    });
    expectDeadline(required, DEFAULT_APPROVAL_TIMEOUT_MS);

    // Waiting: nothing started, the webhook was not called, the thread lists the pending action.
    let log = await events(sid);
    expect(log.filter((e) => e.type === "tool.started")).toEqual([]);
    expect(log.at(-1).type).toBe("action.required");
    expect(await webhookCalls(sid)).toEqual([]);
    expect(await thread(sid)).toMatchObject({
      status: "waiting_permission",
      active_turn_id: turn_id,
      pending_actions: [{ action_id, kind: "tool_approval", tool_name: "deploy", expires_at: required.payload.expires_at }],
    });
    expect(await requests(scriptId)).toHaveLength(1);

    const res = await decide(sid, action_id, "approve");
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toEqual({ action_id, turn_id, tool_call_id, decision: "approved" });

    log = await waitForTurnEnd(sid, turn_id);
    expectGapless(log);
    const resolved = only(log, "action.resolved", tool_call_id);
    expect(resolved).toMatchObject({ turn_id, action_id, payload: { decision: "approved", tool_name: "deploy", by: expect.stringMatching(KEY_HASH) } });
    expect(resolved.payload.by).not.toContain(KEY);
    expect(indexOf(log, "action.required", tool_call_id)).toBeLessThan(indexOf(log, "action.resolved", tool_call_id));
    expect(indexOf(log, "action.resolved", tool_call_id)).toBeLessThan(indexOf(log, "tool.started", tool_call_id));
    expect(indexOf(log, "tool.started", tool_call_id)).toBeLessThan(indexOf(log, "tool.result", tool_call_id));

    expect(only(log, "tool.started", tool_call_id).payload).toEqual({ name: "deploy", args: { env: "prod" }, injected_args: { ticket: "T-1" } });
    const result = only(log, "tool.result", tool_call_id);
    expect(result.payload).toMatchObject({ name: "deploy", is_error: false });
    expect(result.payload.output.received).toEqual({ tool: "deploy", args: { env: "prod" }, session_id: sid, turn_id, tool_call_id });
    const metadata = result.payload.metadata;
    expect(metadata).toEqual({
      status: "success",
      started_at: expect.any(Number),
      completed_at: expect.any(Number),
      execution_time_ms: metadata.completed_at - metadata.started_at,
      approval_status: "approved",
      approval_id: action_id,
      injected_args: { ticket: "T-1" },
      offloaded_artifact_id: null,
      receipt: { idempotency_key: expect.stringMatching(/^idk_/), status: 200, attempts: 1 },
    });
    // The tool started after the decision, not when the model asked.
    expect(metadata.started_at).toBeGreaterThanOrEqual(resolved.timestamp);

    const calls = await webhookCalls(sid);
    expect(calls).toEqual([{ tool: "deploy", args: { env: "prod" }, session_id: sid, turn_id, tool_call_id }]);
    expect(log.at(-1)).toMatchObject({ type: "turn.completed", turn_id, payload: { output: "Deployed.", stop_reason: "final_answer" } });
    expect(await thread(sid)).toMatchObject({ status: "idle", active_turn_id: null, pending_actions: [] });
  });

  it("reject: the tool never runs and the model is told it was rejected, with the reason", async () => {
    const { sid, scriptId } = await governed([{ tool_calls: [{ name: "deploy", arguments: { env: "prod" } }] }, { text: "Understood, not deploying." }], {
      http_tools: [DEPLOY],
      hitl_tools: ["deploy"],
    });
    const { turn_id } = await submitTurn(sid, "deploy to prod");
    const { action_id, tool_call_id } = await waitForEvent(sid, (e) => e.type === "action.required");
    const res = await decide(sid, action_id, "reject", "not on a Friday");
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ action_id, turn_id, tool_call_id, decision: "rejected" });

    const log = await waitForTurnEnd(sid, turn_id);
    expectGapless(log);
    expect(only(log, "action.resolved", tool_call_id).payload).toMatchObject({
      decision: "rejected",
      tool_name: "deploy",
      by: expect.stringMatching(KEY_HASH),
      reason: "not on a Friday",
    });
    const result = only(log, "tool.result", tool_call_id);
    expect(result.payload).toMatchObject({
      name: "deploy",
      is_error: true,
      metadata: { status: "rejected", approval_status: "rejected", approval_id: action_id, injected_args: {}, offloaded_artifact_id: null },
    });
    expect(result.payload.output).toMatch(/rejected/);
    expect(result.payload.output).toContain("not on a Friday");
    expect(await webhookCalls(sid)).toEqual([]);

    // The rejection is fed back to the model as the call's result; the turn goes on.
    const sent = await requests(scriptId);
    expect(sent).toHaveLength(2);
    expect(toolMessages(sent[1])).toEqual([[tool_call_id, result.payload.output]]);
    expect(log.at(-1)).toMatchObject({ type: "turn.completed", payload: { output: "Understood, not deploying.", stop_reason: "final_answer" } });
  });

  it("a second decision is 409, an unknown action 404, a malformed decision 422 (changing nothing)", async () => {
    const { sid } = await governed([{ tool_calls: [{ name: "deploy", arguments: { env: "prod" } }] }, { text: "done" }], {
      http_tools: [DEPLOY],
      hitl_tools: ["deploy"],
    });
    const { turn_id } = await submitTurn(sid, "deploy");
    const { action_id } = await waitForEvent(sid, (e) => e.type === "action.required");
    const before = await events(sid);

    const bad = await decide(sid, action_id, "maybe");
    expect(bad.status).toBe(422);
    expect(bad.body.error.code).toBe("validation_failed");
    expect(bad.body.error.details.map((d: any) => d.path)).toEqual(["decision"]);
    const missing = await api("POST", `/v1/sessions/${sid}/actions/${action_id}`, {});
    expect(missing.status).toBe(422);
    expect(missing.body.error.details.map((d: any) => d.path)).toEqual(["decision"]);
    const extra = await api("POST", `/v1/sessions/${sid}/actions/${action_id}`, { decision: "approve", approver: "me" });
    expect(extra.status).toBe(422);
    expect(extra.body.error.details).toEqual([{ path: "approver", reason: "is not a known field" }]);
    const notJson = await api("POST", `/v1/sessions/${sid}/actions/${action_id}`, "{decision");
    expect(notJson.status).toBe(400);
    expect(notJson.body.error.code).toBe("malformed_body");

    const unknown = await decide(sid, "act_doesnotexist", "approve");
    expect(unknown.status).toBe(404);
    expect(unknown.body.error).toMatchObject({ code: "not_found", message: expect.stringContaining("act_doesnotexist") });

    // None of the refused requests changed anything: the action is still pending.
    expect(await events(sid)).toEqual(before);
    expect((await thread(sid)).pending_actions.map((a: any) => a.action_id)).toEqual([action_id]);

    // An action id belongs to its session: another session does not know it.
    const other = await governed([], {});
    expect((await decide(other.sid, action_id, "approve")).status).toBe(404);

    // Two decisions racing: exactly one wins.
    const racing = await Promise.all([decide(sid, action_id, "approve"), decide(sid, action_id, "approve", undefined, SECOND_KEY)]);
    expect(racing.map((r) => r.status).sort()).toEqual([200, 409]);
    const again = await decide(sid, action_id, "reject");
    expect(again.status).toBe(409);
    expect(again.body.error).toEqual({ code: "conflict", message: expect.stringContaining(action_id), details: { status: "approved" } });
    const same = await decide(sid, action_id, "approve", undefined, SECOND_KEY);
    expect(same.status).toBe(409);
    expect(same.body.error.code).toBe("conflict");

    const log = await waitForTurnEnd(sid, turn_id);
    expect(log.filter((e) => e.type === "action.resolved")).toHaveLength(1);
    expect(log.filter((e) => e.type === "tool.started")).toHaveLength(1);
    expect(await webhookCalls(sid)).toHaveLength(1);
  });

  it("several approvals in one step: each call waits for its own decision, others run at once, results in emitted order", async () => {
    const MIGRATE = httpTool("migrate");
    const LOOKUP = httpTool("lookup");
    const { sid, scriptId } = await governed(
      [
        {
          tool_calls: [
            { name: "deploy", arguments: { env: "prod" } },
            { name: "lookup", arguments: { env: "status" } },
            { name: "migrate", arguments: { env: "db" } },
          ],
        },
        { text: "Deployed; migration skipped." },
      ],
      { http_tools: [DEPLOY, LOOKUP, MIGRATE], hitl_tools: ["deploy", "migrate"] },
    );
    const { turn_id } = await submitTurn(sid, "ship it");
    await waitForEvent(sid, (e) => e.type === "tool.result");
    let log = await waitForCount(sid, "action.required", 2);
    const [reqDeploy, reqMigrate] = log.filter((e) => e.type === "action.required");
    expect([reqDeploy.payload.tool_name, reqMigrate.payload.tool_name]).toEqual(["deploy", "migrate"]);
    expect(reqDeploy.action_id).not.toBe(reqMigrate.action_id);
    const lookupStarted = log.find((e) => e.type === "tool.started");
    expect(lookupStarted.payload.name).toBe("lookup");
    const lookupId: string = lookupStarted.tool_call_id;
    const deployId: string = reqDeploy.tool_call_id;
    const migrateId: string = reqMigrate.tool_call_id;
    expect(only(log, "tool.result", lookupId).payload).toMatchObject({
      is_error: false,
      metadata: { status: "success", approval_status: "not_required", approval_id: null },
    });
    expect((await webhookCalls(sid)).map((c) => c.tool)).toEqual(["lookup"]);
    expect(await thread(sid)).toMatchObject({
      status: "waiting_permission",
      pending_actions: [
        { action_id: reqDeploy.action_id, tool_name: "deploy" },
        { action_id: reqMigrate.action_id, tool_name: "migrate" },
      ],
    });

    // Approving one runs only that one; the turn keeps waiting for the other.
    const approved = await decide(sid, reqDeploy.action_id, "approve");
    expect(approved.status).toBe(200);
    log = await waitForEvent(sid, (e) => e.type === "tool.result" && e.tool_call_id === deployId).then(() => events(sid));
    expect(only(log, "tool.result", deployId).payload.metadata).toMatchObject({
      status: "success",
      approval_status: "approved",
      approval_id: reqDeploy.action_id,
    });
    expect(indexOf(log, "tool.started", migrateId)).toBe(-1);
    expect((await webhookCalls(sid)).map((c) => c.tool)).toEqual(["lookup", "deploy"]);
    expect(await thread(sid)).toMatchObject({
      status: "waiting_permission",
      active_turn_id: turn_id,
      pending_actions: [{ action_id: reqMigrate.action_id, tool_name: "migrate" }],
    });
    expect(await requests(scriptId)).toHaveLength(1);

    // Rejecting the other (with another key) finishes the step; the turn continues.
    const rejected = await decide(sid, reqMigrate.action_id, "reject", undefined, SECOND_KEY);
    expect(rejected.status).toBe(200);
    log = await waitForTurnEnd(sid, turn_id);
    expectGapless(log);
    expect(only(log, "tool.result", migrateId).payload).toMatchObject({
      is_error: true,
      metadata: { status: "rejected", approval_status: "rejected", approval_id: reqMigrate.action_id },
    });
    expect((await webhookCalls(sid)).map((c) => c.tool)).toEqual(["lookup", "deploy"]);

    // Who decided: a key hash, different for different keys.
    const byDeploy = only(log, "action.resolved", deployId).payload.by;
    const byMigrate = only(log, "action.resolved", migrateId).payload.by;
    expect(byDeploy).toMatch(KEY_HASH);
    expect(byMigrate).toMatch(KEY_HASH);
    expect(byMigrate).not.toBe(byDeploy);

    const sent = await requests(scriptId);
    expect(sent).toHaveLength(2);
    expect(toolMessages(sent[1]).map(([id]: [string]) => id)).toEqual([deployId, lookupId, migrateId]);
    expect(toolMessages(sent[1])[2][1]).toMatch(/rejected/);
    expect(log.at(-1)).toMatchObject({ type: "turn.completed", payload: { output: "Deployed; migration skipped." } });
  });

  it("survives restarts while waiting: still waiting_permission, no recovery, and the decision resumes exactly where it paused", async () => {
    // A short timeout: the HTTP tool's AbortSignal.timeout timer outlives the call, and a graceful eviction
    // waits for it (up to the default 10 s) before tearing the object down.
    const LOOKUP = httpTool("lookup", "echo", { timeout_ms: 1000 });
    const { sid, scriptId } = await governed(
      [
        { text: "Hi." },
        { text: "Checking first.", tool_calls: [{ name: "lookup", arguments: { env: "prod" } }] },
        { tool_calls: [{ name: "deploy", arguments: { env: "prod" } }] },
        { text: "Deployed after the restart." },
      ],
      { http_tools: [DEPLOY, LOOKUP], hitl_tools: ["deploy"] },
    );
    const t1 = await submitTurn(sid, "hello");
    await waitForTurnEnd(sid, t1.turn_id);
    const { turn_id } = await submitTurn(sid, "deploy to prod");
    const required = await waitForEvent(sid, (e) => e.type === "action.required");
    const { action_id, tool_call_id } = required;
    const before = await events(sid);
    const threadBefore = await thread(sid);
    expect(threadBefore).toMatchObject({ status: "waiting_permission", active_turn_id: turn_id, pending_actions: [{ action_id, tool_name: "deploy" }] });

    // A graceful eviction, then a hard abort: the object comes back each time, still waiting.
    await evictDurableObject(stub(sid));
    expect(await thread(sid)).toEqual(threadBefore);
    await abortAllDurableObjects();
    expect(await thread(sid)).toEqual(threadBefore);
    // The alarm (heartbeat or deadline) does not treat the wait as a crash either.
    await runDurableObjectAlarm(stub(sid));
    expect(await events(sid)).toEqual(before);
    expect(before.filter((e) => e.type === "run.status")).toEqual([]);
    expect(await requests(scriptId)).toHaveLength(3);

    const res = await decide(sid, action_id, "approve");
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toEqual({ action_id, turn_id, tool_call_id, decision: "approved" });
    const log = await waitForTurnEnd(sid, turn_id);
    expectGapless(log);
    expect(log.slice(0, before.length)).toEqual(before);
    expect(log.filter((e) => e.type === "run.status")).toEqual([]);
    expect(log.filter((e) => e.type === "action.required")).toHaveLength(1);
    expect(only(log, "tool.result", tool_call_id).payload.metadata).toMatchObject({ status: "success", approval_status: "approved", approval_id: action_id });
    expect((await webhookCalls(sid)).map((c) => [c.tool, c.tool_call_id === tool_call_id])).toEqual([
      ["lookup", false],
      ["deploy", true],
    ]);
    // After resuming, the turn goes on from the paused step: only the events after the decision are new.
    const flow = ["run.status", "action.required", "action.resolved", "tool.started", "tool.result", "model.requested", "model.completed", "turn.completed"];
    expect(
      log
        .slice(before.length)
        .map((e) => e.type)
        .filter((t) => flow.includes(t)),
    ).toEqual(["action.resolved", "tool.started", "tool.result", "model.requested", "model.completed", "turn.completed"]);
    expect(log.at(-1).payload.output).toBe("Deployed after the restart.");

    // The model's next request carries everything before the pause: the earlier turn and this turn's steps.
    const sent = await requests(scriptId);
    expect(sent).toHaveLength(4);
    const last = sent[3].messages;
    expect(last.map((m: any) => m.role)).toEqual(["user", "assistant", "user", "assistant", "tool", "assistant", "tool"]);
    expect(last[0].content).toBe("hello");
    expect(last[1].content).toBe("Hi.");
    expect(last[2].content).toBe("deploy to prod");
    expect(last[3].content).toBe("Checking first.");
    expect(last[5].tool_calls.map((c: any) => c.id)).toEqual([tool_call_id]);
    expect(last[6].tool_call_id).toBe(tool_call_id);
    expect(JSON.parse(last[6].content).received.tool_call_id).toBe(tool_call_id);
    expect(await thread(sid)).toMatchObject({ status: "idle", pending_actions: [] });
  });

  it("resolves as timed_out at the deadline, across a restart: the tool never runs and the turn continues", async () => {
    const { sid, scriptId } = await governed([{ tool_calls: [{ name: "deploy", arguments: { env: "prod" } }] }, { text: "Nobody answered." }], {
      http_tools: [DEPLOY],
      hitl_tools: ["deploy"],
      approval_timeout_ms: 1000,
    });
    const { turn_id } = await submitTurn(sid, "deploy");
    const required = await waitForEvent(sid, (e) => e.type === "action.required");
    const { action_id, tool_call_id } = required;
    expectDeadline(required, 1000);
    // The deadline is durable: it survives a hard restart of the object while waiting.
    await abortAllDurableObjects();
    expect((await thread(sid)).pending_actions.map((a: any) => a.action_id)).toEqual([action_id]);
    await sleepUntil(required.payload.expires_at + 50);
    // The alarm may already have fired on its own; running it again must not resolve anything twice.
    await runDurableObjectAlarm(stub(sid));

    const log = await waitForTurnEnd(sid, turn_id);
    expectGapless(log);
    expect(log.filter((e) => e.type === "action.resolved")).toHaveLength(1);
    expect(only(log, "action.resolved", tool_call_id)).toMatchObject({ action_id, payload: { decision: "timed_out", tool_name: "deploy", by: "runtime" } });
    const result = only(log, "tool.result", tool_call_id);
    expect(result.payload).toMatchObject({
      name: "deploy",
      is_error: true,
      metadata: { status: "timed_out", approval_status: "timed_out", approval_id: action_id },
    });
    expect(await webhookCalls(sid)).toEqual([]);
    const sent = await requests(scriptId);
    expect(sent).toHaveLength(2);
    expect(toolMessages(sent[1])).toEqual([[tool_call_id, result.payload.output]]);
    expect(log.at(-1)).toMatchObject({ type: "turn.completed", payload: { output: "Nobody answered.", stop_reason: "final_answer" } });

    const late = await decide(sid, action_id, "approve");
    expect(late.status).toBe(409);
    expect(late.body.error).toMatchObject({ code: "conflict", details: { status: "timed_out" } });
  });

  it("the respond_action frame resolves an action the same way, also after hibernation; an unknown id is ok:false not_found", async () => {
    const { sid } = await governed(
      [
        { tool_calls: [{ name: "deploy", arguments: { env: "staging" } }] },
        { tool_calls: [{ name: "deploy", arguments: { env: "prod" } }] },
        { text: "Both deployed." },
      ],
      { http_tools: [DEPLOY], hitl_tools: ["deploy"] },
    );
    const ws = await openWs(sid);
    const { turn_id } = await submitTurn(sid, "deploy twice");
    const first = await ws.waitForEvent((e) => e.type === "action.required", "the first action.required");

    const unknown = await ws.command({ type: "respond_action", action_id: "act_nope", decision: "approve", request_id: "r0" });
    expect(unknown).toMatchObject({ type: "reply", request_id: "r0", ok: false, error: { code: "not_found" } });
    const bad = await ws.command({ type: "respond_action", action_id: first.action_id, decision: "perhaps", request_id: "r1" });
    expect(bad).toMatchObject({ ok: false, error: { code: "validation_failed" } });

    // The object hibernates while waiting; the socket stays open and the decision arrives over it.
    await evictDurableObject(stub(sid), { webSockets: "hibernate" });
    expect(ws.closed).toBeNull();
    const ok = await ws.command({ type: "respond_action", action_id: first.action_id, decision: "approve", request_id: "r2" });
    expect(ok).toEqual({
      type: "reply",
      request_id: "r2",
      ok: true,
      result: { action_id: first.action_id, turn_id, tool_call_id: first.tool_call_id, decision: "approved" },
    });
    const twice = await ws.command({ type: "respond_action", action_id: first.action_id, decision: "reject", request_id: "r3" });
    expect(twice).toMatchObject({ ok: false, error: { code: "conflict" } });

    // The second call is approved over HTTP with the same key: the same `by`.
    const second = await ws.waitForEvent((e) => e.type === "action.required" && e.action_id !== first.action_id, "the second action.required");
    expect((await decide(sid, second.action_id as string, "approve")).status).toBe(200);
    await ws.waitForTurnEnd(turn_id);
    const log = await waitForTurnEnd(sid, turn_id);
    expectGapless(log);
    expect(ws.events.map((e) => e.sequence)).toEqual(log.map((e) => e.sequence));
    const byWs = only(log, "action.resolved", first.tool_call_id as string).payload;
    const byHttp = only(log, "action.resolved", second.tool_call_id as string).payload;
    expect(byWs).toMatchObject({ decision: "approved", by: expect.stringMatching(KEY_HASH) });
    expect(byHttp.by).toBe(byWs.by);
    expect(only(log, "tool.result", first.tool_call_id as string).payload.metadata).toMatchObject({ status: "success", approval_status: "approved" });
    expect((await webhookCalls(sid)).map((c) => c.args)).toEqual([{ env: "staging" }, { env: "prod" }]);
  });

  it("a decision that arrives while other calls of the step still run is picked up in the same step", async () => {
    const SLOW = httpTool("report", "slow?ms=800");
    const { sid, scriptId } = await governed(
      [
        {
          tool_calls: [
            { name: "report", arguments: { env: "prod" } },
            { name: "deploy", arguments: { env: "prod" } },
          ],
        },
        { text: "done" },
      ],
      { http_tools: [DEPLOY, SLOW], hitl_tools: ["deploy"] },
    );
    const { turn_id } = await submitTurn(sid, "go");
    const required = await waitForEvent(sid, (e) => e.type === "action.required");
    await waitForEvent(sid, (e) => e.type === "tool.started" && e.payload.name === "report");
    const res = await decide(sid, required.action_id, "approve");
    expect(res.status).toBe(200);
    const log = await waitForTurnEnd(sid, turn_id);
    expectGapless(log);
    const reportId: string = log.find((e) => e.type === "tool.started" && e.payload.name === "report").tool_call_id;
    // The decision came while the slow call ran; the approved call ran once, after it.
    expect(indexOf(log, "action.resolved", required.tool_call_id)).toBeLessThan(indexOf(log, "tool.result", reportId));
    expect(only(log, "tool.result", required.tool_call_id).payload.metadata).toMatchObject({ status: "success", approval_status: "approved" });
    expect((await webhookCalls(sid)).map((c) => c.tool).sort()).toEqual(["deploy", "report"]);
    const sent = await requests(scriptId);
    expect(sent).toHaveLength(2);
    expect(toolMessages(sent[1]).map(([id]: [string]) => id)).toEqual([reportId, required.tool_call_id]);
    expect(log.at(-1).type).toBe("turn.completed");
  });

  it("a malformed call to a hitl tool is refused as an error without asking anyone", async () => {
    const { sid } = await governed([{ tool_calls: [{ name: "deploy", arguments: { region: "eu" } }] }, { text: "bad call" }], {
      http_tools: [DEPLOY],
      hitl_tools: ["deploy"],
    });
    const { turn_id } = await submitTurn(sid, "deploy");
    const log = await waitForTurnEnd(sid, turn_id);
    expect(log.filter((e) => e.type.startsWith("action."))).toEqual([]);
    const result = log.find((e) => e.type === "tool.result");
    expect(result.payload).toMatchObject({ name: "deploy", is_error: true, metadata: { status: "error", approval_status: "not_required", approval_id: null } });
    expect(result.payload.output).toContain("env");
    expect(await webhookCalls(sid)).toEqual([]);
  });

  it("an interrupt while waiting cancels the turn, rejecting the pending action as the runtime; a later decision is 409", async () => {
    const { sid, scriptId } = await governed([{ tool_calls: [{ name: "deploy", arguments: { env: "prod" } }] }, { text: "Fine." }], {
      http_tools: [DEPLOY],
      hitl_tools: ["deploy"],
    });
    const { turn_id } = await submitTurn(sid, "deploy");
    const { action_id, tool_call_id } = await waitForEvent(sid, (e) => e.type === "action.required");
    const res = await api("POST", `/v1/sessions/${sid}/interrupt`, { reason: "user left" });
    expect(res.body).toEqual({ interrupted: true, turn_id });

    const log = await waitForTurnEnd(sid, turn_id);
    expectGapless(log);
    expect(log.slice(-2)).toMatchObject([
      { type: "action.resolved", action_id, tool_call_id, payload: { decision: "rejected", tool_name: "deploy", by: "runtime" } },
      { type: "turn.cancelled", turn_id, payload: { reason: "user left" } },
    ]);
    expect(indexOf(log, "tool.started", tool_call_id)).toBe(-1);
    expect(await webhookCalls(sid)).toEqual([]);
    expect(await thread(sid)).toMatchObject({ status: "idle", active_turn_id: null, pending_actions: [] });

    const late = await decide(sid, action_id, "approve");
    expect(late.status).toBe(409);
    expect(late.body.error).toMatchObject({ code: "conflict", details: { status: "rejected" } });
    expect(await events(sid)).toEqual(log);

    // The history stays a valid conversation: the unrun call is answered.
    const t2 = await submitTurn(sid, "never mind");
    await waitForTurnEnd(sid, t2.turn_id);
    const sent = await requests(scriptId);
    expect(toolMessages(sent[1])).toEqual([[tool_call_id, expect.stringMatching(/not executed/)]]);
    expect(await webhookCalls(sid)).toEqual([]);
  });
});

describe("session policy and permission classes", () => {
  const names = (tools: any[]) => tools.map((t) => t.name);

  it("a policy of safe classes exposes only safe tools; a call outside it is an error result, never an execution", async () => {
    const LOOKUP = httpTool("lookup");
    const { sid, scriptId } = await governed(
      [
        {
          tool_calls: [
            { name: "lookup", arguments: { env: "prod" } },
            { name: "calculator", arguments: { expression: "2 + 3" } },
            { name: "memory_write", arguments: { key: "k", value: "v" } },
          ],
        },
        { text: "done" },
      ],
      { tools: ["calculator", "clock", "memory_read", "memory_write"], http_tools: [LOOKUP] },
      { classes: ["safe"] },
    );
    const policy = { classes: ["safe"], workspace_root: "/" };
    const inventory = await api("GET", `/v1/sessions/${sid}/tools`);
    expect(inventory.status).toBe(200);
    expect(names(inventory.body.tools)).toEqual(["calculator", "clock"]);
    expect(inventory.body.policy).toEqual(policy);
    for (const t of inventory.body.tools) expect(t).toMatchObject({ permission_class: "safe", parallel_safe: true, lock: null });
    expect((await api("GET", `/v1/sessions/${sid}`)).body.policy).toEqual(policy);
    expect((await events(sid))[0].payload.policy).toEqual(policy);

    const { turn_id } = await submitTurn(sid, "go");
    const log = await waitForTurnEnd(sid, turn_id);
    expectGapless(log);
    const catalog = log.find((e) => e.type === "tool.catalog.resolved" && e.turn_id === turn_id);
    expect(catalog.payload.tools).toEqual(inventory.body.tools);
    const [first] = await requests(scriptId);
    expect(first.tools.map((t: any) => t.function.name)).toEqual(["calculator", "clock"]);

    const result = (name: string) => log.find((e) => e.type === "tool.result" && e.payload.name === name);
    expect(result("calculator").payload).toMatchObject({ output: "5", is_error: false });
    for (const name of ["lookup", "memory_write"]) {
      expect(result(name).payload, name).toMatchObject({ is_error: true, metadata: { status: "error", approval_status: "not_required" } });
      expect(result(name).payload.output, name).toContain(name);
    }
    expect(await webhookCalls(sid)).toEqual([]);
    // memory_write never ran either: the session's memory is empty.
    const stored = await runInDurableObject(stub(sid), (_instance, state) => state.storage.sql.exec("SELECT count(*) AS n FROM memory").one().n);
    expect(stored).toBe(0);
    expect(log.at(-1).type).toBe("turn.completed");
  });

  it("the default policy hides external_mutate and secrets tools; an explicit policy listing them exposes them", async () => {
    const config = {
      tools: ["calculator", "memory_write"],
      http_tools: [
        httpTool("lookup"),
        httpTool("charge", "echo", { permission_class: "external_mutate" }),
        httpTool("vault", "echo", { permission_class: "secrets" }),
      ],
    };
    const { sid, scriptId } = await governed([{ tool_calls: [{ name: "charge", arguments: { env: "card" } }] }, { text: "ok" }], {
      ...config,
      hitl_tools: ["charge"],
    });
    const inventory = await api("GET", `/v1/sessions/${sid}/tools`);
    expect(names(inventory.body.tools)).toEqual(["calculator", "memory_write", "lookup"]);
    expect(inventory.body.policy).toEqual({ classes: ["safe", "knowledge", "network", "workspace_write", "subagent"], workspace_root: "/" });
    expect(inventory.body.tools.map((t: any) => t.permission_class)).toEqual(["safe", "workspace_write", "network"]);
    expect((await api("GET", `/v1/sessions/${sid}`)).body.policy).toEqual(inventory.body.policy);

    const { turn_id } = await submitTurn(sid, "charge the card");
    const log = await waitForTurnEnd(sid, turn_id);
    expect(names(log.find((e) => e.type === "tool.catalog.resolved").payload.tools)).toEqual(["calculator", "memory_write", "lookup"]);
    expect((await requests(scriptId))[0].tools.map((t: any) => t.function.name)).toEqual(["calculator", "memory_write", "lookup"]);
    // Outside the toolbelt: an error result; nobody is even asked to approve it.
    expect(log.find((e) => e.type === "tool.result").payload).toMatchObject({
      name: "charge",
      is_error: true,
      metadata: { status: "error", approval_status: "not_required" },
    });
    expect(log.filter((e) => e.type === "action.required")).toEqual([]);
    expect(await webhookCalls(sid)).toEqual([]);

    const explicit = await governed([{ tool_calls: [{ name: "charge", arguments: { env: "card" } }] }, { text: "charged" }], config, {
      classes: ["network", "external_mutate", "secrets"],
    });
    const exposed = await api("GET", `/v1/sessions/${explicit.sid}/tools`);
    expect(names(exposed.body.tools)).toEqual(["lookup", "charge", "vault"]);
    expect(exposed.body.tools.map((t: any) => t.permission_class)).toEqual(["network", "external_mutate", "secrets"]);
    expect(exposed.body.policy).toEqual({ classes: ["network", "external_mutate", "secrets"], workspace_root: "/" });
    const t2 = await submitTurn(explicit.sid, "charge the card");
    const log2 = await waitForTurnEnd(explicit.sid, t2.turn_id);
    expect(log2.find((e) => e.type === "tool.result").payload).toMatchObject({ name: "charge", is_error: false, metadata: { status: "success" } });
    expect((await webhookCalls(explicit.sid)).map((c) => c.tool)).toEqual(["charge"]);
  });

  it("refuses bad policies with 422 naming the field", async () => {
    const agent = { name: "policy-check", model: "demo:x" };
    const cases: [unknown, string][] = [
      [{ classes: ["safe", "root"] }, "policy.classes.1"],
      [{ classes: ["safe", "network", "safe"] }, "policy.classes"],
      [{ classes: "safe" }, "policy.classes"],
      [{ workspace_root: "relative" }, "policy.workspace_root"],
      [{ workspace_root: "/a/../b" }, "policy.workspace_root"],
      [{ workspace_root: "/a/./b" }, "policy.workspace_root"],
      [{ classes: ["safe"], allow_everything: true }, "policy.allow_everything"],
    ];
    for (const [policy, path] of cases) {
      const res = await api("POST", "/v1/sessions", { agent, policy });
      expect(res.status, JSON.stringify(policy)).toBe(422);
      expect(res.body.error.code).toBe("validation_failed");
      expect(
        res.body.error.details.map((d: any) => d.path),
        JSON.stringify(policy),
      ).toEqual([path]);
    }
    // A good one, for contrast; an empty class list exposes no tools at all.
    const ok = await api("POST", "/v1/sessions", { agent: { ...agent, tools: ["calculator"] }, policy: { classes: [], workspace_root: "/project" } });
    expect(ok.status).toBe(201);
    const snapshot = await api("GET", `/v1/sessions/${ok.body.session_id}`);
    expect(snapshot.body.policy).toEqual({ classes: [], workspace_root: "/project" });
    expect((await api("GET", `/v1/sessions/${ok.body.session_id}/tools`)).body.tools).toEqual([]);
  });
});

describe("exclusive locks", () => {
  const slowTool = (name: string, extra: Record<string, unknown> = {}) => httpTool(name, "slow?ms=300", { parallel_safe: true, ...extra });

  /** tool.started / tool.result of the step, as [type, tool name]. */
  async function runTwoSlowCalls(tools: Record<string, unknown>[]): Promise<{ sid: string; timeline: [string, string][]; log: any[] }> {
    const { sid } = await governed(
      [
        {
          tool_calls: [
            { name: "first", arguments: { env: "a" } },
            { name: "second", arguments: { env: "b" } },
          ],
        },
        { text: "done" },
      ],
      { http_tools: tools },
    );
    const { turn_id } = await submitTurn(sid, "go");
    const log = await waitForTurnEnd(sid, turn_id);
    expectGapless(log);
    const timeline = log.filter((e) => e.type === "tool.started" || e.type === "tool.result").map((e): [string, string] => [e.type, e.payload.name]);
    for (const r of log.filter((e) => e.type === "tool.result")) expect(r.payload).toMatchObject({ is_error: false, output: { ok: true } });
    return { sid, timeline, log };
  }

  it("calls holding the same lock never overlap, even when parallel-safe", async () => {
    const { sid, timeline } = await runTwoSlowCalls([slowTool("first", { lock: "db" }), slowTool("second", { lock: "db" })]);
    expect(timeline).toEqual([
      ["tool.started", "first"],
      ["tool.result", "first"],
      ["tool.started", "second"],
      ["tool.result", "second"],
    ]);
    const inventory = (await api("GET", `/v1/sessions/${sid}/tools`)).body.tools;
    expect(inventory.map((t: any) => [t.name, t.parallel_safe, t.lock])).toEqual([
      ["first", true, "db"],
      ["second", true, "db"],
    ]);
  });

  it("without a lock the same calls overlap", async () => {
    const { timeline } = await runTwoSlowCalls([slowTool("first"), slowTool("second")]);
    expect(timeline.slice(0, 2).map(([type]) => type)).toEqual(["tool.started", "tool.started"]);
    expect(timeline.slice(2).map(([type]) => type)).toEqual(["tool.result", "tool.result"]);
  });
});
