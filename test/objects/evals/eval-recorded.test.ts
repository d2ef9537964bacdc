// Eval runs over recorded traffic: earlier sessions' completed turns, found through the session index, each
// replayed against a candidate version with the recorded answer expected; bad filters refused. And forks and
// replays that record the agent version they run. Through HTTP with the scripted fake model.
import { describe, expect, it } from "vitest";
import { api, createAgent, createSession, events, expectRefused, submitTurn, waitForTurnEnd } from "../../support/api";
import { suffix, waitForRun } from "../../support/evals";
import { requests, script, uniqueId } from "../../support/fake-model";

/** Polls the session index until `n` sessions of the agent have ended a turn each. */
async function indexed(agent: string, n: number): Promise<void> {
  for (let i = 0; ; i++) {
    const rows = (await api("GET", `/v1/sessions?agent=${agent}&limit=100`)).body.sessions;
    if (rows.filter((r: any) => r.turns >= 1).length >= n) return;
    if (i > 200) throw new Error(`the index never listed ${n} sessions of ${agent}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe("eval runs of recorded turns", () => {
  it("replay each recorded turn against the candidate version, the recorded answer expected", async () => {
    const agent = `rec-${suffix()}`;
    const scriptId = uniqueId("eval-recorded");
    // Three recorded turns of version 1, then the candidate's three answers (one at a time: concurrency 1).
    await script(scriptId, [
      { text: "The answer is 1." },
      { text: "The answer is 2." },
      { text: "The answer is 3." },
      { text: "The answer is 1." },
      { text: "The answer is 2." },
      { text: "Three." },
    ]);
    const model = `openai-compatible:${scriptId}`;
    await createAgent({ name: agent, model, instructions: "Version one." });
    const recorded: { sid: string; turn_id: string; input: string }[] = [];
    for (const i of [1, 2, 3]) {
      const sid = await createSession(agent);
      const input = `What is ${i - 1} + 1?`;
      const { turn_id } = await submitTurn(sid, input);
      await waitForTurnEnd(sid, turn_id);
      recorded.push({ sid, turn_id, input });
    }
    await indexed(agent, 3);
    await createAgent({ name: agent, model, instructions: "Version two." });

    const started = await api("POST", "/v1/evals", {
      agent,
      version: 2,
      recorded: { filter: { version: 1, limit: 10 } },
      scorers: [{ type: "exact" }],
      concurrency: 1,
    });
    expect(started.status, JSON.stringify(started.body)).toBe(202);
    expect(started.body).toMatchObject({ version: 2, dataset: null, recorded: { version: 1, limit: 10 }, progress: { total: 3 } });
    const run = await waitForRun(started.body.id);
    expect(run.aggregates).toEqual({ exact: { mean: 0.3333, pass_rate: 0.3333, count: 3 } });

    // Newest turn first; each case a replay session of its recorded turn running version 2.
    const cases = (await api("GET", `/v1/evals/${run.id}/cases`)).body.cases;
    expect(cases.map((c: any) => [c.input, c.expected, c.output])).toEqual([
      ["What is 2 + 1?", "The answer is 3.", "The answer is 1."],
      ["What is 1 + 1?", "The answer is 2.", "The answer is 2."],
      ["What is 0 + 1?", "The answer is 1.", "Three."],
    ]);
    for (const [i, c] of cases.entries()) {
      const source = recorded[2 - i]!;
      const log = await events(c.session_id);
      expect(log[0]).toMatchObject({ type: "session.forked", payload: { from_session: source.sid } });
      expect(log.find((e) => e.type === "session.created").payload).toMatchObject({ agent, version: 2, metadata: { eval_run_id: run.id, eval_case: i } });
      expect((await api("GET", `/v1/replays/${c.session_id}`)).body).toMatchObject({ source_session: source.sid, source_turn_id: source.turn_id });
    }
    const sent = await requests(scriptId);
    expect(sent).toHaveLength(6);
    expect(sent.slice(3).every((r: any) => r.messages[0].content === "Version two.")).toBe(true);

    // The cases' sessions are no recorded traffic: a second run finds the same three turns.
    const again = await api("POST", "/v1/evals", { agent, recorded: { filter: { limit: 100 } }, scorers: [{ type: "exact" }] });
    expect(again.body.progress.total).toBe(3);
    await api("POST", `/v1/evals/${again.body.id}/cancel`);
  });

  it("refuse bad filters, and a filter that matches nothing, with 422 naming the field", async () => {
    const agent = `none-${suffix()}`;
    await createAgent({ name: agent, model: "demo:echo" });
    const scorers = [{ type: "exact" }];
    const post = (body: Record<string, unknown>, field: string) => expectRefused("POST", "/v1/evals", field, { agent, scorers, ...body });
    await post({ recorded: { filter: { limit: 10 } } }, "recorded.filter");
    await post({ recorded: { filter: { limit: 0 } } }, "recorded.filter.limit");
    await post({ recorded: { filter: {} } }, "recorded.filter.limit");
    await post({ recorded: { filter: { limit: 5, since: "yesterday" } } }, "recorded.filter.since");
    await post({ recorded: { filter: { limit: 5, since: 2000, until: 1000 } } }, "recorded.filter.until");
    await post({ recorded: { filter: { limit: 5, version: 0 } } }, "recorded.filter.version");
    await post({ recorded: { filter: { limit: 5, colour: "red" } } }, "recorded.filter.colour");
    await post({}, "dataset");
    await post({ dataset: { name: "x" }, recorded: { filter: { limit: 5 } } }, "recorded");
    expect((await api("GET", `/v1/evals?agent=${agent}`)).body.runs).toEqual([]);
  });
});

describe("forks and replays", () => {
  it("record the agent version they run: the source's, or none for another config", async () => {
    const agent = `ver-${suffix()}`;
    await createAgent({ name: agent, model: "demo:echo" });
    await createAgent({ name: agent, model: "demo:echo", instructions: "Two." });
    const sid = (await api("POST", "/v1/sessions", { agent: `${agent}@1` })).body.session_id;
    const { turn_id } = await submitTurn(sid, "hello");
    await waitForTurnEnd(sid, turn_id);
    const created = (log: any[]) => log.find((e) => e.type === "session.created").payload;

    const fork = await api("POST", `/v1/sessions/${sid}/fork`, { at_sequence: 1 });
    expect(fork.status, JSON.stringify(fork.body)).toBe(201);
    expect(created(await events(fork.body.session_id))).toMatchObject({ agent, version: 1 });
    expect((await api("GET", `/v1/sessions/${fork.body.session_id}`)).body.agent_version).toBe(1);

    const replay = await api("POST", `/v1/sessions/${sid}/turns/${turn_id}/replay`, {});
    expect(replay.status, JSON.stringify(replay.body)).toBe(201);
    await waitForTurnEnd(replay.body.exec_id, replay.body.turn_id);
    expect(created(await events(replay.body.exec_id))).toMatchObject({ agent, version: 1 });

    const changed = await api("POST", `/v1/sessions/${sid}/turns/${turn_id}/replay`, { agent: { instructions: "Other." } });
    expect(created(await events(changed.body.exec_id)).version).toBeUndefined();
  });
});
