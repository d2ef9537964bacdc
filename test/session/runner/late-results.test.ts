// A tool call in flight when its turn is cut (interrupt, on_busy "interrupt" or "rollback"): a non-idempotent
// call (a webhook tool) keeps running and its outcome is recorded after the turn's end as tool.result.late,
// outside the conversation; an idempotent one is aborted as before. The call is held open by a gate of the
// fake server until the test releases it. Semantics: docs/guides/busy-sessions.md.
import { describe, expect, it } from "vitest";
import { api, createSession, events, expectGapless, submitTurn, waitForEvent, waitForTurnEnd } from "../../support/api";
import { gateURL, releaseGate, requests, type Step, script, uniqueId, waitForGate } from "../../support/fake-model";

/** A session whose agent has the webhook tool `notify`, answered through gate `gate`. */
async function webhookSession(gate: string, steps: Step[], extra: Record<string, unknown> = {}): Promise<{ sid: string; scriptId: string }> {
  const scriptId = uniqueId("late");
  await script(scriptId, steps);
  const notify = { name: "notify", description: "notifies", url: gateURL(gate), parameters: { type: "object", properties: {} } };
  const sid = await createSession({ name: "late", model: `openai-compatible:${scriptId}`, http_tools: [notify], ...extra });
  return { sid, scriptId };
}

/** Submits a turn whose model calls `tool`, and waits until the call's request is held by `gate`. */
async function callInFlight(sid: string, gate: string, input: string): Promise<string> {
  const { turn_id } = await submitTurn(sid, input);
  await waitForEvent(sid, (e) => e.type === "tool.started" && e.turn_id === turn_id);
  await waitForGate(gate, (g) => g.held >= 1, "the tool call's request never arrived");
  return turn_id;
}

const notifyCall = (id: string): Step => ({ tool_calls: [{ id, name: "notify", arguments: {} }] });

