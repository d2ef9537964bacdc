// A turn joins the caller's W3C trace: every event of the turn carries its trace_id; the turn, each model
// call and each tool call are spans, parent-linked, so the events line up with the caller's own spans.
import { describe, expect, it } from "vitest";
import { spanId } from "../../../src/protocol/span-id";
import { api, createSession, waitForTurnEnd } from "../../support/api";

const TRACE = "4bf92f3577b34da6a3ce929d0e0e4736";
const CALLER_SPAN = "00f067aa0ba902b7";

describe("trace context", () => {
  it("stamps the caller's trace on every event of the turn, with a span per model call and tool call", async () => {
    const sid = await createSession({ name: "traced", model: "demo:fast", tools: ["calculator"] });
    const res = await api("POST", `/v1/sessions/${sid}/turns`, { input: "what is 6 * 7?" }, { traceparent: `00-${TRACE}-${CALLER_SPAN}-01` });
    expect(res.status).toBe(202);
    const log = await waitForTurnEnd(sid, res.body.turn_id);
    const turnEvents = log.filter((e) => e.turn_id === res.body.turn_id);
    expect(turnEvents.every((e) => e.trace_id === TRACE)).toBe(true);
    const turnSpan = spanId(TRACE, res.body.turn_id);
    const submitted = turnEvents.find((e) => e.type === "turn.submitted");
    expect(submitted).toMatchObject({ span_id: turnSpan, parent_span_id: CALLER_SPAN });
    expect(turnEvents.find((e) => e.type === "turn.completed")).toMatchObject({ span_id: turnSpan });
    const requested = turnEvents.filter((e) => e.type === "model.requested");
    expect(requested.length).toBe(2);
    for (const r of requested) {
      const span = turnEvents.filter((e) => e.step_id === r.step_id && e.type.startsWith("model.")).map((e) => e.span_id);
      expect(new Set(span)).toEqual(new Set([spanId(TRACE, r.step_id)]));
      expect(r.parent_span_id).toBe(turnSpan);
    }
    const started = turnEvents.find((e) => e.type === "tool.started");
    const result = turnEvents.find((e) => e.type === "tool.result");
    expect(started.span_id).toBe(spanId(TRACE, started.tool_call_id));
    expect(result).toMatchObject({ span_id: started.span_id, parent_span_id: turnSpan });
    expect(new Set([turnSpan, ...requested.map((r) => spanId(TRACE, r.step_id)), started.span_id]).size).toBe(4);
  });

  it("starts a trace of its own without a traceparent, or with a malformed one", async () => {
    const sid = await createSession({ name: "untraced", model: "demo:fast" });
    for (const headers of [{}, { traceparent: "00-not-a-trace-01" }, { traceparent: `00-${"0".repeat(32)}-${CALLER_SPAN}-01` }] as Record<string, string>[]) {
      const res = await api("POST", `/v1/sessions/${sid}/turns`, { input: "hi" }, headers);
      const log = await waitForTurnEnd(sid, res.body.turn_id);
      const submitted = log.find((e) => e.type === "turn.submitted" && e.turn_id === res.body.turn_id);
      expect(submitted.trace_id).toMatch(/^[0-9a-f]{32}$/);
      expect(submitted.trace_id).not.toBe("0".repeat(32));
      expect(submitted.parent_span_id).toBeNull();
    }
  });
});
