// Turns end to end through the public routes: the loop over the openai-compatible provider (a local fake
// Chat Completions server) and the demo model, the queue, idempotency, interrupt, and restarts.
import { abortAllDurableObjects, env, evictDurableObject, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { SESSION_MIGRATIONS } from "../../../src/objects/migrate";
import { foldAll } from "../../../src/views/read-model";
import { api, createSession, events, expectGapless, submitTurn, waitForCount, waitForEvent, waitForTurnEnd } from "../../support/api";
import { baseURL, requests, type Step, script, toolRequests, toolURL, uniqueId } from "../../support/fake-model";

const stub = (sid: string) => env.SESSIONS.get(env.SESSIONS.idFromName(sid));
const types = (log: any[], turnId?: string) => log.filter((e) => !turnId || e.turn_id === turnId).map((e) => e.type);

/** An agent on the fake server with the given script; returns its session id. */
async function scriptedSession(steps: Step[], extra: Record<string, unknown> = {}): Promise<{ sid: string; scriptId: string }> {
  const scriptId = uniqueId("turns");
  await script(scriptId, steps);
  const sid = await createSession({ name: "scripted", model: `openai-compatible:${scriptId}`, ...extra });
  return { sid, scriptId };
}

describe("the loop through openai-compatible", () => {
  it("streams text, runs parallel tool calls, feeds results back, and completes with usage", async () => {
    const { sid, scriptId } = await scriptedSession(
      [
        {
          text: "Let me check.",
          tool_calls: [
            { name: "calculator", arguments: { expression: "6 * 7" } },
            { name: "clock", arguments: {} },
          ],
          usage: { prompt_tokens: 30, completion_tokens: 8 },
        },
        { text: "It is 42.", usage: { prompt_tokens: 50, completion_tokens: 4 } },
      ],
      { tools: ["calculator", "clock"], instructions: "You are terse." },
    );
    const { turn_id, status } = await submitTurn(sid, "What is 6 * 7?");
    expect(status).toBe("accepted");
    const log = await waitForTurnEnd(sid, turn_id);
    expectGapless(log);
    const turnTypes = types(log, turn_id).filter((t) => t !== "model.delta");
    expect(turnTypes.slice(0, 6)).toEqual(["turn.submitted", "turn.started", "tool.catalog.resolved", "model.requested", "model.completed", "cost.recorded"]);
    expect(turnTypes.filter((t) => t.startsWith("tool.") && t !== "tool.catalog.resolved").sort()).toEqual([
      "tool.result",
      "tool.result",
      "tool.started",
      "tool.started",
    ]);
    expect(turnTypes.slice(-4)).toEqual(["model.requested", "model.completed", "cost.recorded", "turn.completed"]);
    const deltas = log.filter((e) => e.type === "model.delta").map((e) => e.payload.text);
    expect(deltas.join("")).toBe("Let me check.It is 42.");
    expect(deltas.length).toBeGreaterThan(2);

    const calc = log.find((e) => e.type === "tool.result" && e.payload.name === "calculator");
    expect(calc.payload).toMatchObject({ output: "42", is_error: false, metadata: { status: "success", approval_status: "not_required" } });
    const started = log.find((e) => e.type === "tool.started" && e.payload.name === "calculator");
    expect(started.tool_call_id).toBe(calc.tool_call_id);
    expect(started.payload).toEqual({ name: "calculator", args: { expression: "6 * 7" }, injected_args: {} });

    const done = log.at(-1);
    expect(done.payload).toEqual({
      output: "It is 42.",
      stop_reason: "final_answer",
      usage: { input_tokens: 80, output_tokens: 12, total_tokens: 92 },
      cost_usd: null, // no price is known for the fake model
    });

    // What the model received: instructions as the system message, then the tool results of step 1.
    const [first, second] = await requests(scriptId);
    expect(first.messages[0]).toEqual({ role: "system", content: "You are terse." });
    expect(first.tools.map((t: any) => t.function.name)).toEqual(["calculator", "clock"]);
    const toolMsgs = second.messages.filter((m: any) => m.role === "tool");
    expect(toolMsgs).toHaveLength(2);
    expect(toolMsgs[0].content).toBe("42");
  });

  it("carries the conversation into the next turn", async () => {
    const { sid, scriptId } = await scriptedSession([{ text: "Hi Ada." }, { text: "Your name is Ada." }]);
    const t1 = await submitTurn(sid, "My name is Ada.");
    await waitForTurnEnd(sid, t1.turn_id);
    const t2 = await submitTurn(sid, "What is my name?");
    const log = await waitForTurnEnd(sid, t2.turn_id);
    expectGapless(log);
    const second = (await requests(scriptId))[1];
    expect(second.messages.map((m: any) => [m.role, m.content])).toEqual([
      ["user", "My name is Ada."],
      ["assistant", "Hi Ada."],
      ["user", "What is my name?"],
    ]);
  });

  it("feeds tool errors back as error results and keeps going", async () => {
    const { sid, scriptId } = await scriptedSession(
      [
        {
          tool_calls: [
            { name: "calculator", arguments: { expression: "1 / 0" } },
            { name: "teleport", arguments: {} },
          ],
        },
        { text: "Both failed." },
      ],
      { tools: ["calculator"] },
    );
    const { turn_id } = await submitTurn(sid, "go");
    const log = await waitForTurnEnd(sid, turn_id);
    const results = log.filter((e) => e.type === "tool.result").map((e) => [e.payload.name, e.payload.is_error, e.payload.metadata.status]);
    expect(results).toEqual(
      expect.arrayContaining([
        ["calculator", true, "error"],
        ["teleport", true, "error"],
      ]),
    );
    expect(log.find((e) => e.type === "tool.result" && e.payload.name === "calculator").payload.output).toMatch(/Division by zero/);
    expect(log.at(-1).type).toBe("turn.completed");
    const toolMsgs = (await requests(scriptId))[1].messages.filter((m: any) => m.role === "tool");
    expect(toolMsgs).toHaveLength(2);
  });

  it("stops at max_steps and leaves a valid history for the next turn", async () => {
    const call = { tool_calls: [{ name: "clock", arguments: {} }] };
    const { sid, scriptId } = await scriptedSession([call, call, { text: "next turn" }], { tools: ["clock"], max_steps: 2 });
    const t1 = await submitTurn(sid, "loop forever");
    const log = await waitForTurnEnd(sid, t1.turn_id);
    expect(log.filter((e) => e.type === "model.requested")).toHaveLength(2);
    expect(log.filter((e) => e.type === "tool.started")).toHaveLength(1);
    expect(log.at(-1).payload.stop_reason).toBe("max_steps");
    const t2 = await submitTurn(sid, "again");
    await waitForTurnEnd(sid, t2.turn_id);
    const third = (await requests(scriptId))[2];
    // Every tool call in the history is answered, including the one max_steps left unrun.
    const callIds = third.messages.flatMap((m: any) => (m.tool_calls ?? []).map((c: any) => c.id));
    const answered = third.messages.filter((m: any) => m.role === "tool").map((m: any) => m.tool_call_id);
    expect(answered).toEqual(callIds);
    expect(third.messages.filter((m: any) => m.role === "tool").at(-1).content).toMatch(/not executed/);
  });

  it("retries a model call the provider answers with a retryable error (503), within the same model.requested", async () => {
    const { sid, scriptId } = await scriptedSession([{ error: { status: 503, message: "overloaded" } }, { text: "recovered" }]);
    const { turn_id } = await submitTurn(sid, "hi");
    const log = await waitForTurnEnd(sid, turn_id);
    const ofTurn = types(log, turn_id).filter((t) => t !== "model.delta");
    expect(ofTurn).toEqual([
      "turn.submitted",
      "turn.started",
      "tool.catalog.resolved",
      "model.requested",
      "model.completed",
      "cost.recorded",
      "turn.completed",
    ]);
    expect(log.at(-1).payload.output).toBe("recovered");
    expect(await requests(scriptId)).toHaveLength(2);
  });

  it("ends the turn with turn.failed when the provider errors, closing the model call", async () => {
    const { sid } = await scriptedSession([{ error: { status: 400, message: "context too long" } }]);
    const { turn_id } = await submitTurn(sid, "hi");
    const log = await waitForTurnEnd(sid, turn_id);
    expect(types(log, turn_id).slice(-3)).toEqual(["model.requested", "model.completed", "turn.failed"]);
    expect(log.at(-2).payload.finish_reason).toBe("error");
    expect(log.at(-1).payload.error.code).toBe("model_error");
    expect(log.at(-1).payload.error.message).toContain("context too long");
    const thread = await api("GET", `/v1/sessions/${sid}/thread`);
    expect(thread.body).toMatchObject({ status: "idle", last_outcome: { turn_id, type: "turn.failed" } });
  });
});

describe("HTTP tools", () => {
  it("POSTs the call to the webhook and returns its body; failures and timeouts are error results", async () => {
    const { sid } = await scriptedSession(
      [
        {
          tool_calls: [
            { name: "echo", arguments: { q: "ping" } },
            { name: "broken", arguments: {} },
            { name: "slow", arguments: {} },
          ],
        },
        { text: "done" },
      ],
      {
        http_tools: [
          { name: "echo", url: toolURL("echo"), description: "Echoes", parameters: { type: "object", properties: { q: { type: "string" } } } },
          { name: "broken", url: toolURL("fail") },
          { name: "slow", url: toolURL("slow?ms=3000"), timeout_ms: 100 },
        ],
      },
    );
    const { turn_id } = await submitTurn(sid, "call them");
    const log = await waitForTurnEnd(sid, turn_id);
    const result = (name: string) => log.find((e) => e.type === "tool.result" && e.payload.name === name);
    const echo = result("echo");
    expect(echo.payload.is_error).toBe(false);
    expect(echo.payload.output.received).toEqual({ tool: "echo", args: { q: "ping" }, session_id: sid, turn_id, tool_call_id: echo.tool_call_id });
    expect(result("broken").payload).toMatchObject({ is_error: true, output: "HTTP 500: tool exploded" });
    expect(result("slow").payload).toMatchObject({ is_error: true, output: 'Tool "slow" timed out after 100 ms' });
    expect((await toolRequests()).some((r: any) => r.tool_call_id === echo.tool_call_id)).toBe(true);
    expect(baseURL).toContain("127.0.0.1");
  });
});

describe("the demo model", () => {
  it("does a calculator round trip offline, and the sequence stays gapless over several turns", async () => {
    const sid = await createSession({ name: "demo", model: "demo:echo", tools: ["calculator", "clock"] });
    const t1 = await submitTurn(sid, "what is 2 * (3 + 4)?");
    let log = await waitForTurnEnd(sid, t1.turn_id);
    expect(log.find((e) => e.type === "tool.result").payload.output).toBe("14");
    expect(log.at(-1).payload.output).toBe("The answer is 14.");
    const t2 = await submitTurn(sid, "what time is it?");
    log = await waitForTurnEnd(sid, t2.turn_id);
    expect(log.find((e) => e.type === "tool.result" && e.turn_id === t2.turn_id).payload.name).toBe("clock");
    const t3 = await submitTurn(sid, "hello");
    log = await waitForTurnEnd(sid, t3.turn_id);
    expect(log.at(-1).payload.output).toContain('You said: "hello"');
    expectGapless(log);
    expect(log.filter((e) => e.type === "turn.completed")).toHaveLength(3);
  });

  it("demo:slow answers at length, a word a delta, so the Quickstart's answer can be interrupted by hand", async () => {
    const sid = await createSession({ name: "slow", model: "demo:slow", tools: ["calculator"] });
    const { turn_id } = await submitTurn(sid, "what is 2 * (3 + 4)?");
    const log = await waitForTurnEnd(sid, turn_id, 30_000);
    const output: string = log.at(-1).payload.output;
    expect(output.startsWith("The answer is 14. ")).toBe(true);
    // 40 words at the model's 250 ms each: ten seconds of streaming.
    expect(log.filter((e) => e.type === "model.delta").length).toBeGreaterThanOrEqual(40);
    expect(
      log
        .filter((e) => e.type === "model.delta")
        .map((e) => e.payload.text)
        .join(""),
    ).toBe(output);
  }, 40_000);
});

describe("queue, idempotency and interrupt", () => {
  it("queues turns in order, promotes and removes, and interrupt starts the next", async () => {
    const { sid } = await scriptedSession([{ hang: true, text: "partial answer" }, { text: "third ran" }, { text: "second ran" }]);
    const first = await submitTurn(sid, "one");
    const second = await submitTurn(sid, "two");
    const third = await submitTurn(sid, "three");
    const fourth = await submitTurn(sid, "four");
    expect([first.status, second.status, third.status, fourth.status]).toEqual(["accepted", "queued", "queued", "queued"]);
    let thread = (await api("GET", `/v1/sessions/${sid}/thread`)).body;
    expect(thread).toMatchObject({ status: "running", active_turn_id: first.turn_id, queued_turns: [second.turn_id, third.turn_id, fourth.turn_id] });

    const promoted = await api("POST", `/v1/sessions/${sid}/queue/${third.turn_id}/promote`);
    expect(promoted.body).toEqual({ queued: [third.turn_id, second.turn_id, fourth.turn_id] });
    const removed = await api("DELETE", `/v1/sessions/${sid}/queue/${fourth.turn_id}`);
    expect(removed.body).toEqual({ queued: [third.turn_id, second.turn_id] });
    const again = await api("DELETE", `/v1/sessions/${sid}/queue/${fourth.turn_id}`);
    expect(again.status).toBe(409);
    expect(again.body.error.code).toBe("conflict");
    const running = await api("POST", `/v1/sessions/${sid}/queue/${first.turn_id}/promote`);
    expect(running.status).toBe(409);

    await waitForEvent(sid, (e) => e.type === "model.delta" && e.turn_id === first.turn_id);
    const interrupted = await api("POST", `/v1/sessions/${sid}/interrupt`, { reason: "user pressed stop" });
    expect(interrupted.body).toEqual({ interrupted: true, turn_id: first.turn_id });
    const log = await waitForTurnEnd(sid, second.turn_id);
    expectGapless(log);
    const ends = log.filter((e) => ["turn.completed", "turn.cancelled"].includes(e.type)).map((e) => [e.turn_id, e.type]);
    expect(ends).toEqual([
      [fourth.turn_id, "turn.cancelled"],
      [first.turn_id, "turn.cancelled"],
      [third.turn_id, "turn.completed"],
      [second.turn_id, "turn.completed"],
    ]);
    expect(log.find((e) => e.type === "turn.cancelled" && e.turn_id === first.turn_id).payload.reason).toBe("user pressed stop");
    const queueChanges = log.filter((e) => e.type === "queue.changed").map((e) => e.payload.queued);
    expect(queueChanges).toEqual([
      [second.turn_id],
      [second.turn_id, third.turn_id],
      [second.turn_id, third.turn_id, fourth.turn_id],
      [third.turn_id, second.turn_id, fourth.turn_id],
      [third.turn_id, second.turn_id],
      [second.turn_id],
      [],
    ]);
    thread = (await api("GET", `/v1/sessions/${sid}/thread`)).body;
    expect(thread).toMatchObject({ status: "idle", active_turn_id: null, queued_turns: [], last_outcome: { turn_id: second.turn_id, type: "turn.completed" } });
    // In the conversation's order: as the turns ran (the promoted three before two), four where it left the queue.
    const snapshot = (await api("GET", `/v1/sessions/${sid}`)).body;
    expect(snapshot.turns.map((t: any) => [t.input_preview, t.status])).toEqual([
      ["one", "cancelled"],
      ["four", "cancelled"],
      ["three", "completed"],
      ["two", "completed"],
    ]);
  });

  it("interrupt with no running turn is a 200 no-op that writes nothing", async () => {
    const sid = await createSession({ name: "idle", model: "demo:x" });
    const before = await events(sid);
    const res = await api("POST", `/v1/sessions/${sid}/interrupt`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ interrupted: false, turn_id: null });
    expect(await events(sid)).toEqual(before);
  });

  it("an interrupted turn leaves a usable history: the next turn runs normally", async () => {
    const { sid, scriptId } = await scriptedSession([{ hang: true, text: "partial answer" }, { text: "fine" }]);
    const t1 = await submitTurn(sid, "hang");
    await waitForEvent(sid, (e) => e.type === "model.delta");
    await api("POST", `/v1/sessions/${sid}/interrupt`);
    const t2 = await submitTurn(sid, "next");
    const log = await waitForTurnEnd(sid, t2.turn_id);
    expect(types(log, t1.turn_id).at(-1)).toBe("turn.cancelled");
    expect(log.at(-1).payload.output).toBe("fine");
    expect((await requests(scriptId))[1].messages.map((m: any) => m.role)).toEqual(["user", "user"]);
  });

  it("the same idempotency key and body gives the same turn; another body is 409", async () => {
    const sid = await createSession({ name: "idem", model: "demo:x" });
    const a = await submitTurn(sid, "hello", { idempotency_key: "k1" });
    const b = await api("POST", `/v1/sessions/${sid}/turns`, { input: "hello", idempotency_key: "k1" });
    expect(b.status).toBe(202);
    expect(b.body).toEqual({ turn_id: a.turn_id, status: "accepted", duplicate: true });
    const c = await api("POST", `/v1/sessions/${sid}/turns`, { input: "different", idempotency_key: "k1" });
    expect(c.status).toBe(409);
    expect(c.body.error).toEqual({
      code: "conflict",
      message: "idempotency_key was already used with a different body",
      details: { turn_id: a.turn_id },
    });
    const log = await waitForTurnEnd(sid, a.turn_id);
    expect(log.filter((e) => e.type === "turn.submitted")).toHaveLength(1);
  });

  it("429 when the queue is full, changing nothing", async () => {
    const { sid } = await scriptedSession([{ hang: true, text: "partial answer" }]);
    await submitTurn(sid, "running");
    for (let i = 0; i < 20; i++) await submitTurn(sid, `queued ${i}`);
    const before = await events(sid);
    const res = await api("POST", `/v1/sessions/${sid}/turns`, { input: "one too many" });
    expect(res.status).toBe(429);
    expect(res.body.error.code).toBe("rate_limited");
    expect(await events(sid)).toHaveLength(before.length);
    await api("POST", `/v1/sessions/${sid}/interrupt`);
  });

  it("422 for a bad turn body, naming the field", async () => {
    const sid = await createSession({ name: "bad", model: "demo:x" });
    const empty = await api("POST", `/v1/sessions/${sid}/turns`, { input: "" });
    expect(empty.status).toBe(422);
    expect(empty.body.error.details).toEqual([{ path: "input", reason: "must not be empty" }]);
    const blank = await api("POST", `/v1/sessions/${sid}/turns`, { input: " \n\t" });
    expect(blank.body.error.details).toEqual([{ path: "input", reason: "must not be empty" }]);
    const missing = await api("POST", `/v1/sessions/${sid}/turns`, {});
    expect(missing.body.error.details[0].path).toBe("input");
    expect((await events(sid)).map((e) => e.type)).toEqual(["session.created"]);
  });
});

