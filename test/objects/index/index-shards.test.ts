// The session index split over shards, through the public surface: lists, cursors, filters and usage
// the same over 1 and 16 shards, erasure with tombstones in each session's shard, the index converging after a
// shard failed or held its writes, the registry's index from before sharding moving over, and the agent cache.
import { env, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it, onTestFinished, vi } from "vitest";
import { type IndexLayout, indexShard, shardOf } from "../../../src/objects/index/index-shards";
import type { SessionSummary, UsageDay } from "../../../src/protocol/session-list";
import { type ApiResponse, api, createAgent, submitTurn, waitForEvent, waitForTurnEnd } from "../../support/api";
import { until } from "../../support/chat-client";
import { script, uniqueId } from "../../support/fake-model";
import { prng } from "../../support/prng";

const registry = () => env.REGISTRY.get(env.REGISTRY.idFromName("registry"));
const shard = (sid: string) => indexShard(env, sid);
const unique = (prefix: string) => `${prefix}-${crypto.randomUUID().slice(0, 8)}`;
const userMessage = (text: string) => ({ id: crypto.randomUUID(), role: "user", parts: [{ type: "text", text }] });

async function open(agent: string): Promise<string> {
  const res = await api("POST", "/v1/sessions", { agent });
  expect(res.status).toBe(201);
  return res.body.session_id;
}

async function indexed(sid: string, check: (row: any) => boolean): Promise<any> {
  let row: any = null;
  await until(async () => check((row = await shard(sid).indexedSession(sid))), `the index row of ${sid}`, 15_000);
  return row;
}

const DAYS = ["2026-03-01", "2026-03-02", "2026-03-03"];
const BASE_TIME = Date.parse("2026-03-01T00:00:00Z");

/** Sessions with colliding creation times (keyset ties), random owners, statuses, metadata and usage. */
function seededSessions(n: number, seed: number, agents: string[]): { row: SessionSummary; days: UsageDay[] }[] {
  const r = prng(seed);
  const pick = <T>(xs: T[]) => xs[Math.floor(r() * xs.length)]!;
  const int = (max: number) => Math.floor(r() * max);
  return Array.from({ length: n }, () => {
    const created_at = BASE_TIME + int(60) * 1000;
    const days = DAYS.filter(() => r() < 0.6).map((day) => ({
      day,
      turns: int(5),
      failures: int(2),
      model_calls: int(9),
      tool_calls: int(4),
      input_tokens: int(5000),
      cached_input_tokens: int(2000),
      output_tokens: int(900),
      cost_usd: r() * 0.05,
      unpriced_model_calls: int(2),
    }));
    const row: SessionSummary = {
      session_id: `ses_${Array.from({ length: 24 }, () => int(16).toString(16)).join("")}`,
      agent: pick(agents),
      agent_version: null,
      owner: pick([null, "o1", "o2"]),
      metadata: { tier: 1 + int(3), team: pick(["x", "y"]) },
      created_at,
      last_activity: created_at + int(100) * 1000,
      status: pick(["idle", "running", "waiting_permission"]),
      turns: int(6),
      input_tokens: int(10_000),
      output_tokens: int(2000),
      cost_usd: r() * 0.1,
      unpriced_model_calls: int(3),
      log_events: 1 + int(200),
      stored_bytes: int(5000),
    };
    return { row, days };
  });
}

/** Every page of a query, following next_cursor. */
async function allPages(layout: IndexLayout, query: string): Promise<{ ids: string[]; next_cursor: string | null }[]> {
  const headers = { "x-test-index-layout": `${layout.prefix}:${layout.shards}` };
  const pages = [];
  let cursor: string | null = null;
  do {
    const res: ApiResponse = await api("GET", `/v1/sessions?${query}${cursor ? `&cursor=${cursor}` : ""}`, undefined, headers);
    expect(res.status, query).toBe(200);
    pages.push({ ids: (res.body.sessions as SessionSummary[]).map((s) => s.session_id), next_cursor: res.body.next_cursor });
    cursor = res.body.next_cursor;
  } while (cursor);
  return pages;
}

