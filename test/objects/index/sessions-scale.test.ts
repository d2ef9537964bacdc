// Sessions at scale through the public surface: the session index (GET /v1/sessions), erasure (DELETE), export,
// and usage totals (GET /v1/usage). The index's shards, and its convergence after failed writes: index-shards.test.ts.
import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { indexShard } from "../../../src/objects/index/index-shards";
import { buildTree } from "../../../src/views/execution-tree";
import { foldAll } from "../../../src/views/read-model";
import { api, createAgent, events, submitTurn, waitForEvent, waitForTurnEnd } from "../../support/api";
import { until } from "../../support/chat-client";
import { script, uniqueId } from "../../support/fake-model";
import { openWs } from "../../support/ws";

const stub = (sid: string) => env.SESSIONS.get(env.SESSIONS.idFromName(sid));
const shard = (sid: string) => indexShard(env, sid);
const unique = (prefix: string) => `${prefix}-${crypto.randomUUID().slice(0, 8)}`;

async function scriptedAgent(name: string, steps: Parameters<typeof script>[1], extra: Record<string, unknown> = {}): Promise<void> {
  const id = uniqueId(name);
  await script(id, steps);
  await createAgent({ name, model: `openai-compatible:${id}`, ...extra });
}

async function open(agent: string, metadata: Record<string, unknown> = {}): Promise<string> {
  const res = await api("POST", "/v1/sessions", { agent, metadata });
  expect(res.status).toBe(201);
  return res.body.session_id;
}

/** Polls the index until `check` holds for the session's row (or its absence). */
async function indexed(sid: string, check: (row: any) => boolean): Promise<any> {
  let row: any = null;
  await until(async () => check((row = await shard(sid).indexedSession(sid))), `the index row of ${sid}`, 10_000);
  return row;
}

describe("GET /v1/sessions", () => {
  it("lists the index newest first, with filters, metadata, keyset pages and the session's totals", async () => {
    const a = unique("list-a");
    const b = unique("list-b");
    await createAgent({ name: a, model: "demo:fast" });
    await createAgent({ name: b, model: "demo:fast" });
    const s1 = await open(a, { customer: "acme", tier: 1 });
    const s2 = await open(b, { customer: "acme" });
    const s3 = await open(a, { customer: "globex" });
    const { turn_id } = await submitTurn(s1, "hello");
    await waitForTurnEnd(s1, turn_id);
    const row = await indexed(s1, (r) => r?.turns === 1);
    expect(row).toMatchObject({ agent: a, status: "idle", metadata: { customer: "acme", tier: 1 }, owner: null, unpriced_model_calls: 0, cost_usd: 0 });
    expect(row.log_events).toBeGreaterThan(3);
    expect(row.last_activity).toBeGreaterThanOrEqual(row.created_at);

    const ids = async (query: string) => ((await api("GET", `/v1/sessions?${query}`)).body.sessions as any[]).map((s) => s.session_id);
    expect(await ids(`agent=${a}`)).toEqual([s3, s1]);
    expect(await ids(`agent=${a}&metadata.customer=acme`)).toEqual([s1]);
    expect(await ids(`agent=${a}&metadata.tier=1`)).toEqual([s1]);
    expect(await ids(`agent=${b}&metadata.customer=acme`)).toEqual([s2]);
    expect(await ids(`agent=${a}&status=running`)).toEqual([]);

    // One at a time: the cursor carries on where the page ended, and the last page says so.
    const first = (await api("GET", `/v1/sessions?agent=${a}&limit=1`)).body;
    expect(first.sessions.map((s: any) => s.session_id)).toEqual([s3]);
    const second = (await api("GET", `/v1/sessions?agent=${a}&limit=1&cursor=${first.next_cursor}`)).body;
    expect(second.sessions.map((s: any) => s.session_id)).toEqual([s1]);
    expect(second.next_cursor).toBeNull();
  });

  it("a token bound to an agent lists its own subject's sessions of that agent, and no one else's", async () => {
    const agent = unique("tok-list");
    await createAgent({ name: agent, model: "demo:fast" });
    const mint = async (subject: string) => (await api("POST", "/v1/tokens", { subject, agent, ttl_s: 600 })).body.token as string;
    const alice = await mint("alice");
    const viaToken = await api("POST", "/v1/sessions", { agent }, { authorization: `Bearer ${alice}` });
    expect(viaToken.status).toBe(201);
    const other = await open(agent);
    await indexed(other, (r) => r !== null);
    await indexed(viaToken.body.session_id, (r) => r?.owner === "alice");
    const listed = await api("GET", "/v1/sessions", undefined, { authorization: `Bearer ${alice}` });
    expect(listed.body.sessions.map((s: any) => s.session_id)).toEqual([viaToken.body.session_id]);
    expect((await api("GET", "/v1/sessions?owner=bob", undefined, { authorization: `Bearer ${alice}` })).status).toBe(403);
  });

  it("refuses unknown parameters, bad limits, cursors and times with 422 naming the parameter", async () => {
    for (const [query, path] of [
      ["colour=red", "colour"],
      ["limit=0", "limit"],
      ["limit=101", "limit"],
      ["limit=ten", "limit"],
      ["cursor=not-a-cursor", "cursor"],
      ["created_after=yesterday", "created_after"],
      ["active_after=99999999999999999", "active_after"],
      ["metadata.bad%22key=1", 'metadata.bad"key'],
      ["status=bogus", "status"],
      ["agent=", "agent"],
      [`owner=${"o".repeat(201)}`, "owner"],
    ]) {
      const res = await api("GET", `/v1/sessions?${query}`);
      expect(res.status, query).toBe(422);
      expect(res.body.error.details, query).toEqual([expect.objectContaining({ path })]);
    }
  });
});

