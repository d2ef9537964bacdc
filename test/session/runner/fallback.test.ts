// Model fallback through the public surface: an agent's fallback_models answer a call its model
// could not (a 503 after the retries, no first token in time), model.fallback says so, cost is recorded for
// the model that answered, and a turn fails only when every model failed, naming each error.
import { describe, expect, it } from "vitest";
import { spanLabel, turnSpans } from "../../../src/client/index";
import { api, events, submitTurn, waitForTurnEnd } from "../../support/api";
import { requests, type Step, script, uniqueId } from "../../support/fake-model";

/** A 503 the provider asks to retry at once (so the two retries take no time). */
const overloaded: Step = { error: { status: 503, message: "overloaded", retry_after_ms: 0 } };

async function scripted(steps: Step[]): Promise<string> {
  const id = uniqueId("fallback");
  await script(id, steps);
  return id;
}

/** Runs one turn of an inline agent and returns its log and terminal event. */
async function runTurn(agent: Record<string, unknown>) {
  const res = await api("POST", "/v1/sessions", { agent: { instructions: "Be brief.", ...agent } });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  const sid: string = res.body.session_id;
  const { turn_id } = await submitTurn(sid, "hello");
  const log = await waitForTurnEnd(sid, turn_id);
  return { sid, turn_id, log, ended: log.at(-1)!, ofType: (type: string) => log.filter((e) => e.type === type) };
}