describe("durability", () => {
  it("applies the numbered migrations once and records the schema version", async () => {
    const sid = await createSession({ name: "schema", model: "demo:x" });
    const versions = await runInDurableObject(stub(sid), (_instance, state) =>
      state.storage.sql
        .exec<{ version: number }>("SELECT version FROM schema_version ORDER BY version")
        .toArray()
        .map((r) => r.version),
    );
    // Every migration once, numbered 1..n without a gap.
    expect(versions).toEqual(SESSION_MIGRATIONS.map((_, i) => i + 1));
    expect(versions.length).toBeGreaterThanOrEqual(13);
    await evictDurableObject(stub(sid));
    const tables = await runInDurableObject(stub(sid), (_instance, state) =>
      state.storage.sql
        .exec<{ name: string }>("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
        .toArray()
        .map((r) => r.name),
    );
    expect(tables).toEqual(
      expect.arrayContaining([
        "events",
        "turns",
        "turn_state",
        "turn_messages",
        "messages",
        "channels",
        "inbox",
        "schedule",
        "schedules",
        "subscriptions",
        "snapshot",
        "actions",
        "memory",
        "usage_days",
        "replay",
        "schema_version",
      ]),
    );
    expect(await runInDurableObject(stub(sid), (_i, state) => state.storage.sql.exec("SELECT count(*) AS n FROM schema_version").one().n)).toBe(
      SESSION_MIGRATIONS.length,
    );
  });

  it("loses nothing across a restart between turns, and the read model equals a replay of the log", async () => {
    const sid = await createSession({ name: "restart", model: "demo:x", tools: ["calculator"] });
    const t1 = await submitTurn(sid, "what is 1 + 1?");
    const before = await waitForTurnEnd(sid, t1.turn_id);
    const threadBefore = (await api("GET", `/v1/sessions/${sid}/thread`)).body;
    await evictDurableObject(stub(sid));
    expect(await events(sid)).toEqual(before);
    expect((await api("GET", `/v1/sessions/${sid}/thread`)).body).toEqual(threadBefore);

    await abortAllDurableObjects();
    const t2 = await submitTurn(sid, "what is 2 + 2?");
    const after = await waitForTurnEnd(sid, t2.turn_id);
    expectGapless(after);
    expect(after.slice(0, before.length)).toEqual(before);
    expect(after.at(-1).payload.output).toBe("The answer is 4.");

    // The read model is a fold over the log: folding the events a client can read gives the same thread.
    const thread = (await api("GET", `/v1/sessions/${sid}/thread`)).body;
    const rebuilt = foldAll(await events(sid));
    expect(thread).toMatchObject({
      status: rebuilt.status,
      active_turn_id: rebuilt.active_turn_id,
      pending_actions: rebuilt.pending_actions,
      queued_turns: rebuilt.queued_turns,
      last_outcome: rebuilt.last_outcome,
      budget: { used: rebuilt.usage },
      last_sequence: rebuilt.last_sequence,
    });
    expect((await api("GET", `/v1/sessions/${sid}`)).body.turns).toEqual(rebuilt.turns);
  });

  it("gives a turn up as lost after it was resumed 3 times without finishing", async () => {
    const hang = { hang: true, text: "partial answer" };
    const { sid } = await scriptedSession([hang, hang, hang, hang, { text: "never reached" }]);
    const { turn_id } = await submitTurn(sid, "crash me");
    for (let attempt = 1; attempt <= 4; attempt++) {
      await waitForCount(sid, "model.delta", attempt); // the attempt's model call is streaming
      await abortAllDurableObjects();
      if (attempt <= 3) await waitForEvent(sid, (e) => e.type === "run.status" && e.payload.attempt === attempt);
    }
    const log = await waitForTurnEnd(sid, turn_id);
    expectGapless(log);
    expect(log.filter((e) => e.type === "run.status")).toHaveLength(3);
    expect(log.at(-1)).toMatchObject({
      type: "turn.failed",
      turn_id,
      payload: { error: { code: "lost", message: "The turn was resumed 3 times without progress" } },
    });
    expect((await api("GET", `/v1/sessions/${sid}/thread`)).body.status).toBe("idle");
  });

  it("resumes a turn whose object restarted mid-model-call: the call is made again, the log stays gapless", async () => {
    const { sid, scriptId } = await scriptedSession([{ hang: true, text: "partial answer" }, { text: "recovered answer" }]);
    const { turn_id } = await submitTurn(sid, "survive this");
    await waitForEvent(sid, (e) => e.type === "model.delta");
    await abortAllDurableObjects();
    // The next request starts the object again; it finds the running turn and resumes it.
    const log = await waitForTurnEnd(sid, turn_id);
    expectGapless(log);
    expect(types(log, turn_id)).toEqual([
      "turn.submitted",
      "turn.started",
      "tool.catalog.resolved",
      "model.requested",
      "model.delta",
      // The cut call's estimate, counted before the call is made again (docs/guides/subagents-and-budgets.md).
      "usage.lost",
      "model.completed",
      "run.status",
      "model.requested",
      ...Array(types(log, turn_id).filter((t) => t === "model.delta").length - 1).fill("model.delta"),
      "model.completed",
      "cost.recorded",
      "turn.completed",
    ]);
    expect(log.find((e) => e.type === "run.status").payload.phase).toBe("recovering");
    // The call cut by the restart is closed before the turn resumes, so no model call stays open.
    expect(log.find((e) => e.type === "model.completed").payload.finish_reason).toBe("interrupted");
    expect(log.at(-1).payload.output).toBe("recovered answer");
    expect(await requests(scriptId)).toHaveLength(2);
  });
});
