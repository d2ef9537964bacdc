// format "otlp" subscriptions: each turn that ends is POSTed as OTLP/HTTP JSON traces to a local receiver,
// which rebuilds the span tree of a turn with a sub-agent and an approval from the payload alone.
import { describe, expect, it } from "vitest";
import { api, createAgent, waitForEvent, waitForTurnEnd } from "../../support/api";
import { baseURL, script, uniqueId } from "../../support/fake-model";

const CALLER_TRACE = "0af7651916cd43dd8448eb211c80319c";
const CALLER_SPAN = "b7ad6b7169203331";

const nanos = (v: unknown) => BigInt(String(v));
const attr = (span: any, key: string) => {
  const v = span.attributes.find((a: any) => a.key === key)?.value;
  return v && (v.stringValue ?? v.intValue ?? v.arrayValue?.values.map((x: any) => x.stringValue));
};

/** The spans of the one OTLP request the receiver gets (it waits for it). */
async function received(rcv: string): Promise<any[]> {
  let requests: any[] = [];
  for (const deadline = Date.now() + 5000; requests.length === 0 && Date.now() < deadline; ) {
    requests = (await (await fetch(`${rcv}/requests`)).json()) as any[];
    await new Promise((r) => setTimeout(r, 20));
  }
  expect(requests).toHaveLength(1);
  return JSON.parse(requests[0].body).resourceSpans.flatMap((r: any) => r.scopeSpans.flatMap((s: any) => s.spans));
}