describe("fallback_models", () => {
  it("a 503 from the first model after its retries is answered by the next (an Anthropic model), with model.fallback", async () => {
    const first = await scripted([overloaded, overloaded, overloaded]);
    const second = await scripted([{ text: "from the fallback", usage: { prompt_tokens: 12, completion_tokens: 4 } }]);
    const { ended, ofType } = await runTurn({ model: `openai-compatible:${first}`, fallback_models: [`anthropic:${second}`] });
    expect(ended).toMatchObject({ type: "turn.completed", payload: { output: "from the fallback" } });
    expect((await requests(first)).length).toBe(3); // the call and its two retries
    expect((await requests(second)).length).toBe(1);
    // One call: one model.requested (the agent's model), the fallback in between, and the answering model recorded.
    expect(ofType("model.requested").map((e) => e.payload.model)).toEqual([`openai-compatible:${first}`]);
    expect(ofType("model.fallback").map((e) => e.payload)).toEqual([
      { from: `openai-compatible:${first}`, to: `anthropic:${second}`, reason: expect.stringContaining("overloaded") },
    ]);
    expect(ofType("model.fallback")[0].step_id).toBe(ofType("model.requested")[0].step_id);
    expect(ofType("model.completed")[0].payload).toMatchObject({ finish_reason: "stop", model: `anthropic:${second}` });
    expect(ofType("cost.recorded").map((e) => [e.payload.model, e.payload.usage])).toEqual([
      [`anthropic:${second}`, { input_tokens: 12, output_tokens: 4, total_tokens: 16 }],
    ]);
  });

  it("a model that sends no first token within first_token_timeout_ms is given up for the next", async () => {
    const slow = await scripted([{ text: "too late", delay_ms: 5_000 }]);
    const quick = await scripted([{ text: "in time" }]);
    const { ended, ofType } = await runTurn({
      model: `openai-compatible:${slow}`,
      fallback_models: [`openai-compatible:${quick}`],
      first_token_timeout_ms: 300,
    });
    expect(ended).toMatchObject({ type: "turn.completed", payload: { output: "in time" } });
    expect(ofType("model.fallback").map((e) => e.payload)).toEqual([
      { from: `openai-compatible:${slow}`, to: `openai-compatible:${quick}`, reason: "no first token within first_token_timeout_ms (300 ms)" },
    ]);
    expect(
      ofType("model.delta")
        .map((e) => e.payload.text)
        .join(""),
    ).toBe("in time");
  });

  it("fails the turn only when every model failed, naming each model and its error", async () => {
    const a = await scripted([overloaded, overloaded, overloaded]);
    const b = await scripted([{ text: "", hang: true }]);
    const c = await scripted([
      { error: { status: 529, message: "anthropic is overloaded", retry_after_ms: 0 } },
      { error: { status: 529, message: "anthropic is overloaded", retry_after_ms: 0 } },
      { error: { status: 529, message: "anthropic is overloaded", retry_after_ms: 0 } },
    ]);
    const { ended, ofType } = await runTurn({
      model: `openai-compatible:${a}`,
      fallback_models: [`openai-compatible:${b}`, `anthropic:${c}`],
      // Long enough for c's three refusals to arrive even on a busy machine; b, which never answers, waits it out.
      first_token_timeout_ms: 1000,
    });
    expect(ended.type).toBe("turn.failed");
    expect(ended.payload.error.code).toBe("model_error");
    const message: string = ended.payload.error.message;
    expect(message).toMatch(/^Every model failed: /);
    expect(message).toContain(`openai-compatible:${a}: Failed after 3 attempts. Last error: overloaded`);
    expect(message).toContain(`openai-compatible:${b}: no first token within first_token_timeout_ms (1000 ms)`);
    expect(message).toContain(`anthropic:${c}: Failed after 3 attempts. Last error: anthropic is overloaded`);
    expect(ofType("model.fallback").map((e) => [e.payload.from, e.payload.to])).toEqual([
      [`openai-compatible:${a}`, `openai-compatible:${b}`],
      [`openai-compatible:${b}`, `anthropic:${c}`],
    ]);
    expect(ofType("model.completed")[0].payload).toMatchObject({ finish_reason: "error", error: { message } });
    expect(ofType("cost.recorded")).toEqual([]);
  });

  it("does not fall back from an error that is not retryable (a 400)", async () => {
    const a = await scripted([{ error: { status: 400, message: "bad request" } }]);
    const b = await scripted([{ text: "unused" }]);
    const { ended, ofType } = await runTurn({ model: `openai-compatible:${a}`, fallback_models: [`openai-compatible:${b}`] });
    expect(ended.payload.error.message).toBe(`openai-compatible:${a}: bad request (not retryable: no fallback)`);
    expect(ofType("model.fallback")).toEqual([]);
    expect((await requests(b)).length).toBe(0);
  });

  it("model_timeout_ms bounds the whole call", async () => {
    const slow = await scripted([{ text: "slow answer", delay_ms: 400 }]);
    const { ended } = await runTurn({ model: `openai-compatible:${slow}`, model_timeout_ms: 300 });
    expect(ended.type).toBe("turn.failed");
    expect(ended.payload.error).toEqual({ code: "model_error", message: "the model call took longer than model_timeout_ms (300 ms)" });
  });

  it("refuses fallback models that are malformed or whose provider is not configured", async () => {
    const res = await api("PUT", "/v1/agents/fallbacks", { model: "demo:x", fallback_models: ["openai:gpt-4.1", "nope"] });
    expect(res.status).toBe(422);
    expect(res.body.error.details).toEqual([{ path: "fallback_models.1", reason: expect.stringMatching(/provider:model/) }]);
    const unconfigured = await api("PUT", "/v1/agents/fallbacks", { model: "demo:x", fallback_models: ["openai:gpt-4.1"] });
    expect(unconfigured.body.error.details).toEqual([
      { path: "fallback_models.0", reason: 'provider "openai" is not configured in this deployment: set the OPENAI_API_KEY secret' },
    ]);
    const five = await api("PUT", "/v1/agents/fallbacks", { model: "demo:x", fallback_models: ["demo:a", "demo:b", "demo:c", "demo:d", "demo:e"] });
    expect(five.body.error.details).toEqual([{ path: "fallback_models", reason: "at most 4 fallback models" }]);
  });
});

describe("replay of a call a fallback answered", () => {
  it("answers it from the recording and records the model that answered", async () => {
    const first = await scripted([overloaded, overloaded, overloaded]);
    const second = await scripted([{ text: "from the fallback" }]);
    const { sid, turn_id } = await runTurn({ model: `openai-compatible:${first}`, fallback_models: [`openai-compatible:${second}`] });
    const res = await api("POST", `/v1/sessions/${sid}/turns/${turn_id}/replay`, {});
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    await waitForTurnEnd(res.body.exec_id, res.body.turn_id);
    const log = await events(res.body.exec_id);
    const done = log.find((e) => e.type === "replay.completed");
    expect(done.payload).toMatchObject({ diverged: null, output_changed: false });
    expect(log.filter((e) => e.type === "model.fallback")).toEqual([]);
    expect(log.find((e) => e.type === "cost.recorded").payload.model).toBe(`openai-compatible:${second}`);
    expect((await requests(first)).length + (await requests(second)).length).toBe(4); // the original's only
  });
});

