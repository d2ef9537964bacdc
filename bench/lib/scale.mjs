// Sessions at scale: listing an index of many sessions with a filter, exporting a large log, and erasing it.
import { now, quantile, terminalAny } from "./client.mjs";
import { memoryOf } from "./procs.mjs";

async function inParallel(n, width, fn) {
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < n) await fn(next++);
    }),
  );
}

async function timed(fn) {
  const t0 = now();
  const value = await fn();
  return { ms: now() - t0, value };
}

export async function scale(stack, cfg, say) {
  const { api } = stack;
  const { sessions, events, pages } = cfg.scale;
  const agent = `bench-scale-${Date.now()}`;
  await api.req("PUT", `/v1/agents/${agent}`, { model: "demo:fast" });

  // The index: `sessions` sessions of one agent, with 50 distinct customers in their metadata.
  const created = await timed(() => inParallel(sessions, 16, (i) => api.req("POST", "/v1/sessions", { agent, metadata: { customer: `c${i % 50}` } })));
  say(`   created ${sessions} sessions in ${(created.ms / 1000).toFixed(1)} s (${Math.round((sessions / created.ms) * 1000)}/s, index rows written by each)`);
  const filtered = [];
  const paged = [];
  let cursor = null;
  let seen = 0;
  for (let i = 0; i < pages; i++) {
    filtered.push((await timed(() => api.req("GET", `/v1/sessions?agent=${agent}&metadata.customer=c${i % 50}&limit=100`))).ms);
    const page = await timed(() => api.req("GET", `/v1/sessions?agent=${agent}&limit=100${cursor ? `&cursor=${cursor}` : ""}`));
    paged.push(page.ms);
    seen += page.value.sessions.length;
    cursor = page.value.next_cursor;
    if (!cursor) cursor = null;
  }
  const list = {
    filtered_ms: { p50: quantile(filtered, 0.5), p99: quantile(filtered, 0.99) },
    paged_ms: { p50: quantile(paged, 0.5), p99: quantile(paged, 0.99) },
    rows_paged: seen,
  };
  say(
    `   list ${sessions} indexed sessions, 100 a page: metadata filter p50 ${list.filtered_ms.p50.toFixed(1)} / p99 ${list.filtered_ms.p99.toFixed(1)} ms; keyset pages p50 ${list.paged_ms.p50.toFixed(1)} / p99 ${list.paged_ms.p99.toFixed(1)} ms`,
  );

  // A large log: turns of 1000 text deltas until `events`, then its export and its erasure.
  const sid = await api.createSession("loop-s0-c0-d1000", 2);
  const live = api.subscribe(sid, await api.lastSequence(sid), {});
  await live.opened;
  let last = 0;
  while (last < events) {
    const done = live.waitFor(terminalAny, 300_000);
    await api.submit(sid);
    last = JSON.parse((await done).s).sequence;
  }
  live.close();
  await stack.settle();
  const pid = stack.rt.userPid;
  const before = memoryOf(pid).rss;
  let peak = before;
  const sampler = setInterval(() => {
    peak = Math.max(peak, memoryOf(pid).rss);
  }, 20);
  const exported = await timed(async () => (await api.exportLog(sid)).lines);
  clearInterval(sampler);
  const erased = await timed(() => fetch(`${api.base}/v1/sessions/${sid}`, { method: "DELETE", headers: api.headers }));
  const out = {
    sessions,
    create_ms: created.ms,
    list,
    export: { events: last, lines: exported.value, ms: exported.ms, events_per_s: (last / exported.ms) * 1000, rss_before: before, rss_peak: peak },
    erase: { events: last, ms: erased.ms, status: erased.value.status },
  };
  say(
    `   export ${last} events: ${(exported.ms / 1000).toFixed(2)} s (${Math.round(out.export.events_per_s)} events/s), workerd RSS ${(before / 2 ** 20).toFixed(0)} -> peak ${(peak / 2 ** 20).toFixed(0)} MiB; erase: ${erased.ms.toFixed(0)} ms (${erased.value.status})`,
  );
  return out;
}

/** Table rows for bench/run.mjs. */
export function scaleRows(r, row, f) {
  row(
    "Session index: list with a metadata filter, 100 a page",
    `${f(r.list.filtered_ms.p50)} / ${f(r.list.filtered_ms.p99)} ms`,
    `${r.sessions} indexed sessions`,
  );
  row("Session index: keyset pages of 100", `${f(r.list.paged_ms.p50)} / ${f(r.list.paged_ms.p99)} ms`, `${r.list.rows_paged} rows fetched`);
  row(
    "Export (NDJSON)",
    `${f(r.export.ms)} ms`,
    `${r.export.events} events; workerd RSS ${f(r.export.rss_before / 2 ** 20)} -> peak ${f(r.export.rss_peak / 2 ** 20)} MiB`,
  );
  row("Erase (DELETE)", `${f(r.erase.ms)} ms`, `a session of ${r.erase.events} events`);
}
