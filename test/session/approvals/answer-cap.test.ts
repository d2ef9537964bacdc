// Free-text answers to a person's question are capped (MAX_ANSWER_CHARS) over HTTP, the WebSocket and the
// chat transport: a longer one is 422 naming the field, and the question still waits.
import { afterEach, describe, expect, it } from "vitest";
import { MAX_ANSWER_CHARS } from "../../../src/protocol/wire";
import { api, createSession, submitTurn, waitForEvent, waitForTurnEnd } from "../../support/api";
import { closeAllSockets, openWs } from "../../support/ws";

afterEach(closeAllSockets);

describe(`free-text answers (at most ${MAX_ANSWER_CHARS} characters)`, () => {
  async function question(name: string): Promise<{ sid: string; turnId: string; actionId: string }> {
    const sid = await createSession({ name, model: "demo:fast", tools: ["ask_user"] });
    const { turn_id } = await submitTurn(sid, "ask me: what is your story?");
    const { action_id } = await waitForEvent(sid, (e) => e.type === "action.required");
    return { sid, turnId: turn_id, actionId: action_id };
  }

  it("refuses a longer answer over HTTP with 422 naming response, recording nothing; one at the cap is the call's result", async () => {
    const { sid, turnId, actionId } = await question("long-answers");
    const reason = `must be at most ${MAX_ANSWER_CHARS} characters`;
    for (const response of ["x".repeat(1_000_000), "x".repeat(MAX_ANSWER_CHARS + 1)]) {
      const res = await api("POST", `/v1/sessions/${sid}/actions/${actionId}`, { response });
      expect(res.status).toBe(422);
      expect(res.body.error.details).toEqual([{ path: "response", reason }]);
    }
    const answer = "y".repeat(MAX_ANSWER_CHARS);
    expect((await api("POST", `/v1/sessions/${sid}/actions/${actionId}`, { response: answer })).status).toBe(200);
    const log = await waitForTurnEnd(sid, turnId);
    expect(log.filter((e) => e.type === "action.resolved").map((e) => e.payload.response)).toEqual([answer]);
  });

  it("names the field inside an object answer, and refuses the same over the WebSocket and the chat transport", async () => {
    const { sid, actionId } = await question("long-answers-ws");
    const long = "z".repeat(MAX_ANSWER_CHARS + 1);
    const inObject = await api("POST", `/v1/sessions/${sid}/actions/${actionId}`, { response: { story: long } });
    expect(inObject.body.error.details).toEqual([{ path: "response.story", reason: `must be at most ${MAX_ANSWER_CHARS} characters` }]);

    const ws = await openWs(sid);
    const reply = await ws.command({ type: "respond_action", action_id: actionId, response: long, request_id: "long" });
    expect(reply).toMatchObject({
      ok: false,
      error: { code: "validation_failed", message: expect.stringContaining(`response: must be at most ${MAX_ANSWER_CHARS}`) },
    });

    const chat = await api("POST", "/v1/chat", {
      id: sid,
      trigger: "submit-message",
      messages: [
        { id: "u1", role: "user", parts: [{ type: "text", text: "ask me: what is your story?" }] },
        {
          id: "a1",
          role: "assistant",
          parts: [{ type: "step-start" }, { type: "tool-ask_user", toolCallId: "call_x", state: "output-available", input: {}, output: long }],
        },
      ],
    });
    expect(chat.status).toBe(422);
    expect(chat.body.error.details).toEqual([{ path: "messages.1.parts.1.output", reason: `must be at most ${MAX_ANSWER_CHARS} characters` }]);
    // Still pending: nothing was recorded.
    expect((await api("GET", `/v1/sessions/${sid}/thread`)).body.pending_actions).toHaveLength(1);
  });
});
