// Pages of the conversation (GET /v1/sessions/:sid/messages?limit=&before=, docs/guides/use-chat.md): each page is
// exactly the slice of the whole conversation it names, over a session with a compaction, tool calls, a regenerated
// (rolled-back) answer, more turns than a small page's first window, and an approval pending at the end; and after an
// interrupt, in the order the turns ran (docs/guides/busy-sessions.md).
import { lastAssistantMessageIsCompleteWithApprovalResponses, type UIMessage } from "ai";
import { describe, expect, it } from "vitest";
import { api, createSession, events, submitTurn, waitForEvent, waitForTurnEnd } from "../../support/api";
import { HeadlessChat, until } from "../../support/chat-client";
import { scriptedAgent, serverMessages, textOf } from "../../support/chat-fixtures";
import type { Step } from "../../support/fake-model";

const SHORT_TURNS = 3;

const page = async (sid: string, query: string) => api("GET", `/v1/sessions/${sid}/messages?${query}`);

/** Every page of `limit` from the newest back, each checked against the slice of `whole` it names. */
async function walkBack(sid: string, whole: UIMessage[], limit: number): Promise<void> {
  let end = whole.length;
  let query = `limit=${limit}`;
  for (;;) {
    const res = await page(sid, query);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body, `limit ${limit}, before ${query}`).toEqual(whole.slice(Math.max(0, end - limit), end));
    if (end <= limit) return;
    end -= limit;
    query = `limit=${limit}&before=${encodeURIComponent(whole[end]!.id)}`;
  }
}