describe("a session's status in the list", () => {
  it("is running while a turn runs, waiting_permission while it waits for an approval or an answer, and idle after", async () => {
    const agent = unique("status");
    await scriptedAgent(
      agent,
      [
        { hang: true, text: "working", chunk_size: 1000 },
        { tool_calls: [{ id: "c1", name: "calculator", arguments: { expression: "1 + 1" } }] },
        { tool_calls: [{ id: "q1", name: "ask_user", arguments: { question: "Which one?" } }] },
      ],
      { tools: ["calculator", "ask_user"], hitl_tools: ["calculator"] },
    );
    const [running, approving, asking, quiet] = [await open(agent), await open(agent), await open(agent), await open(agent)];
    const { turn_id } = await submitTurn(running, "take your time");
    await waitForEvent(running, (e) => e.type === "model.delta" && e.turn_id === turn_id);
    await submitTurn(approving, "add");
    await waitForEvent(approving, (e) => e.type === "action.required");
    await submitTurn(asking, "ask me");
    await waitForEvent(asking, (e) => e.type === "action.required");

    const ids = async (query: string) => ((await api("GET", `/v1/sessions?agent=${agent}&${query}`)).body.sessions as any[]).map((s) => s.session_id);
    await until(async () => (await ids("status=running")).includes(running), "the running session listed as running", 10_000);
    await until(async () => (await ids("status=waiting_permission")).length === 2, "the waiting sessions listed as waiting", 10_000);
    expect(await ids("status=running")).toEqual([running]);
    expect(await ids("status=waiting_permission")).toEqual([asking, approving]);
    expect(await ids("status=idle")).toEqual([quiet]);
    const rows = (await api("GET", `/v1/sessions?agent=${agent}`)).body.sessions as any[];
    expect(rows.map((r) => [r.session_id, r.status])).toEqual([
      [quiet, "idle"],
      [asking, "waiting_permission"],
      [approving, "waiting_permission"],
      [running, "running"],
    ]);

    await api("POST", `/v1/sessions/${running}/interrupt`);
    await until(async () => (await ids("status=idle")).includes(running), "the interrupted session listed as idle again", 10_000);
    expect(await ids("status=running")).toEqual([]);
    for (const sid of [approving, asking]) await api("POST", `/v1/sessions/${sid}/interrupt`);
  });
});

