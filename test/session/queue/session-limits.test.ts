// Limits of a session under hostile or heavy use, through the public routes: large live messages (sent while a
// 8-second tool call runs, so a loaded machine still delivers all 15 to it), the
// queue cap counting live messages, and a history that outgrows the token budget.
import { describe, expect, it } from "vitest";
import { api, createSession, events, submitTurn, waitForEvent, waitForTurnEnd } from "../../support/api";
import { requests, type Step, script, toolURL, uniqueId } from "../../support/fake-model";

async function scripted(steps: Step[]): Promise<{ model: string; scriptId: string }> {
  const scriptId = uniqueId("limits");
  await script(scriptId, steps);
  return { model: `openai-compatible:${scriptId}`, scriptId };
}

const ofType = (log: any[], type: string) => log.filter((e) => e.type === type);

describe("session limits", () => {
  it("takes 15 live messages of 200,000 characters during a tool call: each stored on its own, none lost, nothing left open", async () => {
    const { model } = await scripted([{ tool_calls: [{ name: "slow", arguments: {} }] }, { text: "Read them all." }]);
    const sid = await createSession({ name: "big-inbox", model, http_tools: [{ name: "slow", url: toolURL("slow?ms=8000"), timeout_ms: 15_000 }] });
    const { turn_id } = await submitTurn(sid, "run the slow tool");
    await waitForEvent(sid, (e) => e.type === "tool.started" && e.turn_id === turn_id);
    const answers = [];
    for (let i = 0; i < 15; i++) {
      answers.push(await api("POST", `/v1/sessions/${sid}/messages`, { content: `${String(i).padStart(2, "0")}${"m".repeat(199_998)}` }));
    }
    for (const res of answers) expect(res.status, JSON.stringify(res.body).slice(0, 300)).toBe(202);
    expect(answers.every((r) => r.body.delivery === "injected" && r.body.turn_id === turn_id)).toBe(true);

    const log = await waitForTurnEnd(sid, turn_id, 30_000);
    // The history budget (128,000 tokens) cannot hold 3,000,000 characters: the turn fails cleanly, with every
    // message taken in order, the tool call closed, and no message turned into a queued turn.
    expect(log.at(-1)).toMatchObject({ type: "turn.failed", payload: { error: { code: "budget_exceeded" } } });
    expect(ofType(log, "message.injected").map((e) => e.payload.message_id)).toEqual(answers.map((r) => r.body.message_id));
    expect(ofType(log, "tool.result")).toHaveLength(1);
    expect(ofType(log, "turn.submitted")).toHaveLength(1);
    expect(ofType(log, "runtime.error")).toEqual([]);

    // The session stays usable: the next turn drops the oversized earlier turn from its prompt.
    await script(model.slice("openai-compatible:".length), [{ text: "fresh start" }]);
    const next = await submitTurn(sid, "still there?");
    const after = await waitForTurnEnd(sid, next.turn_id, 10_000);
    expect(after.at(-1)).toMatchObject({ type: "turn.completed", payload: { output: "fresh start" } });
    expect(ofType(after, "context.compaction.completed")[0]?.payload).toMatchObject({ method: "trim" });
  }, 60_000);

  it("counts live messages waiting in the inbox against the queue cap: no message outlives its turn past the cap", async () => {
    const { model } = await scripted([{ tool_calls: [{ name: "slow", arguments: {} }] }, { text: "ok" }]);
    const sid = await createSession({ name: "capped", model, http_tools: [{ name: "slow", url: toolURL("slow?ms=8000"), timeout_ms: 10_000 }] });
    const { turn_id } = await submitTurn(sid, "run the slow tool");
    await waitForEvent(sid, (e) => e.type === "tool.started" && e.turn_id === turn_id);
    // The tool holds the turn for 8 s, so that the 25 requests below all arrive while it runs, however busy the machine.
    for (let i = 0; i < 15; i++) expect((await api("POST", `/v1/sessions/${sid}/turns`, { input: `queued ${i}` })).status).toBe(202);
    const injected = [];
    for (let i = 0; i < 10; i++) injected.push(await api("POST", `/v1/sessions/${sid}/messages`, { content: `note ${i}` }));
    // 15 queued turns + 5 waiting messages fill the 20 places; the rest are refused, as a 21st turn would be.
    expect(injected.map((r) => r.status)).toEqual([202, 202, 202, 202, 202, 429, 429, 429, 429, 429]);
    expect(injected[5]!.body.error.code).toBe("rate_limited");
    expect((await api("POST", `/v1/sessions/${sid}/turns`, { input: "one more" })).status).toBe(429);

    // Interrupted before it takes them, the five messages become queued turns: 20 in all, never more.
    await api("POST", `/v1/sessions/${sid}/interrupt`, {});
    const thread = (await api("GET", `/v1/sessions/${sid}/thread`)).body;
    expect(thread.queued_turns.length + (thread.active_turn_id ? 1 : 0)).toBeLessThanOrEqual(20);
    const log = await events(sid);
    const fromMessages = ofType(log, "turn.submitted").filter((e) => e.payload.message_id);
    expect(fromMessages.map((e) => e.payload.input)).toEqual(["note 0", "note 1", "note 2", "note 3", "note 4"]);
  }, 20_000);

  it("trims the oldest turns when the history outgrows max_history_tokens, and refuses an input that alone is over it", async () => {
    const { model, scriptId } = await scripted([{ text: "one" }, { text: "two" }, { text: "three" }]);
    const sid = await createSession({ name: "trimmed", model, budget: { max_history_tokens: 2_000 } });
    for (const input of ["a".repeat(5_000), "b".repeat(5_000), "c".repeat(5_000)]) {
      const { turn_id } = await submitTurn(sid, input);
      const log = await waitForTurnEnd(sid, turn_id);
      expect(log.at(-1).type).toBe("turn.completed");
    }
    const log = await events(sid);
    const trims = ofType(log, "context.compaction.completed");
    expect(trims).toHaveLength(2);
    expect(trims.every((e) => e.payload.after_tokens <= 2_000 && e.payload.before_tokens > 2_000)).toBe(true);
    // The third call saw only its own turn: the two earlier ones were dropped whole.
    const third = (await requests(scriptId))[2];
    expect(third.messages.map((m: any) => m.role)).toEqual(["user"]);

    const tooBig = await api("POST", `/v1/sessions/${sid}/turns`, { input: "d".repeat(9_000) });
    expect(tooBig.status).toBe(422);
    expect(tooBig.body.error.details[0]).toMatchObject({ path: "input", reason: expect.stringContaining("max_history_tokens (2000)") });
    expect((await events(sid)).length).toBe(log.length);
  });
});