describe("the index over 1 and over 16 shards", () => {
  it("lists the same pages and cursors for every filter, and the same usage, as the rows themselves say", async () => {
    const prefix = unique("seed").toLowerCase();
    const one: IndexLayout = { prefix, shards: 1 };
    const sixteen: IndexLayout = { prefix, shards: 16 };
    const agents = ["ag-a", "ag-b", "ag-c"];
    const sessions = seededSessions(240, 37, agents);
    for (const layout of [one, sixteen]) {
      await Promise.all(sessions.map(({ row, days }) => indexShard(env, row.session_id, layout).indexSession(row, days, row.agent)));
    }
    expect(new Set(sessions.map(({ row }) => shardOf(row.session_id, 16))).size).toBe(16);

    const t = (s: number) => BASE_TIME + s * 1000;
    const queries: [string, (s: SessionSummary) => boolean][] = [
      ["limit=7", () => true],
      ["limit=1&agent=ag-a&status=idle", (s) => s.agent === "ag-a" && s.status === "idle"],
      ["limit=13&owner=o1", (s) => s.owner === "o1"],
      ["limit=5&metadata.tier=2&metadata.team=y", (s) => s.metadata.tier === 2 && s.metadata.team === "y"],
      [`limit=9&created_after=${t(30)}`, (s) => s.created_at > t(30)],
      [`limit=4&active_after=${new Date(t(80)).toISOString()}&agent=ag-c`, (s) => s.last_activity > t(80) && s.agent === "ag-c"],
      ["limit=100", () => true],
    ];
    const newestFirst = (a: SessionSummary, b: SessionSummary) => b.created_at - a.created_at || (a.session_id < b.session_id ? 1 : -1);
    for (const [query, match] of queries) {
      const pagesOfOne = await allPages(one, query);
      expect(await allPages(sixteen, query), query).toEqual(pagesOfOne);
      const expected = sessions
        .map((s) => s.row)
        .filter(match)
        .sort(newestFirst)
        .map((s) => s.session_id);
      expect(
        pagesOfOne.flatMap((p) => p.ids),
        query,
      ).toEqual(expected);
    }

    const usage = async (layout: IndexLayout, query: string) =>
      (await api("GET", `/v1/usage?to=${DAYS[2]}&${query}`, undefined, { "x-test-index-layout": `${layout.prefix}:${layout.shards}` })).body;
    const usageQueries = ["group_by=agent", "group_by=owner", "group_by=day", "group_by=day&agent=ag-b", "group_by=agent&owner=o2", "group_by=owner"];
    for (const query of usageQueries.map((q, i) => `${q}&from=${DAYS[i % 2]}`)) {
      const ofOne = await usage(one, query);
      expect(ofOne, query).toMatchObject({ rows: expect.arrayContaining([expect.anything()]) });
      expect(await usage(sixteen, query), query).toEqual(ofOne);
    }
    const turnsOf = (agent: string) =>
      sessions
        .filter(({ row }) => row.agent === agent)
        .flatMap(({ days }) => days)
        .reduce((n, d) => n + d.turns, 0);
    expect((await usage(sixteen, `group_by=agent&from=${DAYS[0]}`)).rows.map((r: any) => [r.key, r.turns])).toEqual(agents.map((a) => [a, turnsOf(a)]));
    // 480 rows into 17 shards and every page of 14 listings: CPU-bound, so slower when other files share the cores.
  }, 60_000);
});

describe("erasure across shards", () => {
  it("each erased session's tombstone is in its own shard; the list keeps the others; its chat id stays erased", async () => {
    const agent = unique("erase-shards");
    await createAgent({ name: agent, model: "demo:fast" });
    const sids: string[] = [];
    for (let i = 0; i < 8; i++) sids.push(await open(agent));
    for (const sid of sids) await indexed(sid, (r) => r !== null);
    expect(new Set(sids.map((s) => shardOf(s, 16))).size).toBeGreaterThan(1);
    const [gone, kept] = [sids.filter((_, i) => i % 2 === 0), sids.filter((_, i) => i % 2 === 1)];
    for (const sid of gone) expect((await api("DELETE", `/v1/sessions/${sid}`)).status).toBe(204);
    for (const sid of gone) {
      expect(await shard(sid).isErased(sid)).toBe(true);
      expect(await shard(sid).indexedSession(sid)).toBeNull();
      const elsewhere = (shardOf(sid, 16) + 1) % 16;
      expect(await env.INDEX.get(env.INDEX.idFromName(`index:16:${elsewhere}`)).isErased(sid)).toBe(false);
      expect((await api("DELETE", `/v1/sessions/${sid}`)).status).toBe(204);
    }
    const listed = (await api("GET", `/v1/sessions?agent=${agent}`)).body.sessions.map((s: any) => s.session_id);
    expect(listed).toEqual([...kept].reverse());

    const chatId = unique("chat");
    const chat = { id: chatId, messages: [userMessage("hi")], trigger: "submit-message", agent };
    expect((await api("POST", "/v1/chat", chat)).status).toBe(200);
    const chatSid = (await api("GET", `/v1/sessions?agent=${agent}&limit=100`)).body.sessions.find((s: any) => s.metadata.chat_id === chatId)?.session_id;
    expect(chatSid).toMatch(/^ses_/);
    expect((await api("DELETE", `/v1/sessions/${chatSid}`)).status).toBe(204);
    const again = await api("POST", "/v1/chat", { ...chat, messages: [userMessage("again")] });
    expect(again.status).toBe(404);
    expect(again.body.error.message).toContain("was erased");
  });
});