describe("DELETE /v1/sessions/:sid", () => {
  it("erases storage, R2 objects, the index row and sockets; every route is 404 after, and it is idempotent", async () => {
    const agent = unique("erase");
    const content = "x".repeat(3000);
    await scriptedAgent(agent, [{ tool_calls: [{ id: "w1", name: "workspace_write", arguments: { path: "notes.md", content } }] }, { text: "saved" }], {
      tools: ["workspace_write"],
      budget: { max_tool_result_bytes: 1000 },
    });
    const sid = await open(agent, { user: "u-1" });
    const { turn_id } = await submitTurn(sid, "save it");
    const log = await waitForTurnEnd(sid, turn_id);
    expect(log.find((e) => e.type === "tool.started").refs).toEqual([expect.objectContaining({ kind: "artifact" })]);
    const r2 = async () => (await env.BLOBS.list({ prefix: `sessions/${sid}/` })).objects.map((o) => o.key);
    expect((await r2()).some((k) => k.includes("/workspace/"))).toBe(true);
    expect((await r2()).some((k) => k.includes("/artifacts/"))).toBe(true);
    await indexed(sid, (r) => r?.turns === 1);
    const ws = await openWs(sid, "?after=0");

    const erased = await api("DELETE", `/v1/sessions/${sid}`);
    expect(erased.status).toBe(204);
    await until(() => ws.closed !== null, "the socket to close");
    expect(ws.closed?.code).toBe(4010);
    expect(await r2()).toEqual([]);
    expect(await shard(sid).indexedSession(sid)).toBeNull();
    const tables = await runInDurableObject(stub(sid), (_o, state) =>
      state.storage.sql.exec<{ name: string }>("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE '_cf_%'").toArray(),
    );
    expect(tables).toEqual([]);
    for (const [method, path] of [
      ["GET", `/v1/sessions/${sid}`],
      ["GET", `/v1/sessions/${sid}/thread`],
      ["GET", `/v1/sessions/${sid}/events?after=0`],
      ["GET", `/v1/sessions/${sid}/export`],
      ["GET", `/v1/sessions/${sid}/messages`],
      ["POST", `/v1/sessions/${sid}/turns`],
    ] as const) {
      const res = await api(method, path, method === "POST" ? { input: "again" } : undefined);
      expect(res.status, `${method} ${path}`).toBe(404);
    }
    expect((await api("DELETE", `/v1/sessions/${sid}`)).status).toBe(204);
    expect((await api("DELETE", "/v1/sessions/ses_000000000000000000000000")).status).toBe(404);
    expect(((await api("GET", `/v1/sessions?agent=${agent}`)).body.sessions as any[]).length).toBe(0);
  });

  it("cancels a running turn first", async () => {
    const agent = unique("erase-running");
    await scriptedAgent(agent, [{ hang: true }]);
    const sid = await open(agent);
    await submitTurn(sid, "go");
    await until(async () => (await events(sid)).some((e) => e.type === "model.requested"), "the model call");
    expect((await api("DELETE", `/v1/sessions/${sid}`)).status).toBe(204);
    expect((await api("GET", `/v1/sessions/${sid}/thread`)).status).toBe(404);
  });
});