describe("OTLP subscriptions", () => {
  it("sends one trace per turn: turn, model calls, tool calls and the sub-agent, parent-linked, with the approval wait in its call", async () => {
    const rcv = `${baseURL}/_receiver/${uniqueId("otlp")}`;
    const scriptId = uniqueId("otlp");
    await script(scriptId, [
      { tool_calls: [{ name: "run_subtask", arguments: { title: "Research", instructions: "Answer briefly.", tools: [] } }] },
      { text: "Found it." },
      { tool_calls: [{ name: "calculator", arguments: { expression: "6 * 7" } }] },
      { text: "42." },
    ]);
    const created = await api("POST", "/v1/sessions", {
      agent: { name: "traced", model: `openai-compatible:${scriptId}`, tools: ["run_subtask", "calculator"], hitl_tools: ["calculator"] },
    });
    const sid = created.body.session_id;
    const sub = await api("POST", `/v1/sessions/${sid}/subscriptions`, { url: rcv, format: "otlp" });
    expect(sub.status, JSON.stringify(sub.body)).toBe(201);

    const submitted = await api("POST", `/v1/sessions/${sid}/turns`, { input: "compute" }, { traceparent: `00-${CALLER_TRACE}-${CALLER_SPAN}-01` });
    const turnId = submitted.body.turn_id;
    const required = await waitForEvent(sid, (e) => e.type === "action.required");
    await new Promise((r) => setTimeout(r, 300));
    expect((await api("POST", `/v1/sessions/${sid}/actions/${required.action_id}`, { decision: "approve" })).status).toBe(200);
    const log = await waitForTurnEnd(sid, turnId);

    const spans = await received(rcv);
    expect(new Set(spans.map((s) => s.traceId))).toEqual(new Set([CALLER_TRACE]));
    expect(new Set(spans.map((s) => s.spanId)).size).toBe(spans.length);

    // The tree, rebuilt from parentSpanId alone.
    const byId = new Map(spans.map((s) => [s.spanId, s]));
    const children = (s: any) =>
      spans
        .filter((c) => c.parentSpanId === s.spanId)
        .map((c) => c.name)
        .sort();
    const root = spans.find((s) => !byId.has(s.parentSpanId));
    expect(root).toMatchObject({ name: "invoke_agent traced", parentSpanId: CALLER_SPAN, status: { code: 1 } });
    const chat = `chat openai-compatible:${scriptId}`;
    expect(children(root)).toEqual([chat, chat, chat, "execute_tool calculator", "execute_tool run_subtask", "invoke_agent Research"].sort());
    const subagent = spans.find((s) => s.name === "invoke_agent Research");
    expect(children(subagent)).toEqual([chat]);
    expect(attr(subagent, "gen_ai.operation.name")).toBe("invoke_agent");

    const model = spans.find((s) => s.parentSpanId === subagent.spanId);
    expect(attr(model, "gen_ai.request.model")).toBe(`openai-compatible:${scriptId}`);
    expect(Number(attr(model, "gen_ai.usage.input_tokens"))).toBeGreaterThan(0);
    expect(attr(model, "gen_ai.response.finish_reasons")).toEqual(["stop"]);

    // The approval wait is part of the calculator call's span, with times from the log.
    const calc = spans.find((s) => s.name === "execute_tool calculator");
    expect(attr(calc, "gen_ai.tool.name")).toBe("calculator");
    expect(nanos(calc.endTimeUnixNano) - nanos(calc.startTimeUnixNano)).toBeGreaterThanOrEqual(300_000_000n);
    const resolved = log.find((e) => e.type === "action.resolved");
    expect(nanos(calc.endTimeUnixNano)).toBeGreaterThanOrEqual(BigInt(resolved.timestamp) * 1_000_000n);
    // The wait itself is a span under the call: from the question to the decision, with who decided.
    const wait = spans.find((s) => s.parentSpanId === calc.spanId);
    expect(wait).toMatchObject({ name: "await_human calculator", status: { code: 1 } });
    expect(nanos(wait.startTimeUnixNano)).toBe(BigInt(required.timestamp) * 1_000_000n);
    expect(nanos(wait.endTimeUnixNano)).toBe(BigInt(resolved.timestamp) * 1_000_000n);
    expect(attr(wait, "agent_runtime.action.id")).toBe(required.action_id);
    expect(attr(wait, "agent_runtime.action.decision")).toBe("approved");
    expect(attr(wait, "agent_runtime.action.by")).toBe(resolved.payload.by);
    const end = log.find((e) => e.type === "turn.completed");
    expect(nanos(root.endTimeUnixNano)).toBe(BigInt(end.timestamp) * 1_000_000n);
    for (const s of spans) {
      expect(nanos(s.startTimeUnixNano) <= nanos(s.endTimeUnixNano)).toBe(true);
      if (byId.has(s.parentSpanId)) expect(nanos(s.startTimeUnixNano) >= nanos(byId.get(s.parentSpanId).startTimeUnixNano)).toBe(true);
    }
  });

  it("gives each agent_orchestrate step a span under its call, ended by the elapsed time its result records", async () => {
    const rcv = `${baseURL}/_receiver/${uniqueId("otlp")}`;
    const stepScript = uniqueId("otlp-step");
    await script(stepScript, [{ text: "Step done." }]);
    const agent = `step-${crypto.randomUUID().slice(0, 8)}`;
    await createAgent({ name: agent, model: `openai-compatible:${stepScript}` });
    const scriptId = uniqueId("otlp-orch");
    const plan = { steps: [{ id: "s1", type: "agent", agent, prompt: "Do it" }] };
    await script(scriptId, [{ tool_calls: [{ id: "orc_1", name: "agent_orchestrate", arguments: { plan } }] }, { text: "Done." }]);
    const sid = (await api("POST", "/v1/sessions", { agent: { name: "orch", model: `openai-compatible:${scriptId}`, tools: ["agent_orchestrate"] } })).body
      .session_id;
    expect((await api("POST", `/v1/sessions/${sid}/subscriptions`, { url: rcv, format: "otlp" })).status).toBe(201);
    const { turn_id } = (await api("POST", `/v1/sessions/${sid}/turns`, { input: "go" })).body;
    const log = await waitForTurnEnd(sid, turn_id, 15_000);
    const spans = await received(rcv);

    const call = spans.find((s) => s.name === "execute_tool agent_orchestrate");
    const step = spans.find((s) => s.name === `invoke_agent ${agent}`);
    expect(step.parentSpanId).toBe(call.spanId);
    const dispatched = log.find((e) => e.type === "run.status" && e.payload.phase === "dispatching_step");
    expect(attr(step, "gen_ai.conversation.id")).toBe(dispatched.payload.exec_id);
    expect(attr(step, "agent_runtime.orchestration.step_id")).toBe("s1");
    const result = log.find((e) => e.type === "tool.result" && e.tool_call_id === "orc_1").payload.output.steps[0];
    expect(nanos(step.startTimeUnixNano)).toBe(BigInt(dispatched.timestamp) * 1_000_000n);
    expect(nanos(step.endTimeUnixNano) - nanos(step.startTimeUnixNano)).toBe(BigInt(result.elapsed_ms) * 1_000_000n);
    expect(step.status.code).toBe(1);
  });
});
