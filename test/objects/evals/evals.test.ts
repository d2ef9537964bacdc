// Datasets and eval runs through HTTP: a 10-item dataset run against an agent version on the demo model with
// three scorers, its cases and aggregates; datasets versioned; bad scorers, patterns and versions refused.
import { describe, expect, it } from "vitest";
import { api, createAgent, createSession, events, expectRefused, submitTurn, waitForCount, waitForTurnEnd } from "../../support/api";
import { SUMS, suffix, waitForRun } from "../../support/evals";
import { gateURL, releaseGate, requests, script, uniqueId, waitForGate } from "../../support/fake-model";

describe("datasets", () => {
  it("are versioned: a PUT that changes the items stores a new version, the same items none; read, listed, deleted", async () => {
    const name = `sums-${suffix()}`;
    const first = await api("PUT", `/v1/datasets/${name}`, { items: SUMS.slice(0, 2) });
    expect(first.status).toBe(201);
    expect(first.body).toMatchObject({ name, version: 1, item_count: 2 });
    expect((await api("PUT", `/v1/datasets/${name}`, { items: SUMS.slice(0, 2) })).status).toBe(200);
    const second = await api("PUT", `/v1/datasets/${name}`, { items: SUMS });
    expect(second.body).toMatchObject({ version: 2, item_count: 10 });
    expect((await api("GET", `/v1/datasets/${name}`)).body.items).toHaveLength(10);
    expect((await api("GET", `/v1/datasets/${name}?version=1`)).body.items).toEqual(SUMS.slice(0, 2));
    expect((await api("GET", `/v1/datasets/${name}?version=3`)).status).toBe(404);
    expect((await api("GET", "/v1/datasets")).body.datasets).toContainEqual(expect.objectContaining({ name, version: 2 }));
    expect((await api("DELETE", `/v1/datasets/${name}`)).body).toEqual({ deleted: true, name });
    expect((await api("GET", `/v1/datasets/${name}`)).status).toBe(404);
  });

  it("take a recorded turn's input and answer; refuse unknown sessions and turns and inputs over the limits, storing nothing", async () => {
    const agent = `rec-${suffix()}`;
    await createAgent({ name: agent, model: "demo:calc", tools: ["calculator"] });
    const sid = (await api("POST", "/v1/sessions", { agent })).body.session_id;
    const { turn_id } = (await api("POST", `/v1/sessions/${sid}/turns`, { input: "What is 6 * 7?" })).body;
    for (let i = 0; i < 100 && (await api("GET", `/v1/sessions/${sid}/thread`)).body.status !== "idle"; i++) await new Promise((r) => setTimeout(r, 50));
    const name = `recorded-${suffix()}`;
    const put = await api("PUT", `/v1/datasets/${name}`, { items: [{ from: { session_id: sid, turn_id } }] });
    expect(put.status).toBe(201);
    expect((await api("GET", `/v1/datasets/${name}`)).body.items).toEqual([
      { input: "What is 6 * 7?", expected: "The answer is 42.", source: { session_id: sid, turn_id } },
    ]);

    const other = `refused-${suffix()}`;
    await expectRefused("PUT", `/v1/datasets/${other}`, "items.1.from.session_id", {
      items: [SUMS[0], { from: { session_id: "ses_0123456789abcdef01234567", turn_id: "t" } }],
    });
    await expectRefused("PUT", `/v1/datasets/${other}`, "items.0.from.turn_id", { items: [{ from: { session_id: sid, turn_id: "turn_nope" } }] });
    await expectRefused("PUT", `/v1/datasets/${other}`, "items.0.input", { items: [{ input: "x".repeat(200_001) }] });
    expect((await api("GET", `/v1/datasets/${other}`)).status).toBe(404);
  });
});

