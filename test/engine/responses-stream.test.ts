// The Open Responses folds (src/views/responses-stream.ts, response-object.ts) over hand-made logs: numbering,
// items, the end at a pause (live or found later: the same events), continuations, input items and ids.
import { describe, expect, it } from "vitest";
import type { RuntimeEvent } from "../../src/protocol/events";
import { inputItems, parseResponseId, type ResponseRef, responseId } from "../../src/views/response-object";
import { type ResponsesEvent, ResponsesFold } from "../../src/views/responses-stream";

const SID = `ses_${"a".repeat(24)}`;
const TURN = `trn_${"b".repeat(24)}`;
const FRESH: ResponseRef = { session_id: SID, turn_id: TURN, after: null };

type Draft = { type: string; payload: Record<string, unknown> } & Record<string, unknown>;

/** Events of one turn numbered from `from` + 1, as the store stamps them. */
function log(drafts: Draft[], from = 0): RuntimeEvent[] {
  return drafts.map(
    (d, i) =>
      ({
        turn_id: TURN,
        session_id: SID,
        thread_id: "thr_x",
        event_id: `e${i}`,
        schema_version: 1,
        timestamp: 1_000_000 + i,
        sequence: from + i + 1,
        ...d,
      }) as unknown as RuntimeEvent,
  );
}

const usage = { input_tokens: 10, output_tokens: 5, total_tokens: 15, cached_input_tokens: 4 };
const submitted: Draft = { type: "turn.submitted", payload: { input: "what is 6 * 7?", queued: false } };
const started: Draft = { type: "turn.started", payload: { agent: "a", model: "demo:fast" } };
const requested = (step: string): Draft => ({ type: "model.requested", step_id: step, payload: { model: "m", phase: "executor" } });
const completedCall = (step: string): Draft => ({ type: "model.completed", step_id: step, payload: { finish_reason: "stop", phase: "executor" } });
const delta = (text: string): Draft => ({ type: "model.delta", payload: { text } });
const approval: Draft = {
  type: "action.required",
  action_id: "act_1",
  tool_call_id: "call_1",
  payload: { kind: "tool_approval", tool_name: "calculator", args: { expression: "6 * 7" }, injected_args: {}, expires_at: 0 },
};
const resolved: Draft = {
  type: "action.resolved",
  action_id: "act_1",
  tool_call_id: "call_1",
  payload: { decision: "approved", tool_name: "calculator", by: "k", reason: null },
};
const toolStarted: Draft = { type: "tool.started", tool_call_id: "call_1", payload: { name: "calculator", args: { expression: "6 * 7" }, injected_args: {} } };
const toolResult: Draft = { type: "tool.result", tool_call_id: "call_1", payload: { name: "calculator", output: "42", is_error: false, metadata: {} } };
const done: Draft = { type: "turn.completed", payload: { output: "The answer is 42.", stop_reason: "final_answer", usage } };

function fold(events: RuntimeEvent[], ref = FRESH): { fold: ResponsesFold; out: ResponsesEvent[] } {
  const f = new ResponsesFold(ref, responseId(ref), "a", "");
  return { fold: f, out: events.flatMap((e) => f.push(e)) };
}