describe("GET /v1/sessions/:sid/export", () => {
  it("a header line, then the log; the read model and the execution trees rebuilt from it equal the live ones", async () => {
    const agent = unique("export");
    await scriptedAgent(agent, [{ tool_calls: [{ id: "c1", name: "calculator", arguments: { expression: "6 * 7" } }] }, { text: "42" }, { text: "again 42" }]);
    await createAgent({ name: `${agent}-x`, model: "demo:fast" });
    const sid = await open(agent, { case: 7 });
    for (const input of ["compute", "again"]) {
      const { turn_id } = await submitTurn(sid, input);
      await waitForTurnEnd(sid, turn_id);
    }
    const res = await api("GET", `/v1/sessions/${sid}/export`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("application/x-ndjson");
    const [header, ...exported] = (res.body as string)
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(header).toMatchObject({ type: "session.export", session_id: sid, metadata: { case: 7 }, agent: { name: agent }, after: 0 });
    expect(header.artifact_route).toBe(`/v1/sessions/${sid}/artifacts/{artifact_id}`);
    const live = await events(sid);
    expect(exported).toEqual(live);

    const view = foldAll(exported as any);
    const thread = (await api("GET", `/v1/sessions/${sid}/thread`)).body;
    const fields = ["status", "active_turn_id", "queued_turns", "pending_actions", "last_outcome", "last_sequence"] as const;
    expect(Object.fromEntries(fields.map((f) => [f, view[f]]))).toEqual(Object.fromEntries(fields.map((f) => [f, thread[f]])));
    for (const turnId of new Set(exported.filter((e: any) => e.type === "turn.started").map((e: any) => e.turn_id))) {
      const tree = (await api("GET", `/v1/sessions/${sid}/turns/${turnId}/tree`)).body;
      expect(buildTree(exported.filter((e: any) => e.turn_id === turnId) as any)).toEqual(tree);
    }

    const tail = await api("GET", `/v1/sessions/${sid}/export?after=${live.length - 2}`);
    expect(
      (tail.body as string)
        .trim()
        .split("\n")
        .slice(1)
        .map((l) => JSON.parse(l).sequence),
    ).toEqual([live.length - 1, live.length]);
    expect((await api("GET", `/v1/sessions/${sid}/export?after=${live.length + 1}`)).status).toBe(422);
    expect((await api("GET", `/v1/sessions/${sid}/export?after=1e1`)).status).toBe(422);
  });
});

describe("GET /v1/usage", () => {
  it("totals per agent and per day, unpriced models counted apart; bad queries are 422", async () => {
    const priced = unique("usage-demo");
    const unpriced = unique("usage-fake");
    await createAgent({ name: priced, model: "demo:fast" });
    await scriptedAgent(unpriced, [{ text: "one", usage: { prompt_tokens: 11, completion_tokens: 3 } }, { error: { status: 400, message: "no" } }]);
    const s1 = await open(priced);
    const s2 = await open(unpriced);
    for (const [sid, input] of [
      [s1, "hi"],
      [s2, "a"],
      [s2, "b"],
    ] as const) {
      const { turn_id } = await submitTurn(sid, input);
      await waitForTurnEnd(sid, turn_id);
    }
    await indexed(s2, (r) => r?.turns === 2);
    await indexed(s1, (r) => r?.turns === 1);
    // The refused call (a 400) recorded no cost: only calls that answered count.
    const byAgent = (await api("GET", `/v1/usage?group_by=agent&agent=${unpriced}`)).body;
    expect(byAgent.rows).toEqual([
      expect.objectContaining({
        key: unpriced,
        turns: 2,
        failures: 1,
        model_calls: 1,
        input_tokens: 11,
        output_tokens: 3,
        cost_usd: 0,
        unpriced_model_calls: 1,
      }),
    ]);
    const demo = (await api("GET", `/v1/usage?agent=${priced}`)).body.rows[0];
    expect(demo).toMatchObject({ key: priced, turns: 1, failures: 0, unpriced_model_calls: 0, cost_usd: 0 });
    const today = new Date().toISOString().slice(0, 10);
    const byDay = (await api("GET", `/v1/usage?group_by=day&agent=${unpriced}&from=${today}&to=${today}`)).body;
    expect(byDay.rows).toEqual([expect.objectContaining({ key: today, turns: 2 })]);

    for (const [query, path] of [
      ["from=2026-11-20&to=2026-11-10", "from"],
      ["group_by=model", "group_by"],
      ["from=soon", "from"],
      ["size=3", "size"],
      ["owner=", "owner"],
      // Outside the range of a Date, or a year a YYYY-MM-DD day cannot write.
      ["from=99999999999999999", "from"],
      ["to=8640000000000001", "to"],
      ["from=%2B275760-09-13T00:00:00.000Z", "from"],
      ["to=-000001-01-01T00:00:00Z", "to"],
    ]) {
      const res = await api("GET", `/v1/usage?${query}`);
      expect(res.status, query).toBe(422);
      expect(res.body.error.details, query).toEqual([expect.objectContaining({ path })]);
    }
  });
});

describe("max_cost_usd", () => {
  it("ends the turn with budget.exceeded (reason cost) once the tree's calls cost more; usage has the cost", async () => {
    const agent = unique("pricey");
    const id = uniqueId("priced");
    await script(id, [
      { tool_calls: [{ id: "c1", name: "run_subtask", arguments: { title: "Add", instructions: "Compute 1 + 1.", tools: ["calculator"] } }] },
      { text: "2" },
      { text: "never reached" },
    ]);
    await createAgent({ name: agent, model: `openai-compatible:${id}`, tools: ["run_subtask", "calculator"], budget: { max_cost_usd: 0.02, max_depth: 1 } });
    const sid = await open(agent);
    const { turn_id } = await submitTurn(sid, "go");
    const log = await waitForTurnEnd(sid, turn_id);
    // The parent's call (0.015 USD) and the sub-agent's (0.015) together pass 0.02.
    expect(log.find((e) => e.type === "budget.exceeded")?.payload).toEqual({ reason: "cost", limit: 0.02, observed: 0.03 });
    expect(log.at(-1)).toMatchObject({ type: "turn.failed", payload: { error: { code: "budget_exceeded" }, cost_usd: 0.03 } });
    await indexed(sid, (r) => r?.turns === 1);
    const usage = (await api("GET", `/v1/usage?agent=${agent}`)).body.rows[0];
    expect(usage).toMatchObject({ turns: 1, failures: 1, model_calls: 2, cost_usd: 0.03, unpriced_model_calls: 0 });
  });

  it("an agent whose model has no known price cannot set it (422)", async () => {
    const res = await api("PUT", "/v1/agents/no-price", { model: "openai-compatible:mystery-model", budget: { max_cost_usd: 1 } });
    expect(res.status).toBe(422);
    expect(res.body.error.details).toEqual([expect.objectContaining({ path: "budget.max_cost_usd", reason: expect.stringContaining("MODEL_PRICES") })]);
  });
});