describe("a shard that fails or is slow", () => {
  it("a shard failing its writes for a while: the turn ends, and the index converges from the session's alarm", async () => {
    const agent = unique("converge");
    const scriptId = uniqueId("converge");
    await script(scriptId, [{ tool_calls: [{ id: "c1", name: "calculator", arguments: { expression: "1 + 1" } }] }, { text: "2" }]);
    await createAgent({ name: agent, model: `openai-compatible:${scriptId}`, tools: ["calculator"], hitl_tools: ["calculator"] });
    const sid = await open(agent);
    const { turn_id } = await submitTurn(sid, "add");
    const { action_id } = await waitForEvent(sid, (e) => e.type === "action.required");
    await indexed(sid, (r) => r?.status === "waiting_permission");
    // From here to the turn's end takes one tool call and one model call: its writes (running again, then its end) fail.
    await shard(sid).failIndexWrites(2);
    // Each failure is logged, as in production: captured and asserted here rather than printed.
    const errors = vi.spyOn(console, "error").mockImplementation(() => {});
    onTestFinished(() => errors.mockRestore());
    expect((await api("POST", `/v1/sessions/${sid}/actions/${action_id}`, { decision: "approve" })).status).toBe(200);
    await waitForTurnEnd(sid, turn_id);
    expect(((await shard(sid).indexedSession(sid)) as SessionSummary | null)?.turns).toBe(0);
    // A retry from the alarm (1 s, then 5 s after a failure) lands.
    const row = await indexed(sid, (r) => r?.turns === 1);
    expect(row).toMatchObject({ session_id: sid, agent, status: "idle" });
    expect(errors.mock.calls.map((c) => String(c[0]))).toEqual(Array(2).fill("session index write failed; retrying from the alarm"));
  });

  it("a shard holding its writes: turns still end, and the row catches up once the shard answers", async () => {
    const agent = unique("slow-shard");
    await createAgent({ name: agent, model: "demo:fast" });
    const sid = await open(agent);
    await indexed(sid, (r) => r !== null);
    await shard(sid).holdIndexWrites();
    try {
      for (const input of ["one", "two"]) {
        const { turn_id } = await submitTurn(sid, input);
        await waitForTurnEnd(sid, turn_id);
      }
      expect(((await shard(sid).indexedSession(sid)) as SessionSummary | null)?.turns).toBe(0);
    } finally {
      await shard(sid).releaseIndexWrites();
    }
    await indexed(sid, (r) => r?.turns === 2);
  });
});

describe("the registry's index from before sharding", () => {
  it("moves to the shards from the registry's alarm, and lists and erases as any other row", async () => {
    const agent = unique("legacy");
    const sid = `ses_${crypto.randomUUID().replaceAll("-", "").slice(0, 24)}`;
    const erased = `ses_${crypto.randomUUID().replaceAll("-", "").slice(0, 24)}`;
    await runInDurableObject(registry(), async (_o, state) => {
      state.storage.sql.exec(
        `INSERT INTO session_index (session_id, agent, owner, metadata, created_at, last_activity, status, turns, input_tokens, output_tokens, cost_usd, unpriced_model_calls, log_events)
         VALUES (?, ?, NULL, '{"old":true}', 1000, 2000, 'idle', 3, 10, 5, 0.25, 0, 12)`,
        sid,
        agent,
      );
      state.storage.sql.exec(
        "INSERT INTO usage_days (session_id, day, agent, owner, turns, failures, model_calls, tool_calls, input_tokens, output_tokens, cost_usd, unpriced_model_calls) VALUES (?, '2026-02-01', ?, NULL, 3, 0, 3, 0, 10, 5, 0.25, 0)",
        sid,
        agent,
      );
      state.storage.sql.exec("INSERT INTO erased_sessions (session_id, erased_at) VALUES (?, 1)", erased);
      // As the registry does when it starts with such rows.
      await state.storage.setAlarm(Date.now() + 60_000);
    });
    while (await runDurableObjectAlarm(registry())) {
      // one batch per alarm
    }
    const listed = (await api("GET", `/v1/sessions?agent=${agent}`)).body.sessions;
    expect(listed).toEqual([expect.objectContaining({ session_id: sid, metadata: { old: true }, turns: 3 })]);
    const usage = (await api("GET", `/v1/usage?from=2026-02-01&to=2026-02-01&agent=${agent}`)).body.rows;
    expect(usage).toEqual([expect.objectContaining({ key: agent, turns: 3, cost_usd: 0.25 })]);
    expect(await shard(erased).isErased(erased)).toBe(true);
    const left = await runInDurableObject(registry(), (_o, state) => state.storage.sql.exec("SELECT count(*) AS n FROM session_index").one().n);
    expect(left).toBe(0);
  });
});

describe("the agent cache", () => {
  it("sessions and chats of one agent read its config from the registry once; a PUT is seen at once", async () => {
    const agent = unique("cached");
    await createAgent({ name: agent, model: "demo:fast", instructions: "first" });
    const before = await registry().readsOf(agent);
    await open(agent);
    await open(agent);
    for (let i = 0; i < 2; i++) {
      expect((await api("POST", "/v1/chat", { id: unique("chat"), messages: [userMessage("hi")], trigger: "submit-message", agent })).status).toBe(200);
    }
    expect((await api("POST", "/v1/tokens", { subject: "u", agent, ttl_s: 60 })).status).toBe(201);
    expect((await registry().readsOf(agent)) - before).toBe(1);

    await createAgent({ name: agent, model: "demo:fast", instructions: "second" });
    const sid = await open(agent);
    expect((await api("GET", `/v1/sessions/${sid}`)).body.agent).toMatchObject({ instructions: "second" });
  });
});