describe("the Responses stream fold", () => {
  it("numbers its events from 0 without a gap and builds the object its last event carries", () => {
    const events = log([submitted, started, requested("s1"), delta("The answer"), delta(" is 42."), completedCall("s1"), done]);
    const { fold: f, out } = fold(events);
    expect(out.map((e) => e.sequence_number)).toEqual(out.map((_, i) => i));
    expect(out.map((e) => e.type)).toEqual([
      "response.created",
      "response.in_progress",
      "response.output_item.added",
      "response.content_part.added",
      "response.output_text.delta",
      "response.output_text.delta",
      "response.output_text.done",
      "response.content_part.done",
      "response.output_item.done",
      "response.completed",
    ]);
    expect(f.response).toMatchObject({ status: "completed", usage: { input_tokens: 10, input_tokens_details: { cached_tokens: 4 }, total_tokens: 15 } });
    expect(out.at(-1)!.response).toEqual(f.response);
    expect(f.response.output).toEqual([
      {
        type: "message",
        id: expect.any(String),
        status: "completed",
        role: "assistant",
        content: [{ type: "output_text", text: "The answer is 42.", annotations: [] }],
      },
    ]);
    // The same log folds to the same events.
    expect(fold(events).out).toEqual(out);
  });

  it("sends an answer that was not streamed as one message, and a queued turn as queued first", () => {
    const queued = { ...submitted, payload: { input: "x", queued: true } };
    const { out } = fold(log([queued, started, done]));
    expect(out.slice(0, 3).map((e) => e.type)).toEqual(["response.created", "response.queued", "response.in_progress"]);
    expect(out.find((e) => e.type === "response.output_text.done")).toMatchObject({ text: "The answer is 42." });
  });

  it("ends at a pause the same way live (pause()) as when the decision is in the log", () => {
    const head = log([submitted, started, requested("s1"), completedCall("s1"), approval]);
    const live = fold(head);
    expect(live.fold.pausedOn()).toEqual(["act_1"]);
    const liveOut = [...live.out, ...live.fold.pause()];
    const later = fold([...head, ...log([resolved, toolStarted, toolResult, done], head.length)]);
    expect(later.out).toEqual(liveOut);
    expect(later.fold.response).toMatchObject({ status: "incomplete", incomplete_details: { reason: "approval_required" } });
    expect(later.fold.response.output).toEqual([
      { type: "mcp_approval_request", id: "act_1", server_label: "agent-runtime", name: "calculator", arguments: JSON.stringify({ expression: "6 * 7" }) },
    ]);
  });

  it("pauses on a question a running call asks (a remote agent's input-required): the call waits with it", () => {
    const remote: Draft = { type: "tool.started", tool_call_id: "call_1", payload: { name: "helper", args: { message: "paint it" }, injected_args: {} } };
    const asked: Draft = {
      type: "action.required",
      action_id: "act_1",
      tool_call_id: "call_1",
      payload: { kind: "user_input", tool_name: "helper", args: { message: "paint it" }, injected_args: {}, expires_at: 0, question: "Which colour?" },
    };
    const { fold: f } = fold(log([submitted, started, requested("s1"), completedCall("s1"), remote, asked]));
    expect(f.pausedOn()).toEqual(["act_1"]);
    // Another call still running keeps the turn busy.
    const other = { ...remote, tool_call_id: "call_2" };
    expect(fold(log([submitted, started, requested("s1"), completedCall("s1"), remote, other, asked])).fold.pausedOn()).toBeNull();
  });

  it("keeps a pause open while more requests join it", () => {
    const second = { ...approval, action_id: "act_2", tool_call_id: "call_2" };
    const events = log([submitted, started, requested("s1"), completedCall("s1"), approval, second, { ...resolved }]);
    const { fold: f } = fold(events);
    expect(f.response.output.map((i) => i.id)).toEqual(["act_1", "act_2"]);
  });

  it("continues a paused turn from the first decision after `after`, with the approved call and its result", () => {
    const head = log([submitted, started, requested("s1"), completedCall("s1"), approval, { type: "action.reminder", action_id: "act_1", payload: {} }]);
    const rest = log([resolved, toolStarted, toolResult, requested("s2"), delta("The answer is 42."), completedCall("s2"), done], head.length);
    const ref = { ...FRESH, after: head.length - 1 };
    const { fold: f, out } = fold([...head, ...rest], ref);
    expect(out[0]).toMatchObject({ type: "response.created", sequence_number: 0 });
    expect(f.response.output.map((i) => i.type)).toEqual(["function_call", "function_call_output", "message"]);
    expect(f.response.status).toBe("completed");
    expect(inputItems([...head, ...rest], ref, "https://runtime.test")).toEqual([
      { type: "mcp_approval_response", id: expect.any(String), approval_request_id: "act_1", approve: true, reason: null },
    ]);
    expect(inputItems([...head, ...rest], FRESH, "https://runtime.test")).toMatchObject([
      { type: "message", role: "user", content: [{ type: "input_text", text: "what is 6 * 7?" }] },
    ]);
  });

  it("ends a response that waits as cancelled when its turn is cancelled before anyone answers; a reminder changes nothing", () => {
    const head = log([submitted, started, requested("s1"), completedCall("s1"), approval]);
    const live = fold(head);
    const liveOut = [...live.out, ...live.fold.pause()];
    const reminded = fold([...head, ...log([{ type: "action.reminder", action_id: "act_1", payload: {} }, resolved, toolStarted], head.length)]);
    expect(reminded.out).toEqual(liveOut);
    const closing: Draft[] = [
      { ...resolved, payload: { decision: "rejected", tool_name: "calculator", by: "runtime", reason: "the turn was cancelled" } },
      { type: "turn.cancelled", payload: { reason: "cancelled by the client" } },
    ];
    const cancelled = fold([...head, ...log(closing, head.length)]);
    expect(cancelled.out.slice(0, -1)).toEqual(liveOut.slice(0, -1));
    expect(cancelled.out.at(-1)).toMatchObject({ type: "response.failed", sequence_number: liveOut.length - 1, response: { status: "cancelled" } });
    expect(cancelled.fold.response.output.map((i) => i.type)).toEqual(["mcp_approval_request"]);
  });

  it("echoes the request recorded with the event that begins it: previous_response_id, background, metadata, max_output_tokens", () => {
    const request = { previous_response_id: "resp_x", background: true, metadata: { k: "v" }, max_output_tokens: 64 };
    const fresh = fold(log([{ ...submitted, payload: { ...submitted.payload, responses_request: request } }, started]));
    expect(fresh.fold.response).toMatchObject({ previous_response_id: "resp_x", background: true, metadata: { k: "v" }, max_output_tokens: 64 });
    const head = log([submitted, started, requested("s1"), completedCall("s1"), approval]);
    const decision = { ...resolved, payload: { ...resolved.payload, responses_request: { previous_response_id: responseId(FRESH), background: false } } };
    const next = fold([...head, ...log([decision, toolStarted], head.length)], { ...FRESH, after: head.length });
    expect(next.fold.response).toMatchObject({ previous_response_id: responseId(FRESH), background: false, metadata: {}, max_output_tokens: null });
    expect(fold(head).fold.response).toMatchObject({ previous_response_id: null, background: false, metadata: {} });
  });

  it("ends a failed or cancelled turn's response with its status", () => {
    const failed = fold(log([submitted, started, { type: "turn.failed", payload: { error: { code: "model_error", message: "down" } } }]));
    expect(failed.out.at(-1)).toMatchObject({ type: "response.failed", response: { status: "failed", error: { code: "model_error", message: "down" } } });
    const cancelled = fold(log([submitted, { type: "turn.cancelled", payload: { reason: "cancelled by the client" } }]));
    // Responses streams have no event of a cancellation: the end is response.failed, its response cancelled.
    expect(cancelled.out.at(-1)).toMatchObject({ type: "response.failed", response: { status: "cancelled", error: null } });
  });
});

describe("response ids", () => {
  it("name their session, turn and start, and nothing else parses", () => {
    const ref = { ...FRESH, after: 41 };
    expect(parseResponseId(responseId(FRESH))).toEqual(FRESH);
    expect(parseResponseId(responseId(ref))).toEqual(ref);
    for (const bad of ["resp_", "resp_x", `resp_${"a".repeat(48)}_`, `msg_${"a".repeat(48)}`, `resp_${"A".repeat(48)}`])
      expect(parseResponseId(bad)).toBeNull();
  });
});
