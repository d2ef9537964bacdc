// Regenerating the session's last turn (POST /v1/sessions/:sid/turns/:turn_id/regenerate): it is rolled back,
// ended or running, and a new turn with its input and files answers again; the log, the conversation the next
// model call receives and the read model checked. Semantics: docs/guides/busy-sessions.md. useChat: chat.test.ts.
import { describe, expect, it } from "vitest";
import { api, createSession, events, expectGapless, submitTurn, waitForEvent, waitForTurnEnd } from "../../support/api";
import { requests, type Step, script, uniqueId } from "../../support/fake-model";
import { tinyPng, toBase64 } from "../../support/files";

async function scriptedSession(steps: Step[], extra: Record<string, unknown> = {}): Promise<{ sid: string; scriptId: string }> {
  const scriptId = uniqueId("regen");
  await script(scriptId, steps);
  const sid = await createSession({ name: "regen", model: `openai-compatible:${scriptId}`, ...extra });
  return { sid, scriptId };
}

const regenerate = (sid: string, turnId: string, body?: Record<string, unknown>) => api("POST", `/v1/sessions/${sid}/turns/${turnId}/regenerate`, body);

describe("regenerate the last turn", () => {
  it("an ended turn: turn.rolled_back, then a new turn of the same input and files; the next model call and the turns no longer have the old answer", async () => {
    const { sid, scriptId } = await scriptedSession(
      [
        { text: "Hello back." },
        { tool_calls: [{ id: "call_g", name: "calculator", arguments: { expression: "6 * 7" } }] },
        { text: "Old answer: 42." },
        { text: "New answer: forty-two." },
      ],
      { tools: ["calculator"] },
    );
    const hello = await submitTurn(sid, "hello");
    await waitForTurnEnd(sid, hello.turn_id);
    const png = await tinyPng(2);
    const input = [
      { type: "text", text: "what is 6 * 7?" },
      { type: "file", data: toBase64(png), media_type: "image/png", filename: "dot.png" },
    ];
    const old = (await api("POST", `/v1/sessions/${sid}/turns`, { input })).body.turn_id;
    await waitForTurnEnd(sid, old);

    const res = await regenerate(sid, old, { idempotency_key: "regen-1" });
    expect(res.status).toBe(202);
    expect(res.body).toEqual({ turn_id: expect.stringMatching(/^trn_/), status: "accepted", rolled_back_turn_id: old });
    const fresh = res.body.turn_id;
    const log = await waitForTurnEnd(sid, fresh);
    expectGapless(log);
    // A retry with the key answers the same turn and rolls back nothing more.
    const retry = await regenerate(sid, old, { idempotency_key: "regen-1" });
    expect(retry.body).toEqual({ turn_id: fresh, status: "accepted", rolled_back_turn_id: old, duplicate: true });

    const at = log.findIndex((e) => e.type === "turn.completed" && e.turn_id === old);
    const oldSubmitted = log.find((e) => e.type === "turn.submitted" && e.turn_id === old);
    expect(log.slice(at + 1, at + 4).map((e) => [e.type, e.turn_id ?? e.payload.turn_id])).toEqual([
      ["turn.submitted", fresh],
      ["turn.rolled_back", old],
      ["turn.started", fresh],
    ]);
    // Submitted by whoever asked for it (the key quotas count it against), not by the original turn's caller.
    expect(log[at + 1].payload).toEqual({
      input: "what is 6 * 7?",
      files: oldSubmitted.payload.files,
      queued: false,
      idempotency_key: "regen-1",
      by: expect.stringMatching(/^key_/),
    });
    expect(log[at + 2].payload).toEqual({ turn_id: old, by_turn_id: fresh, side_effects: [{ tool_call_id: "call_g", name: "calculator", completed: true }] });
    expect(log.filter((e) => e.type === "turn.rolled_back")).toHaveLength(1);

    const calls = await requests(scriptId);
    expect(calls).toHaveLength(4);
    expect(calls[3].messages).toEqual([{ role: "user", content: "hello" }, { role: "assistant", content: "Hello back." }, calls[1].messages.at(-1)]);
    expect(calls[3].messages.at(-1).content[1]).toEqual({ type: "image_url", image_url: { url: `data:image/png;base64,${toBase64(png)}` } });
    const snapshot = (await api("GET", `/v1/sessions/${sid}`)).body;
    expect(snapshot.turns.map((t: any) => [t.turn_id, t.status])).toEqual([
      [hello.turn_id, "completed"],
      [fresh, "completed"],
    ]);
    const ui = (await api("GET", `/v1/sessions/${sid}/messages`)).body;
    expect(ui.map((m: any) => [m.role, m.parts.find((p: any) => p.type === "text")?.text])).toEqual([
      ["user", "hello"],
      ["assistant", "Hello back."],
      ["user", "what is 6 * 7?"],
      ["assistant", "New answer: forty-two."],
    ]);
  });

  it("a running turn: it is cut (turn.cancelled rolled_back, turn.rolled_back) and the new turn never sees its partial answer", async () => {
    const { sid, scriptId } = await scriptedSession([{ hang: true, text: "Thinking about", chunk_size: 1000 }, { text: "Answer." }]);
    const { turn_id: running } = await submitTurn(sid, "one");
    await waitForEvent(sid, (e) => e.type === "model.delta" && e.turn_id === running);
    const res = await regenerate(sid, running);
    expect(res.status).toBe(202);
    expect(res.body).toEqual({ turn_id: expect.stringMatching(/^trn_/), status: "accepted", rolled_back_turn_id: running });
    const log = await waitForTurnEnd(sid, res.body.turn_id);
    expect(log.find((e) => e.type === "turn.cancelled" && e.turn_id === running).payload).toEqual({ reason: "rolled_back", by_turn_id: res.body.turn_id });
    expect(log.find((e) => e.type === "turn.rolled_back").payload).toMatchObject({ turn_id: running, by_turn_id: res.body.turn_id });
    expect((await requests(scriptId))[1].messages).toEqual([{ role: "user", content: "one" }]);
    const snapshot = (await api("GET", `/v1/sessions/${sid}`)).body;
    expect(snapshot.turns.map((t: any) => t.turn_id)).toEqual([res.body.turn_id]);
  });

  it("an optional body sent empty with content-type application/json is an empty object; a required one still is not", async () => {
    const { sid } = await scriptedSession([{ text: "Old." }, { text: "New." }]);
    const { turn_id } = await submitTurn(sid, "hi");
    await waitForTurnEnd(sid, turn_id);
    const res = await api("POST", `/v1/sessions/${sid}/turns/${turn_id}/regenerate`, "");
    expect(res.status).toBe(202);
    expect(res.body).toEqual({ turn_id: expect.stringMatching(/^trn_/), status: "accepted", rolled_back_turn_id: turn_id });
    expect((await waitForTurnEnd(sid, res.body.turn_id)).at(-1).payload.output).toBe("New.");
    // Another operation whose body is optional reads it the same way; malformed JSON is still 400.
    expect((await api("POST", `/v1/sessions/${sid}/interrupt`, "")).status).toBe(200);
    expect((await api("POST", `/v1/sessions/${sid}/interrupt`, "{")).body.error.code).toBe("malformed_body");
    const required = await api("POST", `/v1/sessions/${sid}/turns`, "");
    expect(required.status).toBe(400);
    expect(required.body.error.code).toBe("malformed_body");
  });

  it("409 naming the turn when it is not the last one, 404 for an unknown turn; nothing stored", async () => {
    const { sid } = await scriptedSession([{ text: "A." }, { text: "B." }]);
    const first = await submitTurn(sid, "a");
    await waitForTurnEnd(sid, first.turn_id);
    const second = await submitTurn(sid, "b");
    await waitForTurnEnd(sid, second.turn_id);
    const before = await events(sid);
    const res = await regenerate(sid, first.turn_id);
    expect(res.status).toBe(409);
    expect(res.body.error).toEqual({
      code: "conflict",
      message: `Turn '${first.turn_id}' is not the session's last turn (its last turn is '${second.turn_id}'); only the last turn can be regenerated`,
      details: { turn_id: first.turn_id, last_turn_id: second.turn_id },
    });
    const unknown = await regenerate(sid, "trn_nope");
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.message).toContain("trn_nope");
    const bad = await regenerate(sid, second.turn_id, { idempotency_key: "" });
    expect(bad.status).toBe(422);
    expect(await events(sid)).toEqual(before);
  });

  it("409 while turns are queued: the running turn is not the last, a queued turn has no answer yet", async () => {
    const { sid } = await scriptedSession([{ hang: true, text: "Thinking", chunk_size: 1000 }]);
    const { turn_id: running } = await submitTurn(sid, "one");
    await waitForEvent(sid, (e) => e.type === "model.delta" && e.turn_id === running);
    const queued = await submitTurn(sid, "two");
    expect(queued.status).toBe("queued");
    const before = await events(sid);
    const cut = await regenerate(sid, running);
    expect(cut.status).toBe(409);
    expect(cut.body.error.details).toEqual({ turn_id: running, last_turn_id: queued.turn_id });
    const waiting = await regenerate(sid, queued.turn_id);
    expect(waiting.status).toBe(409);
    expect(waiting.body.error.message).toBe(`Turn '${queued.turn_id}' is queued: it has no answer to regenerate yet`);
    expect(await events(sid)).toEqual(before);
    await api("POST", `/v1/sessions/${sid}/interrupt`);
  });
});
