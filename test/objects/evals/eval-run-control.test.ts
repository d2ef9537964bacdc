// Eval runs listed (paged, filtered, newest first) and cancelled, and the deployment's cap on eval cases in
// flight across runs (EVAL_MAX_CONCURRENT_CASES, default 8), shared fairly between the runs that wait, through
// HTTP with the scripted fake model.
import { describe, expect, it } from "vitest";
import { LEASE_POLL_MS } from "../../../src/objects/evals/eval-run-object";
import { api, createAgent, events } from "../../support/api";
import { SUMS, suffix, waitForRun } from "../../support/evals";
import { gateURL, releaseGate, requests, type Step, script, uniqueId, waitForGate } from "../../support/fake-model";

/** An agent whose model answers each call with `step`, `n` times. */
async function scriptedAgent(name: string, step: Step, n: number): Promise<string> {
  const id = uniqueId("eval-control");
  await script(
    id,
    Array.from({ length: n }, () => step),
  );
  await createAgent({ name, model: `openai-compatible:${id}` });
  return id;
}

async function startRun(body: Record<string, unknown>): Promise<string> {
  const res = await api("POST", "/v1/evals", body);
  expect(res.status, JSON.stringify(res.body)).toBe(202);
  return res.body.id;
}

async function until(what: string, check: () => Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  for (const end = Date.now() + timeoutMs; !(await check()); ) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

const scorers = [{ type: "contains", value: "answer" }];

describe("eval runs listed", () => {
  it("newest first, paged with a cursor, filtered by agent and status; bad filters are 422", async () => {
    const [a, b] = [`list-a-${suffix()}`, `list-b-${suffix()}`];
    await scriptedAgent(a, { text: "The answer." }, 6);
    await scriptedAgent(b, { text: "The answer." }, 2);
    const dataset = `d-${suffix()}`;
    await api("PUT", `/v1/datasets/${dataset}`, { items: SUMS.slice(0, 2) });
    const ids: string[] = [];
    for (const agent of [a, a, b, a]) {
      const id = await startRun({ agent, dataset: { name: dataset }, scorers });
      await waitForRun(id);
      ids.push(id);
    }
    const ofA = (await api("GET", `/v1/evals?agent=${a}`)).body;
    expect(ofA.runs.map((r: any) => r.id)).toEqual([ids[3], ids[1], ids[0]]);
    expect(ofA.next_cursor).toBeNull();
    expect(ofA.runs[0]).toMatchObject({ agent: a, status: "completed", progress: { total: 2, done: 2, running: 0 }, aggregates: { contains: { count: 2 } } });

    const first = (await api("GET", `/v1/evals?agent=${a}&limit=2`)).body;
    expect(first.runs.map((r: any) => r.id)).toEqual([ids[3], ids[1]]);
    const second = (await api("GET", `/v1/evals?agent=${a}&limit=2&cursor=${first.next_cursor}`)).body;
    expect(second).toEqual({ runs: [expect.objectContaining({ id: ids[0] })], next_cursor: null });

    const all = (await api("GET", "/v1/evals?status=completed&limit=100")).body.runs.map((r: any) => r.id);
    expect(all.filter((id: string) => ids.includes(id))).toEqual([...ids].reverse());
    expect((await api("GET", `/v1/evals?agent=${a}&status=running`)).body.runs).toEqual([]);

    for (const [query, field] of [
      ["status=done", "status"],
      ["limit=0", "limit"],
      ["limit=abc", "limit"],
      ["cursor=nope", "cursor"],
    ]) {
      const res = await api("GET", `/v1/evals?${query}`);
      expect(res.status, query).toBe(422);
      expect(JSON.stringify(res.body.error.details), query).toContain(field);
    }
  });
});

describe("eval runs cancelled", () => {
  it("start no case more, interrupt the running ones and end cancelled with the results so far; 409 once ended, 404 unknown", async () => {
    const agent = `cancel-${suffix()}`;
    // A quick first answer, then answers of about 4 s each.
    const scriptId = uniqueId("eval-cancel");
    await script(scriptId, [{ text: "The answer." }, ...Array.from({ length: 9 }, () => ({ text: "The answer is slow.", chunk_size: 1, delay_ms: 200 }))]);
    await createAgent({ name: agent, model: `openai-compatible:${scriptId}` });
    const dataset = `d-${suffix()}`;
    await api("PUT", `/v1/datasets/${dataset}`, { items: SUMS });
    const id = await startRun({ agent, dataset: { name: dataset }, scorers, concurrency: 2 });
    await until("one case done and two running", async () => {
      const { progress } = (await api("GET", `/v1/evals/${id}`)).body;
      return progress.done === 1 && progress.running === 2;
    });
    await until("both running cases' model calls", async () => (await requests(scriptId)).length === 3);

    const cancelled = await api("POST", `/v1/evals/${id}/cancel`);
    expect(cancelled.status, JSON.stringify(cancelled.body)).toBe(200);
    expect(cancelled.body).toMatchObject({
      id,
      status: "cancelled",
      progress: { total: 10, done: 1, running: 0 },
      aggregates: { contains: { mean: 1, pass_rate: 1, count: 1 } },
    });
    expect(cancelled.body.finished_at).toBeGreaterThan(0);

    const cases = (await api("GET", `/v1/evals/${id}/cases`)).body.cases;
    // Whichever of the first two cases asked the model first got the quick answer and is done.
    const done = cases.filter((c: any) => c.status === "done");
    expect(done).toHaveLength(1);
    expect(done[0].scores).toEqual([{ scorer: "contains", score: 1, pass: true, reason: 'the output contains "answer"' }]);
    // The two cases in flight had their turns interrupted; no other case opened a session.
    const cut = cases.filter((c: any) => c.status === "cancelled" && c.session_id !== null);
    expect(cut).toHaveLength(2);
    for (const c of cut) {
      expect(c.scores).toEqual([]);
      await until(`the interrupted turn of ${c.session_id}`, async () => (await events(c.session_id)).some((e) => e.type === "turn.cancelled"));
    }
    expect(cases.filter((c: any) => c.status === "cancelled" && c.session_id === null)).toHaveLength(7);
    await new Promise((r) => setTimeout(r, 500));
    expect(await requests(scriptId)).toHaveLength(3);
    expect((await api("GET", `/v1/evals/${id}`)).body).toMatchObject({ status: "cancelled", progress: { done: 1, running: 0 } });
    expect((await api("GET", `/v1/evals?agent=${agent}&status=cancelled`)).body.runs.map((r: any) => r.id)).toEqual([id]);

    const again = await api("POST", `/v1/evals/${id}/cancel`);
    expect(again.status).toBe(409);
    expect(again.body.error).toMatchObject({ code: "conflict", details: { status: "cancelled" } });
    expect(again.body.error.message).toContain("cancelled");

    const quick = `quick-${suffix()}`;
    await scriptedAgent(quick, { text: "The answer." }, 2);
    const small = `d-${suffix()}`;
    await api("PUT", `/v1/datasets/${small}`, { items: SUMS.slice(0, 2) });
    const finished = await waitForRun(await startRun({ agent: quick, dataset: { name: small }, scorers }));
    const late = await api("POST", `/v1/evals/${finished.id}/cancel`);
    expect(late.status).toBe(409);
    expect(late.body.error).toMatchObject({ code: "conflict", details: { status: "completed" } });
    expect(late.body.error.message).toContain("completed");

    expect((await api("POST", "/v1/evals/evr_0123456789abcdef01234567/cancel")).status).toBe(404);
    expect((await api("POST", "/v1/evals/nope/cancel")).status).toBe(404);
  });
});

describe("eval cases in flight across runs", () => {
  it("are shared round-robin between runs that wait: a small run started while a big one holds every lease finishes while the big one has cases left", async () => {
    // The big run's cases call a webhook tool held at a gate: the test decides when they end.
    const gate = uniqueId("lease-gate");
    const hold: Step = { tool_calls: [{ name: "hold", arguments: {} }] };
    const bigModel = uniqueId("eval-big");
    // Eight cases held; their answers; then the cases that take the leases next are held again.
    await script(bigModel, [
      ...Array.from({ length: 8 }, () => hold),
      ...Array.from({ length: 8 }, () => ({ text: "The answer." })),
      ...Array.from({ length: 8 }, () => hold),
      ...Array.from({ length: 40 }, () => ({ text: "The answer." })),
    ]);
    const [big, small] = [`big-${suffix()}`, `small-${suffix()}`];
    const tool = { name: "hold", description: "waits", url: gateURL(gate), parameters: { type: "object", properties: {} } };
    await createAgent({ name: big, model: `openai-compatible:${bigModel}`, http_tools: [tool] });
    await scriptedAgent(small, { text: "The answer." }, 4);
    const [bigData, smallData] = [`d-${suffix()}`, `d-${suffix()}`];
    await api("PUT", `/v1/datasets/${bigData}`, { items: [...SUMS, ...SUMS.map((s) => ({ ...s, metadata: { i: s.metadata.i + 10 } }))] });
    await api("PUT", `/v1/datasets/${smallData}`, { items: SUMS.slice(0, 4) });
    const first = await startRun({ agent: big, dataset: { name: bigData }, scorers, concurrency: 8 });
    await waitForGate(gate, (g) => g.held === 8, "the big run's first 8 cases did not reach the gate");
    const second = await startRun({ agent: small, dataset: { name: smallData }, scorers, concurrency: 8 });
    await new Promise((r) => setTimeout(r, 300)); // the small run has asked for leases and waits
    expect((await api("GET", `/v1/evals/${second}`)).body.progress).toMatchObject({ done: 0, running: 0 });

    // The big run's 8 cases end. The leases they give back go to the run holding fewer first (first come, first
    // served would give them all back to the big run, whose next cases are held at the gate again).
    expect((await releaseGate(gate, { ok: true })).delivered).toBe(8);
    const smallRun = await waitForRun(second);
    expect(smallRun.aggregates.contains.count).toBe(4);
    // The registry woke the small run as soon as the leases were free for it: its first case started long before
    // the run would have asked again by itself (LEASE_POLL_MS after its first ask, which found no lease).
    const starts = await Promise.all(
      (await api("GET", `/v1/evals/${second}/cases`)).body.cases.map(
        async (c: any) => (await events(c.session_id)).find((e) => e.type === "turn.started")!.timestamp,
      ),
    );
    expect(Math.min(...starts) - smallRun.created_at).toBeLessThan(LEASE_POLL_MS);
    const bigNow = (await api("GET", `/v1/evals/${first}`)).body;
    expect(bigNow.status).toBe("running");
    expect(bigNow.progress.done).toBe(8);

    // Released until the big run is done: every case runs once.
    for (let i = 0; (await api("GET", `/v1/evals/${first}`)).body.status === "running"; i++) {
      if (i > 300) throw new Error("the big run did not finish");
      await releaseGate(gate, { ok: true });
      await new Promise((r) => setTimeout(r, 50));
    }
    const bigRun = await waitForRun(first);
    expect(bigRun.progress).toMatchObject({ total: 20, done: 20 });
  });

  it("never exceed the deployment's cap (8) when two runs of concurrency 8 start together", async () => {
    const agent = `cap-${suffix()}`;
    await scriptedAgent(agent, { text: "The answer is slow.", chunk_size: 1, delay_ms: 15 }, 20);
    const dataset = `d-${suffix()}`;
    await api("PUT", `/v1/datasets/${dataset}`, { items: SUMS });
    const ids = await Promise.all([0, 1].map(() => startRun({ agent, dataset: { name: dataset }, scorers, concurrency: 8 })));
    const runs = await Promise.all(ids.map((id) => waitForRun(id, 30_000)));
    expect(runs.map((r) => r.aggregates.contains)).toEqual([
      { mean: 1, pass_rate: 1, count: 10 },
      { mean: 1, pass_rate: 1, count: 10 },
    ]);

    // From the case sessions' own clocks (polling the two runs one after the other would add a stale count to a
    // fresh one): never more than 8 turns at a time.
    const spans: { at: number; delta: number }[] = [];
    for (const id of ids) {
      for (const c of (await api("GET", `/v1/evals/${id}/cases`)).body.cases) {
        const log = await events(c.session_id);
        const start = log.find((e) => e.type === "turn.started")!.timestamp;
        const end = log.find((e) => e.type === "turn.completed")!.timestamp;
        spans.push({ at: start, delta: 1 }, { at: end, delta: -1 });
      }
    }
    // Ends before starts at the same instant: a lease is given back after its turn ended.
    spans.sort((x, y) => x.at - y.at || x.delta - y.delta);
    let now = 0;
    let peak = 0;
    for (const s of spans) {
      now += s.delta;
      peak = Math.max(peak, now);
    }
    expect(peak).toBeLessThanOrEqual(8);
    expect(peak).toBeGreaterThan(1);
  });
});
