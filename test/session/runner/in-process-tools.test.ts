// In-process tools (createRuntime's `tools`: the AI SDK's tool() with a zod schema) through the public surface:
// the pool's Worker (test/support/worker.ts) is a runtime made as a tenant makes one, with tools that record
// their side effects on the fake server's echo webhook. A scripted model makes the calls under test.
import { abortAllDurableObjects } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { api, events, expectGapless, expectRefused, submitTurn, waitForEvent, waitForTurnEnd } from "../../support/api";
import { releaseGate, requests, type Step, script, toolRequests, uniqueId, waitForGate } from "../../support/fake-model";

/** A session on an inline agent of the scripted model, whose one turn plays `steps`. */
async function session(steps: Step[], agent: Record<string, unknown>) {
  const scriptId = uniqueId("inproc");
  await script(scriptId, steps);
  const res = await api("POST", "/v1/sessions", { agent: { name: "inproc", model: `openai-compatible:${scriptId}`, ...agent } });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return { sid: res.body.session_id as string, scriptId };
}

const call = (id: string, name: string, args: Record<string, unknown>): Step => ({ tool_calls: [{ id, name, arguments: args }] });
const result = (log: any[], id: string) => log.find((e) => e.type === "tool.result" && e.tool_call_id === id)?.payload;
const webhookCalls = async (sid: string) => (await toolRequests()).filter((r: any) => r.session_id === sid);