describe("eval runs", () => {
  it("run each of 10 cases as a fresh session of the agent version and score them: cases and aggregates per scorer", async () => {
    const agent = `calc-${suffix()}`;
    await createAgent({ name: agent, model: "demo:calc", tools: ["calculator"], instructions: "Add." });
    const dataset = `sums-${suffix()}`;
    await api("PUT", `/v1/datasets/${dataset}`, { items: SUMS });
    const scorers = [{ type: "contains", value: "answer" }, { type: "exact" }, { type: "max_steps", max: 1 }];
    const started = await api("POST", "/v1/evals", { agent, dataset: { name: dataset }, scorers, concurrency: 2 });
    expect(started.status, JSON.stringify(started.body)).toBe(202);
    expect(started.body).toMatchObject({ agent, version: 1, dataset: { name: dataset, version: 1 }, concurrency: 2, status: "running" });

    const run = await waitForRun(started.body.id, 15_000, 2);
    expect(run.progress).toEqual({ total: 10, done: 10, running: 0 });
    expect(run.aggregates).toEqual({
      contains: { mean: 1, pass_rate: 1, count: 10 },
      exact: { mean: 0.8, pass_rate: 0.8, count: 10 },
      max_steps: { mean: 0, pass_rate: 0, count: 10 },
    });
    const { cases } = (await api("GET", `/v1/evals/${run.id}/cases`)).body;
    expect(cases).toHaveLength(10);
    expect(new Set(cases.map((c: any) => c.session_id)).size).toBe(10);
    const third = cases[3];
    expect(third).toMatchObject({ index: 3, status: "done", output: "The answer is 4.", steps: 2, turn_status: "completed" });
    expect(third.tool_calls).toEqual([{ name: "calculator", args: { expression: "3 + 1" } }]);
    expect(third.scores).toEqual([
      { scorer: "contains", score: 1, pass: true, reason: 'the output contains "answer"' },
      { scorer: "exact", score: 0, pass: false, reason: 'the output "The answer is 4." is not "The answer is 3."' },
      { scorer: "max_steps", score: 0, pass: false, reason: "2 steps, over 1" },
    ]);
    expect(third.diff).toBe("--- expected\n+++ output\n-The answer is 3.\n+The answer is 4.");
    expect(cases[0].diff).toBe("");
    expect(typeof third.latency_ms).toBe("number");
    // Each case's session runs the agent version and names the run.
    const session = (await api("GET", `/v1/sessions/${third.session_id}`)).body;
    expect(session.metadata).toEqual({ eval_run_id: run.id, eval_case: 3 });
  });

  it("score with a judge model (its structured answer, priced) and a webhook POSTed the case", async () => {
    const agent = `calc-${suffix()}`;
    await createAgent({ name: agent, model: "demo:calc", tools: ["calculator"] });
    const dataset = `d-${suffix()}`;
    await api("PUT", `/v1/datasets/${dataset}`, { items: SUMS.slice(0, 2) });
    const judge = uniqueId("priced-judge");
    await script(judge, [{ text: '{"score": 0.75, "reason": "right, but terse"}' }, { text: '{"score": 0.75, "reason": "right, but terse"}' }]);
    const gate = uniqueId("scorer");
    const scorers = [
      { type: "model", model: `openai-compatible:${judge}`, rubric: "Is the sum right?", pass_at: 0.7 },
      { type: "webhook", url: gateURL(gate), pass_at: 0.9 },
    ];
    const id = (await api("POST", "/v1/evals", { agent, dataset: { name: dataset }, scorers })).body.id;
    await waitForGate(gate, (s) => s.held >= 1, "the webhook scorer was not called");
    const posted = await releaseGate(gate, { score: 0.5, reason: "half right" });
    if (posted.delivered < 2) {
      await waitForGate(gate, (s) => s.held >= 1, "the second case's webhook was not called");
      await releaseGate(gate, { score: 0.5, reason: "half right" });
    }
    const run = await waitForRun(id);
    expect(run.aggregates).toEqual({ model: { mean: 0.75, pass_rate: 1, count: 2 }, webhook: { mean: 0.5, pass_rate: 0, count: 2 } });
    const [first] = (await api("GET", `/v1/evals/${id}/cases`)).body.cases;
    expect(first.scores).toEqual([
      { scorer: "model", score: 0.75, pass: true, reason: "right, but terse" },
      { scorer: "webhook", score: 0.5, pass: false, reason: "half right" },
    ]);
    expect(first.scoring_cost_usd).toBe(0.015);
    expect(run.cost_usd).toBe(0.03);
    // The two cases run at once: either may have asked the judge first.
    const asked = (await requests(judge)).find((r: any) => r.messages[1].content.includes("What is 0 + 1?"));
    expect(asked.messages[0].content).toContain("Is the sum right?");
    expect(asked.messages[1].content).toContain("The agent's answer:\nThe answer is 1.");
  });

  it("online scorers score a sample of live turns off the turn's path, as eval.scored in the session's log", async () => {
    const agent = `online-${suffix()}`;
    const online_scorers = [
      { scorer: { type: "contains", value: "answer" }, sample_rate: 1 },
      { scorer: { type: "max_steps", max: 1 }, sample_rate: 1 },
      { scorer: { type: "exact", id: "never" }, sample_rate: 0 },
    ];
    await createAgent({ name: agent, model: "demo:calc", tools: ["calculator"], online_scorers });
    const sid = await createSession(agent);
    const { turn_id } = await submitTurn(sid, "What is 4 + 4?");
    await waitForTurnEnd(sid, turn_id);
    const scored = (await waitForCount(sid, "eval.scored", 2)).filter((e) => e.type === "eval.scored");
    expect(scored.map((e) => e.payload)).toEqual([
      { turn_id, scorer: "contains", score: 1, pass: true, reason: 'the output contains "answer"', sample_rate: 1, version: 1 },
      { turn_id, scorer: "max_steps", score: 0, pass: false, reason: "2 steps, over 1", sample_rate: 1, version: 1 },
    ]);
    const log = await events(sid);
    expect(scored[0].sequence).toBeGreaterThan(log.find((e) => e.type === "turn.completed").sequence);
    expect(log.filter((e) => e.type === "eval.scored")).toHaveLength(2);
  });

  it("refuse bad scorer configs, patterns that need backtracking, unknown datasets and versions, naming the field", async () => {
    const agent = `calc-${suffix()}`;
    await createAgent({ name: agent, model: "demo:calc" });
    const dataset = `d-${suffix()}`;
    await api("PUT", `/v1/datasets/${dataset}`, { items: SUMS.slice(0, 1) });
    const body = (scorers: unknown[], extra: object = {}) => ({ agent, dataset: { name: dataset }, scorers, ...extra });
    await expectRefused("POST", "/v1/evals", "scorers.0.max", body([{ type: "max_steps" }]));
    await expectRefused("POST", "/v1/evals", "scorers.0.type", body([{ type: "vibes" }]));
    await expectRefused("POST", "/v1/evals", "scorers.0.pattern", body([{ type: "regex", pattern: "^(a+)+\\1$" }]), /RE2/);
    await expectRefused("POST", "/v1/evals", "scorers.1.id", body([{ type: "exact" }, { type: "exact" }]));
    await expectRefused("POST", "/v1/evals", "scorers.0.model", body([{ type: "model", model: "openai:gpt-4o", rubric: "Is it right?" }]), /not configured/);
    await expectRefused("POST", "/v1/evals", "scorers.0.url", body([{ type: "webhook", url: "https://scorer.example/score" }]));
    await expectRefused("POST", "/v1/evals", "dataset.version", body([{ type: "exact" }], { dataset: { name: dataset, version: 9 } }));
    await expectRefused("POST", "/v1/evals", "dataset.name", body([{ type: "exact" }], { dataset: { name: `none-${suffix()}` } }));
    await expectRefused("POST", "/v1/evals", "version", body([{ type: "exact" }], { version: 5 }));
    await expectRefused("POST", "/v1/evals", "concurrency", body([{ type: "exact" }], { concurrency: 9 }));
    expect((await api("GET", "/v1/evals/evr_0123456789abcdef01234567")).status).toBe(404);
    // An agent's online scorers are held to the same checks.
    const judge = { scorer: { type: "model", model: "openai:gpt-4o", rubric: "Right?" }, sample_rate: 0.1 };
    await expectRefused("PUT", `/v1/agents/${agent}`, "online_scorers.0.scorer.model", { model: "demo:calc", online_scorers: [judge] }, /not configured/);
  });
});
