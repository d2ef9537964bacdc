// WebSocket command frames are held to the nesting bound HTTP bodies have, read from the frame's text before
// it is parsed: 64, 5,000 and 50,000 levels alike are an invalid frame, and the socket goes on.
import { afterEach, describe, expect, it } from "vitest";
import { MAX_JSON_DEPTH } from "../../../src/protocol/json-nesting";
import { api, submitTurn, waitForEvent } from "../../support/api";
import { asking } from "../../support/hitl";
import { closeAllSockets, openWs, until } from "../../support/ws";

afterEach(closeAllSockets);

describe(`WebSocket frames nested deeper than ${MAX_JSON_DEPTH} levels`, () => {
  /** An answer `levels` objects deep (`{"a":{"a":...1}}`), in a frame whose own object is one level more. */
  const deepAnswer = (levels: number) => `${'{"a":'.repeat(levels)}1${"}".repeat(levels)}`;
  const deepFrame = (actionId: string, levels: number) =>
    `{"type":"respond_action","action_id":"${actionId}","request_id":"deep","response":${deepAnswer(levels)}}`;

  it("are refused as invalid frames (validation_failed naming the field), whatever the depth, and the socket stays usable", async () => {
    // A question whose answer may be any object: without the bound, 5,000 levels were recorded as the answer and
    // 50,000 overflowed the stack (internal_error).
    const { sid } = await asking([
      { tool_calls: [{ name: "ask_user", arguments: { question: "Anything?", response_schema: { type: "object" } } }] },
      { text: "thanks" },
    ]);
    const ws = await openWs(sid);
    const { turn_id } = await submitTurn(sid, "ask me");
    const { action_id } = await waitForEvent(sid, (e) => e.type === "action.required");
    const refusal = { code: "validation_failed", message: `Validation failed: response: nests deeper than ${MAX_JSON_DEPTH} levels` };
    for (const [i, levels] of [MAX_JSON_DEPTH, 5_000, 50_000].entries()) {
      ws.send(deepFrame(action_id, levels));
      const reply = await until(() => ws.replies[i], `the reply to a frame ${levels} levels deep`);
      expect(reply).toMatchObject({ request_id: null, ok: false, error: refusal });
    }
    // Binary frames too.
    ws.socket.send(new TextEncoder().encode(deepFrame(action_id, 50_000)));
    expect(await until(() => ws.replies[3], "the reply to a binary frame")).toMatchObject({ ok: false, error: refusal });
    expect((await api("GET", `/v1/sessions/${sid}/thread`)).body.pending_actions).toEqual([expect.objectContaining({ action_id })]);
    // At the bound (the frame's object, then 63 levels of answer) is an answer like any other.
    const within = `{"type":"respond_action","action_id":"${action_id}","request_id":"within","response":${deepAnswer(MAX_JSON_DEPTH - 1)}}`;
    ws.send(within);
    expect(await ws.waitForReply("within")).toMatchObject({ ok: true, result: { decision: "answered" } });
    await ws.waitForTurnEnd(turn_id);
    const turn = await ws.command({ type: "submit_turn", input: "hello", request_id: "after" });
    expect(turn).toMatchObject({ ok: true, result: { status: "accepted" } });
    expect(ws.closed).toBeNull();
  });
});