describe("in-process tools", () => {
  it("are named in tools like built-ins: listed with their zod schema as JSON Schema, called in a turn, their result in the log and the next model call", async () => {
    const { sid, scriptId } = await session([call("c1", "ts_lookup", { word: "fork" }), { text: "Found it." }], { tools: ["ts_lookup", "calculator"] });
    const tools = await api("GET", `/v1/sessions/${sid}/tools`);
    expect(tools.status).toBe(200);
    expect(tools.body.tools.find((t: any) => t.name === "ts_lookup")).toEqual({
      name: "ts_lookup",
      description: "Looks a word up",
      parameters: expect.objectContaining({
        type: "object",
        properties: { word: { type: "string", minLength: 1, description: "the word" } },
        required: ["word"],
      }),
      permission_class: "network",
      parallel_safe: true,
      lock: null,
    });
    const { turn_id } = await submitTurn(sid, "look up fork");
    const log = await waitForTurnEnd(sid, turn_id);
    expectGapless(log);
    expect(log.find((e) => e.type === "tool.started" && e.tool_call_id === "c1").payload).toMatchObject({ name: "ts_lookup", args: { word: "fork" } });
    expect(result(log, "c1")).toMatchObject({ name: "ts_lookup", is_error: false, output: { word: "fork", meaning: "what fork means" } });
    expect(log.at(-1)).toMatchObject({ type: "turn.completed", payload: { output: "Found it." } });
    const second = (await requests(scriptId))[1];
    expect(second.messages.find((m: any) => m.role === "tool").content).toContain("what fork means");
    expect(await webhookCalls(sid)).toEqual([{ tool: "ts_lookup", args: { word: "fork" }, session_id: sid, turn_id, tool_call_id: "c1" }]);
    // The execution tree shows it as any tool call.
    const tree = await api("GET", `/v1/sessions/${sid}/turns/${turn_id}/tree`);
    expect(JSON.stringify(tree.body)).toContain("ts_lookup");
  });

  it("are called by the demo model's `use <tool> with <json>`", async () => {
    const res = await api("POST", "/v1/sessions", { agent: { name: "inproc-demo", model: "demo:demo", tools: ["ts_lookup"] } });
    const sid = res.body.session_id;
    const { turn_id } = await submitTurn(sid, 'use ts_lookup with {"word":"spoon"}');
    const log = await waitForTurnEnd(sid, turn_id);
    expect(log.at(-1)).toMatchObject({
      type: "turn.completed",
      payload: { output: 'The ts_lookup tool returned: {"word":"spoon","meaning":"what spoon means"}' },
    });
    // Not taken for a code tool: the turn looked for none and warned of none.
    expect(log.filter((e) => e.type === "runtime.warning")).toEqual([]);
  });

  it("are hidden by a session policy that does not enable their permission class", async () => {
    const res = await api("POST", "/v1/sessions", {
      agent: { name: "inproc-policy", model: "demo:demo", tools: ["ts_lookup", "ts_big"] },
      policy: { classes: ["safe"] },
    });
    const tools = await api("GET", `/v1/sessions/${res.body.session_id}/tools`);
    expect(tools.body.tools.map((t: any) => [t.name, t.permission_class])).toEqual([["ts_big", "safe"]]);
  });

  it("refuses an unknown name at PUT with 422 naming the field, and a webhook tool of an in-process tool's name", async () => {
    await expectRefused("PUT", "/v1/agents/inproc-unknown", "tools.1", { model: "demo:demo", tools: ["ts_lookup", "ts_nope"] }, 'unknown tool "ts_nope"');
    const http = { name: "ts_lookup", url: "http://127.0.0.1:1/x" };
    const clash = await api("PUT", "/v1/agents/inproc-clash", { model: "demo:demo", http_tools: [http] });
    expect(clash.status).toBe(422);
    expect(clash.body.error.details).toContainEqual({ path: "http_tools.0.name", reason: '"ts_lookup" clashes with an in-process tool of this deployment' });
    const ok = await api("PUT", "/v1/agents/inproc-ok", { model: "demo:demo", tools: ["ts_lookup"], hitl_tools: ["ts_lookup"] });
    expect(ok.status, JSON.stringify(ok.body)).toBe(201);
  });

  it("waits for an approval; the approver's edit is checked against the zod schema and runs instead of the model's arguments", async () => {
    const { sid } = await session([call("c1", "ts_lookup", { word: "fork" }), { text: "Done." }], { tools: ["ts_lookup"], hitl_tools: ["ts_lookup"] });
    const { turn_id } = await submitTurn(sid, "look up fork");
    const required = await waitForEvent(sid, (e) => e.type === "action.required");
    expect(required.payload).toMatchObject({ kind: "tool_approval", tool_name: "ts_lookup", args: { word: "fork" } });
    expect(await webhookCalls(sid)).toEqual([]);
    const bad = await api("POST", `/v1/sessions/${sid}/actions/${required.action_id}`, { decision: "approve", args: { word: "" } });
    expect(bad.status).toBe(422);
    const ok = await api("POST", `/v1/sessions/${sid}/actions/${required.action_id}`, { decision: "approve", args: { word: "spoon" } });
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
    const log = await waitForTurnEnd(sid, turn_id);
    expect(result(log, "c1")).toMatchObject({
      is_error: false,
      output: { word: "spoon" },
      metadata: { approval_status: "approved", args_edited_by: expect.any(String) },
    });
    expect((await webhookCalls(sid)).map((c: any) => c.args)).toEqual([{ word: "spoon" }]);
  });

  it("times out after its timeout_ms: the call's abortSignal fires and the model gets an error result", async () => {
    const { sid } = await session([call("c1", "ts_slow", { ms: 10_000 }), { text: "Too slow." }], { tools: ["ts_slow"] });
    const { turn_id } = await submitTurn(sid, "wait");
    const log = await waitForTurnEnd(sid, turn_id);
    expect(result(log, "c1")).toMatchObject({ is_error: true, output: 'Tool "ts_slow" timed out after 200 ms' });
    expect(log.at(-1).type).toBe("turn.completed");
    const aborted = await webhookCalls(sid);
    expect(aborted).toEqual([expect.objectContaining({ tool: "ts_slow", args: { aborted: expect.stringContaining("timed out after 200 ms") } })]);
  });

  it("gets arguments its schema refuses as an error result, without running", async () => {
    const { sid } = await session([call("c1", "ts_lookup", { word: 7 }), { text: "Oops." }], { tools: ["ts_lookup"] });
    const { turn_id } = await submitTurn(sid, "look up 7");
    const log = await waitForTurnEnd(sid, turn_id);
    expect(result(log, "c1")).toMatchObject({ is_error: true, output: expect.stringMatching(/^Invalid arguments for "ts_lookup": \/word: /) });
    expect(await webhookCalls(sid)).toEqual([]);
  });

  it("is cancelled by an interrupt: the abortSignal given to execute aborts its work", async () => {
    const gate = uniqueId("inproc-gate");
    const { sid } = await session([call("c1", "ts_gate", { gate }), { text: "never" }], { tools: ["ts_gate"] });
    const { turn_id } = await submitTurn(sid, "wait on the gate");
    await waitForGate(gate, (s) => s.held === 1, "the tool's request never arrived");
    expect((await api("POST", `/v1/sessions/${sid}/interrupt`, { reason: "stop" })).status).toBe(200);
    const log = await waitForTurnEnd(sid, turn_id);
    expect(log.at(-1).type).toBe("turn.cancelled");
    expect(result(log, "c1")).toMatchObject({ is_error: true });
    // The tool's own request was closed by its abortSignal, not left hanging.
    await waitForGate(gate, (s) => s.dropped === 1, "the tool's request was not aborted");
  });

  it("after a restart cut a call, runs an idempotent tool's call again, and gives another's an outcome-unknown result", async () => {
    const gate = uniqueId("inproc-restart");
    const { sid } = await session([{ tool_calls: [{ id: "c1", name: "ts_gate", arguments: { gate } }] }, { text: "Done." }], { tools: ["ts_gate"] });
    const { turn_id } = await submitTurn(sid, "wait on the gate");
    await waitForGate(gate, (s) => s.held === 1, "the tool's request never arrived");
    await abortAllDurableObjects();
    await events(sid); // any request wakes the session, which resumes its turn
    // The resumed turn calls the tool again: a second request reaches the gate, which answers it.
    await waitForGate(gate, (s) => s.dropped === 1 && s.held === 1, "the idempotent call did not run again");
    await releaseGate(gate, { opened: true });
    let log = await waitForTurnEnd(sid, turn_id);
    expect(result(log, "c1")).toMatchObject({ is_error: false, output: { opened: true } });
    expect(log.at(-1).type).toBe("turn.completed");

    const held = uniqueId("inproc-restart");
    const other = await session([{ tool_calls: [{ id: "h1", name: "ts_hold", arguments: { gate: held } }] }, { text: "Lost." }], { tools: ["ts_hold"] });
    const turn = await submitTurn(other.sid, "hold");
    await waitForGate(held, (s) => s.held === 1, "the tool's request never arrived");
    await abortAllDurableObjects();
    log = await waitForTurnEnd(other.sid, turn.turn_id);
    expect(result(log, "h1")).toMatchObject({ is_error: true, output: { category: "lost" } });
    expect((await releaseGate(held, {})).delivered).toBe(0);
  });

  it("count against the turn's tool-call budget: the call past max_total_tool_calls never runs and the turn fails budget_exceeded", async () => {
    const steps = [call("c1", "ts_lookup", { word: "one" }), call("c2", "ts_lookup", { word: "two" }), { text: "never" }];
    const { sid } = await session(steps, { tools: ["ts_lookup"], budget: { max_total_tool_calls: 1 } });
    const { turn_id } = await submitTurn(sid, "look up two words");
    const log = await waitForTurnEnd(sid, turn_id);
    expect(log.at(-1)).toMatchObject({ type: "turn.failed", payload: { error: { code: "budget_exceeded" } } });
    expect((await webhookCalls(sid)).map((c: any) => c.args)).toEqual([{ word: "one" }]);
  });

  it("spills a result over max_tool_result_bytes to R2, with a preview in the log", async () => {
    const { sid } = await session([call("c1", "ts_big", { bytes: 5000 }), { text: "Big." }], { tools: ["ts_big"], budget: { max_tool_result_bytes: 1000 } });
    const { turn_id } = await submitTurn(sid, "big");
    const log = await waitForTurnEnd(sid, turn_id);
    const spilled = log.find((e) => e.type === "output.spilled");
    expect(spilled).toMatchObject({ tool_call_id: "c1", payload: { name: "ts_big", bytes: 5000 } });
    expect(result(log, "c1").output).toContain(`[truncated: 5000 bytes in all; the whole is artifact ${spilled.payload.artifact_id}]`);
    const artifact = await api("GET", `/v1/sessions/${sid}/artifacts/${spilled.payload.artifact_id}`);
    expect(artifact.status).toBe(200);
  });

  it("a replayed turn answers an in-process tool from the recording: the tool does not run again", async () => {
    const { sid, scriptId } = await session([call("c1", "ts_lookup", { word: "fork" }), { text: "Found it." }], { tools: ["ts_lookup"] });
    const { turn_id } = await submitTurn(sid, "look up fork");
    const source = await waitForTurnEnd(sid, turn_id);
    await script(scriptId, [{ text: "a live answer" }]);
    const res = await api("POST", `/v1/sessions/${sid}/turns/${turn_id}/replay`, {});
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const { exec_id, turn_id: replayed } = res.body;
    const log = await waitForTurnEnd(exec_id, replayed);
    await waitForEvent(exec_id, (e) => e.type === "replay.completed");
    expect(result(log, "c1")).toEqual(expect.objectContaining({ output: result(source, "c1").output, is_error: false }));
    expect(await webhookCalls(exec_id)).toEqual([]);
    expect(await webhookCalls(sid)).toHaveLength(1);
    expect((await events(exec_id)).at(-1).payload).toMatchObject({ output_changed: false, tool_calls_changed: false });
  });
});
