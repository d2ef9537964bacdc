// Long turns: the caps on a turn's model and tool calls are deployment settings. An agent that sets
// nothing keeps the defaults (60 model calls, 200 tool calls, 180 s); its budget may raise them up to the
// deployment's maximum (BUDGET_MAX_*, here the defaults 1000 / 5000 / 3600000), so a turn of 300 tool steps
// runs to its answer. A lowered maximum is tested in test/node/budget-settings.test.ts.
import { describe, expect, it } from "vitest";
import { api, createSession, events, submitTurn } from "../../support/api";
import { type Step, script, uniqueId } from "../../support/fake-model";

const ofType = (log: any[], type: string) => log.filter((e) => e.type === type);

/** Waits (polling the thread view, not the growing log) until the session has no turn running. */
async function settled(sid: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const thread = await api("GET", `/v1/sessions/${sid}/thread`);
    if (thread.body.status === "idle" && thread.body.last_outcome) return;
    if (Date.now() > deadline) throw new Error(`the turn did not end: ${JSON.stringify(thread.body)}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

describe("long turns", () => {
  it("an agent's budget may raise model and tool calls up to the deployment's maximum, not past it", async () => {
    const name = `long-${crypto.randomUUID().slice(0, 8)}`;
    const raised = { max_total_llm_calls: 300, max_total_tool_calls: 1000, max_wall_clock_ms: 600_000 };
    const ok = await api("PUT", `/v1/agents/${name}`, { model: "demo:fast", max_steps: 300, budget: raised });
    expect(ok.status, JSON.stringify(ok.body)).toBe(201);
    expect(ok.body.budget).toEqual(raised);

    for (const [field, max] of [
      ["max_total_llm_calls", 1000],
      ["max_total_tool_calls", 5000],
      ["max_wall_clock_ms", 3_600_000],
    ] as const) {
      for (const res of [
        await api("PUT", `/v1/agents/${name}`, { model: "demo:fast", budget: { [field]: max + 1 } }),
        await api("POST", "/v1/sessions", { agent: { name, model: "demo:fast", budget: { [field]: max + 1 } } }),
      ]) {
        expect(res.status).toBe(422);
        const path = res.body.error.details[0].path;
        expect(res.body.error.details).toEqual([{ path, reason: expect.stringContaining(`the deployment's maximum ${max} (BUDGET_MAX_`) }]);
        expect(path).toMatch(new RegExp(`^(agent\\.)?budget\\.${field}$`));
      }
    }
    // Past the ceiling of the setting itself: refused whatever the deployment sets.
    const over = await api("PUT", `/v1/agents/${name}`, { model: "demo:fast", budget: { max_total_llm_calls: 100_001 } });
    expect(over.body.error.details).toEqual([{ path: "budget.max_total_llm_calls", reason: "must be at most 100000, the ceiling of BUDGET_MAX_LLM_CALLS" }]);
    // Nothing of the refused configs was stored.
    expect((await api("GET", `/v1/agents/${name}`)).body.budget).toEqual(raised);
  });

  it("an agent that sets nothing keeps the default limits; the thread view shows the limits a turn runs with", async () => {
    const plain = await createSession({ name: "plain", model: "demo:fast" });
    expect((await api("GET", `/v1/sessions/${plain}/thread`)).body.budget.limits).toMatchObject({
      max_total_llm_calls: 60,
      max_total_tool_calls: 200,
      max_wall_clock_ms: 180_000,
    });
    const raised = await createSession({ name: "raised", model: "demo:fast", budget: { max_total_llm_calls: 999 } });
    expect((await api("GET", `/v1/sessions/${raised}/thread`)).body.budget.limits).toMatchObject({ max_total_llm_calls: 999, max_total_tool_calls: 200 });
  });

  it("runs a turn of 300 tool steps to its answer instead of stopping at the default caps", async () => {
    const scriptId = uniqueId("long");
    const steps: Step[] = Array.from({ length: 300 }, (_, i) => ({ tool_calls: [{ name: "calculator", arguments: { expression: `${i} + 1` } }] }));
    await script(scriptId, [...steps, { text: "done after 300 steps" }]);
    const sid = await createSession({
      name: "long-runner",
      model: `openai-compatible:${scriptId}`,
      tools: ["calculator"],
      max_steps: 301,
      budget: { max_total_llm_calls: 301, max_total_tool_calls: 300, max_wall_clock_ms: 600_000 },
    });
    const { turn_id } = await submitTurn(sid, "count to 300");
    await settled(sid, 240_000);
    const log = await events(sid);
    expect(ofType(log, "budget.exceeded")).toEqual([]);
    expect(log.at(-1)).toMatchObject({ type: "turn.completed", turn_id, payload: { output: "done after 300 steps" } });
    const results = ofType(log, "tool.result");
    expect(results).toHaveLength(300);
    expect(results.at(-1).payload.output).toBe("300");
    expect(ofType(log, "model.requested")).toHaveLength(301);
    expect((await api("GET", `/v1/sessions/${sid}/thread`)).body.budget.used).toMatchObject({ llm_calls: 301, tool_calls: 300 });
  }, 300_000);
});
