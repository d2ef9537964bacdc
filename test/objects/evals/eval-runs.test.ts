// Eval runs that outlive a restart of their object (each case run once), two versions compared on the same
// cases, and a label gated on a passing run, through HTTP, with the scripted fake model.
import { env, evictDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { api, createAgent, events, expectRefused } from "../../support/api";
import { SUMS, suffix, waitForRun } from "../../support/evals";
import { requests, type Step, script, uniqueId } from "../../support/fake-model";

/** An agent whose model answers from `steps` (priced: 1000 USD per million tokens). */
async function scriptedAgent(name: string, steps: Step[], extra: Record<string, unknown> = {}): Promise<string> {
  const id = uniqueId("priced-eval");
  await script(id, steps);
  await createAgent({ name, model: `openai-compatible:${id}`, ...extra });
  return id;
}

async function startRun(body: Record<string, unknown>): Promise<string> {
  const res = await api("POST", "/v1/evals", body);
  expect(res.status, JSON.stringify(res.body)).toBe(202);
  return res.body.id;
}

const casesOf = async (id: string) => (await api("GET", `/v1/evals/${id}/cases`)).body.cases;

describe("eval runs", () => {
  it("survive a restart of their object: the run goes on and each case runs once, in one session", async () => {
    const agent = `slow-${suffix()}`;
    const scriptId = await scriptedAgent(
      agent,
      SUMS.map(() => ({ text: "The answer is slow.", chunk_size: 1, delay_ms: 15 })),
    );
    const dataset = `d-${suffix()}`;
    await api("PUT", `/v1/datasets/${dataset}`, { items: SUMS });
    const id = await startRun({
      agent,
      dataset: { name: dataset },
      scorers: [{ type: "contains", value: "answer" }, { type: "exact" }, { type: "max_steps", max: 1 }],
    });
    for (let i = 0; (await api("GET", `/v1/evals/${id}`)).body.progress.running < 4; i++) {
      if (i > 200) throw new Error("the run never had 4 cases running");
      await new Promise((r) => setTimeout(r, 10));
    }
    const before = (await api("GET", `/v1/evals/${id}`)).body.progress;
    expect(before.done).toBeLessThan(10);
    await evictDurableObject(env.EVAL_RUNS.get(env.EVAL_RUNS.idFromName(id)));

    const run = await waitForRun(id, 30_000, 4);
    expect(run.progress).toEqual({ total: 10, done: 10, running: 0 });
    expect(run.aggregates).toEqual({
      contains: { mean: 1, pass_rate: 1, count: 10 },
      exact: { mean: 0, pass_rate: 0, count: 10 },
      max_steps: { mean: 1, pass_rate: 1, count: 10 },
    });
    // One model call per case: no case ran twice.
    expect(await requests(scriptId)).toHaveLength(10);
    const cases = await casesOf(id);
    expect(new Set(cases.map((c: any) => c.session_id)).size).toBe(10);
    for (const c of cases) {
      const log = await events(c.session_id);
      expect(log.filter((e) => e.type === "turn.submitted")).toHaveLength(1);
      expect(c).toMatchObject({ output: "The answer is slow.", steps: 1, cost_usd: 0.015 });
    }
  });

  it("of two versions with different instructions compare per scorer (win, lose, tie) with cost and latency ratios", async () => {
    const agent = `cmp-${suffix()}`;
    // Version 1's ten answers, then version 2's (the runs go one after the other); version 2's cost twice as much.
    const v1: Step[] = SUMS.map((_, i) => ({ text: `The answer is ${i + 1}.` }));
    const v2: Step[] = SUMS.map(() => ({ text: "I cannot say.", usage: { prompt_tokens: 20, completion_tokens: 10 } }));
    const scriptId = await scriptedAgent(agent, [...v1, ...v2], { instructions: "Answer with the sum." });
    const model = `openai-compatible:${scriptId}`;
    await createAgent({ name: agent, model, instructions: "Answer politely." });
    const dataset = `d-${suffix()}`;
    await api("PUT", `/v1/datasets/${dataset}`, { items: SUMS });
    const scorers = [{ type: "contains", value: "answer" }, { type: "no_tool_called" }, { type: "regex", id: "polite", pattern: "^I\\b" }];
    const a = await waitForRun(await startRun({ agent, version: 1, dataset: { name: dataset }, scorers }));
    const b = await waitForRun(await startRun({ agent, version: 2, dataset: { name: dataset }, scorers }));
    expect([a.version, b.version]).toEqual([1, 2]);
    const sent = await requests(scriptId);
    expect(sent.slice(0, 10).every((r: any) => r.messages[0].content === "Answer with the sum.")).toBe(true);
    expect(sent.slice(10).every((r: any) => r.messages[0].content === "Answer politely.")).toBe(true);

    const compared = await api("POST", "/v1/evals/compare", { a: a.id, b: b.id });
    expect(compared.status).toBe(200);
    expect(compared.body).toMatchObject({
      a: a.id,
      b: b.id,
      shared_cases: 10,
      scorers: {
        contains: { win: 0, lose: 10, tie: 0, a_mean: 1, b_mean: 0 },
        no_tool_called: { win: 0, lose: 0, tie: 10, a_mean: 1, b_mean: 1 },
        polite: { win: 10, lose: 0, tie: 0, a_mean: 0, b_mean: 1 },
      },
      cost_ratio: 2,
    });
    expect(typeof compared.body.latency_ratio).toBe("number");
    expect((await api("POST", "/v1/evals/compare", { a: a.id, b: "evr_0123456789abcdef01234567" })).status).toBe(404);
  });

  it("gate a label: refused with 409 eval_gate_failed naming the failing scorer and run (or that no run exists), moved once a run passes", async () => {
    const agent = `gate-${suffix()}`;
    const good: Step[] = SUMS.map((_, i) => ({ text: `The answer is ${i + 1}.` }));
    const bad: Step[] = SUMS.map(() => ({ text: "No idea." }));
    // Version 2's answers cost twice as much (twice the tokens).
    const dear: Step[] = SUMS.map((_, i) => ({ text: `The answer is ${i + 1}.`, usage: { prompt_tokens: 20, completion_tokens: 10 } }));
    const scriptId = await scriptedAgent(agent, [...bad, ...good, ...dear]);
    const dataset = `d-${suffix()}`;
    await api("PUT", `/v1/datasets/${dataset}`, { items: SUMS });
    const require = { dataset, min_scores: { contains: 0.9, format: 0.7 } };
    const scorers = [
      { type: "contains", value: "answer" },
      { type: "regex", id: "format", pattern: "^The answer is \\d+\\.$" },
    ];

    const none = await api("PUT", `/v1/agents/${agent}/labels/production`, { version: 1, require });
    expect(none.status).toBe(409);
    expect(none.body.error).toMatchObject({ code: "eval_gate_failed", details: { run_id: null, dataset: { name: dataset, version: 1 }, failures: [] } });
    expect(none.body.error.message).toBe(`No finished eval run of version 1 of '${agent}' on dataset '${dataset}' version 1: run one with POST /v1/evals`);
    // A missing dataset or agent is quoted as a missing one is everywhere (Agent 'x' was not found).
    const noDataset = { version: 1, require: { ...require, dataset: "no-such-dataset" } };
    await expectRefused("PUT", `/v1/agents/${agent}/labels/production`, "require.dataset", noDataset, "no dataset 'no-such-dataset'");
    await expectRefused("POST", "/v1/evals", "agent", { agent: "no-such-agent", dataset: { name: dataset }, scorers }, "no agent 'no-such-agent'");

    const failing = await waitForRun(await startRun({ agent, dataset: { name: dataset }, scorers }));
    const refused = await api("PUT", `/v1/agents/${agent}/labels/production`, { version: 1, require });
    expect(refused.status).toBe(409);
    expect(refused.body.error).toMatchObject({
      code: "eval_gate_failed",
      details: {
        run_id: failing.id,
        failures: [
          { scorer: "contains", mean: 0, min: 0.9, reason: "mean score 0 is under 0.9" },
          { scorer: "format", mean: 0, min: 0.7, reason: "mean score 0 is under 0.7" },
        ],
      },
    });
    expect(refused.body.error.message).toContain(failing.id);
    expect((await api("GET", `/v1/agents/${agent}/labels`)).body.labels).toEqual([]);

    // The newest finished run decides: this one passes.
    const passing = await waitForRun(await startRun({ agent, dataset: { name: dataset }, scorers }));
    expect(passing.aggregates.format.mean).toBe(1);
    const moved = await api("PUT", `/v1/agents/${agent}/labels/production`, { version: 1, require });
    expect(moved.status, JSON.stringify(moved.body)).toBe(200);
    expect(moved.body).toMatchObject({ label: "production", version: 1 });

    // A candidate may cost at most max_cost_ratio times the run of the version the label points at.
    await createAgent({ name: agent, model: `openai-compatible:${scriptId}`, instructions: "Be thorough." });
    const dearRun = await waitForRun(await startRun({ agent, version: 2, dataset: { name: dataset }, scorers }));
    expect(dearRun.cost_usd).toBe(0.3);
    const tooDear = await api("PUT", `/v1/agents/${agent}/labels/production`, { version: 2, require: { ...require, max_cost_ratio: 1.5 } });
    expect(tooDear.status).toBe(409);
    expect(tooDear.body.error.details).toMatchObject({
      run_id: dearRun.id,
      failures: [{ check: "max_cost_ratio", ratio: 2, max: 1.5, reason: `costs 2 times the current version's run (${passing.id}), over 1.5` }],
    });
    expect((await api("PUT", `/v1/agents/${agent}/labels/production`, { version: 2, require: { ...require, max_cost_ratio: 2 } })).body).toMatchObject({
      version: 2,
    });

    const missing = await api("PUT", `/v1/agents/${agent}/labels/production`, { version: 2, require: { ...require, min_scores: { judge: 0.5 } } });
    expect(missing.body.error.details.failures).toEqual([{ scorer: "judge", mean: null, min: 0.5, reason: `run ${dearRun.id} has no scorer 'judge'` }]);
    expect((await api("PUT", `/v1/agents/${agent}/labels/production`, { version: 1, require: { ...require, dataset: `none-${suffix()}` } })).status).toBe(422);
  });
});