describe("circuit breaker", () => {
  const calc = (expression: string): Step => ({ tool_calls: [{ name: "calculator", arguments: { expression } }] });

  /** A session on a dead primary (every request a 503) and a fallback scripted with `fallbackSteps`. */
  async function deadPrimary(fallbackSteps: Step[], extra: Record<string, unknown> = {}) {
    const primary = await scripted(Array.from({ length: 30 }, () => overloaded));
    const fallback = await scripted(fallbackSteps);
    const agent = { model: `openai-compatible:${primary}`, fallback_models: [`openai-compatible:${fallback}`], tools: ["calculator"], ...extra };
    const res = await api("POST", "/v1/sessions", { agent: { instructions: "Be brief.", ...agent } });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const sid: string = res.body.session_id;
    const turn = async (input: string) => {
      const { turn_id } = await submitTurn(sid, input);
      const log = (await waitForTurnEnd(sid, turn_id)).filter((e) => e.turn_id === turn_id);
      expect(log.at(-1).type).toBe("turn.completed");
      return log;
    };
    return { primary: `openai-compatible:${primary}`, fallback: `openai-compatible:${fallback}`, primaryId: primary, turn };
  }

  const fallbacks = (log: any[]) => log.filter((e) => e.type === "model.fallback").map((e) => e.payload);

  it("after a fallback the rest of the turn, and later turns within the cool-down, skip the dead model", async () => {
    const { primary, fallback, primaryId, turn } = await deadPrimary([calc("1 + 1"), calc("2 + 2"), { text: "four" }, { text: "again" }]);
    const first = await turn("add things");
    // One failure of the primary (the call and its two retries), not one per step.
    expect((await requests(primaryId)).length).toBe(3);
    expect(fallbacks(first)).toEqual([
      { from: primary, to: fallback, reason: expect.stringContaining("overloaded") },
      { from: primary, to: fallback, reason: "skipped: it failed earlier in this turn", skipped: true },
      { from: primary, to: fallback, reason: "skipped: it failed earlier in this turn", skipped: true },
    ]);
    expect(first.filter((e) => e.type === "model.completed").map((e) => e.payload.model)).toEqual([fallback, fallback, fallback]);
    // The spans of the waterfall (the CLI's timeline, the inspector's) are named after the model that answered.
    const models = turnSpans(first).filter((span) => span.kind === "model");
    expect(models.map(spanLabel)).toEqual([`model ${fallback}`, `model ${fallback}`, `model ${fallback}`]);
    expect(models.map((span) => span.name)).toEqual([`chat ${fallback}`, `chat ${fallback}`, `chat ${fallback}`]);

    const second = await turn("again");
    expect((await requests(primaryId)).length).toBe(3); // no request to the primary within the cool-down
    expect(fallbacks(second)).toEqual([{ from: primary, to: fallback, reason: expect.stringContaining("its circuit breaker is open"), skipped: true }]);
  });

  it("after the cool-down one call tries the model again, and its answer closes the breaker", async () => {
    const primaryId = await scripted([overloaded, overloaded, overloaded, { text: "back" }, { text: "still back" }]);
    const fallback = await scripted([{ text: "from the fallback" }]);
    const res = await api("POST", "/v1/sessions", {
      agent: { model: `openai-compatible:${primaryId}`, fallback_models: [`openai-compatible:${fallback}`], fallback_cooldown_ms: 200 },
    });
    const sid: string = res.body.session_id;
    const run = async (input: string) => {
      const { turn_id } = await submitTurn(sid, input);
      return (await waitForTurnEnd(sid, turn_id)).filter((e) => e.turn_id === turn_id);
    };
    expect((await run("one")).at(-1).payload.output).toBe("from the fallback");
    await new Promise((r) => setTimeout(r, 300)); // past the cool-down
    const trial = await run("two");
    expect(trial.at(-1).payload.output).toBe("back");
    expect(fallbacks(trial)).toEqual([]);
    expect((await run("three")).at(-1).payload.output).toBe("still back");
    expect((await requests(primaryId)).length).toBe(5);
  });
});