describe("a non-idempotent tool call in flight when its turn is cut", () => {
  it("on_busy interrupt: the call is closed in the turn, keeps running, and its result is recorded after the turn's end, outside the conversation", async () => {
    const gate = uniqueId("gate");
    const { sid, scriptId } = await webhookSession(gate, [notifyCall("call_n"), { text: "Hi." }, { text: "Still here." }]);
    const first = await callInFlight(sid, gate, "notify the team");
    const res = await api("POST", `/v1/sessions/${sid}/turns`, { input: "never mind, say hi", on_busy: "interrupt" });
    expect(res.status).toBe(202);
    const second = res.body.turn_id;
    await waitForTurnEnd(sid, second);

    // The request was never aborted: it is still open, and gets the answer.
    expect(await releaseGate(gate, { sent: true, to: "team" })).toEqual({ delivered: 1, dropped: 0 });
    const late = await waitForEvent(sid, (e) => e.type === "tool.result.late");
    expect(late.turn_id).toBeUndefined();
    expect(late.payload).toEqual({
      turn_id: first,
      tool_call_id: "call_n",
      name: "notify",
      output: { sent: true, to: "team" },
      is_error: false,
      metadata: expect.objectContaining({ status: "success", offloaded_artifact_id: null }),
    });

    const log = await events(sid);
    expectGapless(log);
    const at = (type: string, turn?: string) => log.findIndex((e) => e.type === type && (turn === undefined || e.turn_id === turn));
    const closed = log.find((e) => e.type === "tool.result" && e.tool_call_id === "call_n");
    expect(closed).toMatchObject({ turn_id: first, payload: { output: "Tool call cancelled", is_error: true } });
    expect(log.indexOf(closed)).toBeLessThan(at("turn.cancelled", first));
    expect(at("turn.cancelled", first)).toBeLessThan(at("turn.completed", second));
    expect(at("turn.completed", second)).toBeLessThan(log.indexOf(log.find((e) => e.type === "tool.result.late")));
    expect(log.filter((e) => e.type === "tool.result.late")).toHaveLength(1);

    // The next turn's model call sees the call as the cut turn closed it: the late result is not in the conversation.
    const third = await submitTurn(sid, "anything new?");
    await waitForTurnEnd(sid, third.turn_id);
    const reqs = await requests(scriptId);
    expect(reqs).toHaveLength(3);
    const cut = [
      { role: "user", content: "notify the team" },
      { role: "assistant", content: null, tool_calls: [expect.objectContaining({ id: "call_n" })] },
      { role: "tool", tool_call_id: "call_n", content: "Tool call cancelled" },
    ];
    expect(reqs[1].messages).toEqual([...cut, { role: "user", content: "never mind, say hi" }]);
    expect(reqs[2].messages).toEqual([
      ...cut,
      { role: "user", content: "never mind, say hi" },
      { role: "assistant", content: "Hi." },
      { role: "user", content: "anything new?" },
    ]);
  });

  it("on_busy rollback: turn.rolled_back lists the call as not completed; its late result follows, redacted by the tool_output redactions", async () => {
    const gate = uniqueId("gate");
    const { sid } = await webhookSession(gate, [notifyCall("call_r"), { text: "Done." }], {
      guardrails: { tool_output: [{ type: "pii", entities: ["email"], action: "redact" }] },
    });
    const first = await callInFlight(sid, gate, "email ann");
    const res = await api("POST", `/v1/sessions/${sid}/turns`, { input: "forget it", on_busy: "rollback" });
    expect(res.status).toBe(202);
    await waitForTurnEnd(sid, res.body.turn_id);
    const rolledBack = (await events(sid)).find((e) => e.type === "turn.rolled_back");
    expect(rolledBack.payload).toEqual({
      turn_id: first,
      by_turn_id: res.body.turn_id,
      side_effects: [{ tool_call_id: "call_r", name: "notify", completed: false }],
    });

    expect(await releaseGate(gate, { sent_to: "ann@example.com" })).toEqual({ delivered: 1, dropped: 0 });
    const late = await waitForEvent(sid, (e) => e.type === "tool.result.late");
    expect(late.payload).toMatchObject({ turn_id: first, tool_call_id: "call_r", name: "notify", is_error: false });
    expect(JSON.stringify(late.payload.output)).not.toContain("ann@example.com");
    expect(rolledBack.sequence).toBeLessThan(late.sequence);
    // A rolled-back turn stays out of the read model's turns; a late result does not bring it back.
    const view = (await api("GET", `/v1/sessions/${sid}`)).body;
    expect(view.turns.map((t: any) => t.turn_id)).toEqual([res.body.turn_id]);
  });

  it("a result that arrived while the turn still checked it (a tool_output webhook held) is recorded late when the turn is cut", async () => {
    const gate = uniqueId("gate");
    const judge = uniqueId("judge");
    const { sid } = await webhookSession(gate, [notifyCall("call_w"), { text: "Done." }], {
      guardrails: { tool_output: [{ type: "webhook", name: "moderation", url: gateURL(judge), timeout_ms: 30_000 }] },
    });
    const first = await callInFlight(sid, gate, "notify them");
    expect(await releaseGate(gate, { sent: "yes" })).toEqual({ delivered: 1, dropped: 0 });
    await waitForGate(judge, (g) => g.held >= 1, "the tool_output webhook was not called");
    expect((await api("POST", `/v1/sessions/${sid}/interrupt`)).status).toBe(200);
    await waitForTurnEnd(sid, first);
    const late = await waitForEvent(sid, (e) => e.type === "tool.result.late");
    expect(late.payload).toMatchObject({ turn_id: first, tool_call_id: "call_w", name: "notify", output: { sent: "yes" }, is_error: false });
    const log = await events(sid);
    expectGapless(log);
    expect(log.find((e) => e.type === "tool.result" && e.tool_call_id === "call_w").payload).toMatchObject({ output: "Tool call cancelled", is_error: true });
    expect(log.findIndex((e) => e.type === "turn.cancelled")).toBeLessThan(log.indexOf(log.find((e) => e.type === "tool.result.late")));
    expect(log.filter((e) => e.type === "tool.result.late")).toHaveLength(1);
  });
});

describe("an idempotent tool call in flight when its turn is cut", () => {
  it("the interrupt operation aborts it as before: its request is closed, and no late result is recorded", async () => {
    const gate = uniqueId("gate");
    const scriptId = uniqueId("late");
    await script(scriptId, [{ tool_calls: [{ id: "call_f", name: "http_fetch", arguments: { url: gateURL(gate) } }] }]);
    const sid = await createSession({ name: "late-fetch", model: `openai-compatible:${scriptId}`, tools: ["http_fetch"] });
    const turn = await callInFlight(sid, gate, "fetch it");
    expect((await api("POST", `/v1/sessions/${sid}/interrupt`)).status).toBe(200);
    await waitForTurnEnd(sid, turn);
    await waitForGate(gate, (g) => g.dropped >= 1, "the idempotent call's request was not aborted");
    expect(await releaseGate(gate, { late: true })).toEqual({ delivered: 0, dropped: 1 });
    const log = await events(sid);
    expect(log.find((e) => e.type === "tool.result" && e.tool_call_id === "call_f").payload).toMatchObject({ is_error: true });
    expect(log.filter((e) => e.type === "tool.result.late")).toEqual([]);
  });
});