describe("pages of the conversation", () => {
  it("every page equals the slice of the whole conversation it names: compaction, tools, a regenerated answer, a pending approval", async () => {
    const long = (word: string, n: number) => `${word} ${"x".repeat(n)}`;
    const steps: Step[] = [
      { text: "ok1" },
      { text: "ok2" },
      { text: "SUMMARY-OF-TURN-ONE" },
      { text: "ok3" },
      { tool_calls: [{ id: "call_a", name: "calculator", arguments: { expression: "6 * 7" } }] },
      { text: "It is 42." },
      { text: "hi one" },
      { text: "hi two" },
      ...Array.from({ length: SHORT_TURNS }, (_, i) => ({ text: `answer ${i}` })),
      { tool_calls: [{ id: "call_b", name: "calculator", arguments: { expression: "2 ^ 10" } }] },
    ];
    const agent = await scriptedAgent(steps, {
      tools: ["calculator"],
      hitl_tools: ["calculator"],
      budget_awareness: "limit:50",
      context_window: 2048,
    });
    const sid = await createSession(agent);
    const chat = new HeadlessChat({ id: sid, sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses });
    for (const input of [long("first", 1600), long("second", 1600), long("third", 1000)]) await chat.sendMessage({ text: input });
    expect((await events(sid)).filter((e) => e.type === "context.compaction.completed")).toHaveLength(1);

    await chat.sendMessage({ text: "what is 6 * 7?" });
    const asked = chat.lastMessage!.parts.find((p) => p.type === "dynamic-tool") as { approval: { id: string } };
    await chat.addToolApprovalResponse({ id: asked.approval.id, approved: true });
    await until(() => chat.status === "ready" && textOf(chat.lastMessage) === "It is 42.", "the approved call's answer");

    await chat.sendMessage({ text: "say hi" });
    await chat.regenerate();
    expect(textOf(chat.lastMessage)).toBe("hi two");
    for (let i = 0; i < SHORT_TURNS; i++) await chat.sendMessage({ text: `short ${i}` });
    await chat.sendMessage({ text: "two to the tenth" });

    const log = await events(sid);
    expect(log.filter((e) => e.type === "turn.rolled_back")).toHaveLength(1);
    const whole = (await serverMessages(sid)) as UIMessage[];
    expect(whole.map((m) => textOf(m))).not.toContain("hi one");
    expect(whole.at(-1)!.parts.find((p) => p.type === "dynamic-tool")).toMatchObject({ state: "approval-requested" });
    expect(new Set(whole.map((m) => m.id)).size).toBe(whole.length);

    // Without a query the answer is the whole conversation, as before.
    expect((await api("GET", `/v1/sessions/${sid}/messages`)).body).toEqual(whole);
    for (const limit of [1, 2, 3, 7, 500]) await walkBack(sid, whole, limit);
    // A page of one before each message.
    for (const [i, m] of whole.entries()) {
      expect((await page(sid, `limit=1&before=${encodeURIComponent(m.id)}`)).body).toEqual(whole.slice(Math.max(0, i - 1), i));
    }
  }, 120_000);

  it("after an interrupt and a turn removed from the queue: the order the turns ran, whole, in every page and in the snapshot", async () => {
    const sid = await createSession(
      await scriptedAgent([
        { text: "ok0" },
        { hang: true, text: "A partial", chunk_size: 1000 },
        { text: "C answer" },
        { text: "B answer" },
        { text: "E answer" },
      ]),
    );
    const t0 = await submitTurn(sid, "zero?");
    await waitForTurnEnd(sid, t0.turn_id);
    const a = await submitTurn(sid, "A?");
    await waitForEvent(sid, (e) => e.type === "model.delta" && e.turn_id === a.turn_id);
    const [b, d, e] = [await submitTurn(sid, "B?"), await submitTurn(sid, "D?"), await submitTurn(sid, "E?")];
    expect((await api("DELETE", `/v1/sessions/${sid}/queue/${d.turn_id}`)).status).toBe(200);
    const c = (await api("POST", `/v1/sessions/${sid}/turns`, { input: "C?", on_busy: "interrupt" })).body;
    await waitForTurnEnd(sid, e.turn_id);
    const log = await events(sid);
    expect(log.filter((x) => x.type === "turn.started").map((x) => x.turn_id)).toEqual([t0.turn_id, a.turn_id, c.turn_id, b.turn_id, e.turn_id]);

    // The model saw A (cut), then C, then B: so do the views. D, removed from the queue while A ran, stays where it left.
    const whole = (await serverMessages(sid)) as UIMessage[];
    expect(whole.map((m) => [m.role, textOf(m)])).toEqual([
      ["user", "zero?"],
      ["assistant", "ok0"],
      ["user", "A?"],
      ["assistant", "A partial"],
      ["user", "D?"],
      ["user", "C?"],
      ["assistant", "C answer"],
      ["user", "B?"],
      ["assistant", "B answer"],
      ["user", "E?"],
      ["assistant", "E answer"],
    ]);
    const order = [t0, a, d, c, b, e].map((t) => t.turn_id);
    expect((await api("GET", `/v1/sessions/${sid}`)).body.turns.map((t: { turn_id: string }) => t.turn_id)).toEqual(order);
    for (const limit of [1, 2, 3, 500]) await walkBack(sid, whole, limit);
    for (const [i, m] of whole.entries()) {
      expect((await page(sid, `limit=2&before=${encodeURIComponent(m.id)}`)).body).toEqual(whole.slice(Math.max(0, i - 2), i));
    }
  });

  it("422 naming the field for a bad limit, an unknown before, or before without limit", async () => {
    const sid = await createSession(await scriptedAgent([{ text: "one" }]));
    const chat = new HeadlessChat({ id: sid });
    await chat.sendMessage({ text: "hello" });
    const logBefore = await events(sid);
    for (const [query, field] of [
      ["limit=0", "limit"],
      ["limit=501", "limit"],
      ["limit=two", "limit"],
      ["limit=1.5", "limit"],
      ["limit=5&before=msg_nope", "before"],
      [`before=${chat.lastMessage!.id}`, "before"],
    ] as const) {
      const res = await page(sid, query);
      expect(res.status, query).toBe(422);
      expect(res.body.error.code).toBe("validation_failed");
      expect(JSON.stringify(res.body.error.details), query).toContain(`"${field}"`);
    }
    expect(await events(sid)).toEqual(logBefore);
  });
});
