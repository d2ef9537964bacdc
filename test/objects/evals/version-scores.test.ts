// Online scores aggregated per agent version: each eval.scored a session records adds to its version's
// aggregate (per scorer count, mean, pass rate), read with one request. Through HTTP on the demo model.
import { describe, expect, it } from "vitest";
import { api, createAgent, createSession, submitTurn, waitForCount, waitForTurnEnd } from "../../support/api";
import { suffix } from "../../support/evals";

async function scoredTurn(sid: string, input: string, scorers: number): Promise<void> {
  const { turn_id } = await submitTurn(sid, input);
  await waitForTurnEnd(sid, turn_id);
  await waitForCount(sid, "eval.scored", scorers);
}

/** Polls the version's scores until `scorer` counts `n` turns. */
async function scoresOnceCounted(agent: string, version: number, scorer: string, n: number): Promise<any> {
  for (let i = 0; ; i++) {
    const res = await api("GET", `/v1/agents/${agent}/versions/${version}/scores`);
    expect(res.status).toBe(200);
    if ((res.body.scorers[scorer]?.count ?? 0) >= n) return res.body;
    if (i > 200) throw new Error(`${agent}@${version}: ${scorer} never counted ${n}: ${JSON.stringify(res.body)}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

describe("online scores per version", () => {
  it("aggregate each version's eval.scored per scorer: count, mean and pass rate; unknown versions 404, bad ones 422", async () => {
    const agent = `scores-${suffix()}`;
    const online_scorers = [
      { scorer: { type: "contains", value: "answer" }, sample_rate: 1 },
      { scorer: { type: "max_steps", max: 1 }, sample_rate: 1 },
    ];
    await createAgent({ name: agent, model: "demo:calc", tools: ["calculator"], online_scorers });
    const first = await createSession(agent);
    await scoredTurn(first, "What is 4 + 4?", 2);
    await scoredTurn(first, "Say hello", 4);
    await scoredTurn(await createSession(agent), "What is 2 + 3?", 2);
    await createAgent({ name: agent, model: "demo:calc", tools: ["calculator"], online_scorers, instructions: "Two." });
    await scoredTurn(await createSession(agent), "Say hello", 2);

    const v1 = await scoresOnceCounted(agent, 1, "max_steps", 3);
    expect(v1).toEqual({
      agent,
      version: 1,
      scorers: {
        contains: { mean: 0.6667, pass_rate: 0.6667, count: 3 },
        max_steps: { mean: 0.3333, pass_rate: 0.3333, count: 3 },
      },
      last_scored_at: expect.any(Number),
    });
    const v2 = await scoresOnceCounted(agent, 2, "max_steps", 1);
    expect(v2.scorers).toEqual({ contains: { mean: 0, pass_rate: 0, count: 1 }, max_steps: { mean: 1, pass_rate: 1, count: 1 } });

    await createAgent({ name: agent, model: "demo:calc", instructions: "Three, unscored." });
    expect((await api("GET", `/v1/agents/${agent}/versions/3/scores`)).body).toEqual({ agent, version: 3, scorers: {}, last_scored_at: null });
    expect((await api("GET", `/v1/agents/${agent}/versions/4/scores`)).status).toBe(404);
    expect((await api("GET", `/v1/agents/none-${suffix()}/versions/1/scores`)).status).toBe(404);
    const bad = await api("GET", `/v1/agents/${agent}/versions/x/scores`);
    expect(bad.status).toBe(422);
    expect(bad.body.error.details[0].path).toBe("version");
  });
});
