// The bench's way into the index shards (bench/index-scale.mjs): seeding many sessions at once through the
// shards' batch import (the path rows take when the index moves), single-row upserts as sessions write them,
// and filtered pages through the same fan-out and merge as GET /v1/sessions.

import type { Env } from "../../src/env";
import type { IndexRows } from "../../src/objects/index/index-shard-tables";
import { type IndexLayout, indexShard, listAcross, shardAt, shardOf } from "../../src/objects/index/index-shards";
import type { SessionListQuery, SessionSummary, UsageDay } from "../../src/protocol/session-list";
import { ThreadStatusSchema } from "../../src/protocol/views";

export { IndexShardObject } from "../../src/objects/index/index-shard";

const AGENTS = 10;
const OWNERS = 1000;
const STATUSES: SessionSummary["status"][] = ["idle", "idle", "idle", "running", "waiting_permission"];

/** Session `i` of the bench's data set: the same for every run and layout. */
function session(i: number): { row: SessionSummary; days: UsageDay[] } {
  const created_at = 1_770_000_000_000 + i * 37;
  const row: SessionSummary = {
    session_id: `ses_${i.toString(16).padStart(24, "0")}`,
    agent: `agent-${i % AGENTS}`,
    agent_version: 1 + (i % 3),
    owner: `user-${(i * 7919) % OWNERS}`,
    metadata: { tier: String(i % 3), customer: `c-${i % 97}` },
    created_at,
    last_activity: created_at + 60_000,
    status: STATUSES[i % STATUSES.length]!,
    turns: 1 + (i % 9),
    input_tokens: 1000 + (i % 5000),
    output_tokens: 200 + (i % 700),
    cost_usd: (i % 100) / 1000,
    unpriced_model_calls: 0,
    log_events: 10 + (i % 400),
    stored_bytes: (i % 50) * 1024,
  };
  const day = new Date(created_at).toISOString().slice(0, 10);
  const days = [
    {
      day,
      turns: row.turns,
      failures: 0,
      model_calls: row.turns,
      tool_calls: 1,
      input_tokens: row.input_tokens,
      cached_input_tokens: 0,
      output_tokens: row.output_tokens,
      cost_usd: row.cost_usd,
      unpriced_model_calls: 0,
    },
  ];
  return { row, days };
}

const summaryRow = (s: SessionSummary) => ({ ...s, metadata: JSON.stringify(s.metadata) });

async function seed(env: Env, layout: IndexLayout, from: number, to: number): Promise<void> {
  const parts = new Map<number, IndexRows>();
  for (let i = from; i < to; i++) {
    const { row, days } = session(i);
    const shard = shardOf(row.session_id, layout.shards);
    if (!parts.has(shard)) parts.set(shard, { session_index: [], usage_days: [], erased_sessions: [] });
    const part = parts.get(shard)!;
    part.session_index.push(summaryRow(row));
    for (const d of days) part.usage_days.push({ session_id: row.session_id, agent: row.agent, owner: row.owner, ...d });
  }
  // One shard at a time: many large imports in flight at once stalled local workerd.
  for (const [i, rows] of parts) await shardAt(env, layout, i).importRows(rows);
}

/** `n` single-session upserts (sessions from..from+n), `concurrency` at a time, as turn ends write them. */
async function upserts(env: Env, layout: IndexLayout, from: number, n: number, concurrency: number): Promise<number> {
  let next = from;
  const t0 = performance.now();
  const worker = async () => {
    while (next < from + n) {
      const { row, days } = session(next++);
      await indexShard(env, row.session_id, layout).indexSession({ ...row, log_events: row.log_events + 1 }, days, row.agent);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return performance.now() - t0;
}

export default {
  async fetch(request: Request, env: Env): Promise<Response> {
    const url = new URL(request.url);
    const q = url.searchParams;
    const num = (name: string, fallback: number) => Number(q.get(name) ?? fallback);
    const layout: IndexLayout = { prefix: q.get("prefix") ?? "bench", shards: num("shards", 1) };
    if (url.pathname === "/healthz") return new Response("ok");
    if (url.pathname === "/seed") {
      await seed(env, layout, num("from", 0), num("to", 1000));
      return Response.json({ ok: true });
    }
    if (url.pathname === "/upsert") {
      const ms = await upserts(env, layout, num("from", 0), num("n", 1000), num("concurrency", 32));
      return Response.json({ ms });
    }
    if (url.pathname === "/list") {
      const query: SessionListQuery = { metadata: [], limit: num("limit", 20) + 1 };
      for (const k of ["agent", "owner"] as const) if (q.has(k)) query[k] = q.get(k)!;
      if (q.has("status")) query.status = ThreadStatusSchema.parse(q.get("status"));
      for (const [k, v] of q) if (k.startsWith("metadata.")) query.metadata.push([k.slice(9), v]);
      return Response.json({ rows: (await listAcross(env, layout, query)).length });
    }
    return new Response("not found", { status: 404 });
  },
};
