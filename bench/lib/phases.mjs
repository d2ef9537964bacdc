// The measurements. Each phase takes the stack (stack.mjs), the configuration and a `say` line sink, and
// returns a JSON-able result. Times are client-side (performance.now) unless named server_*, which come
// from event timestamps (Date.now inside workerd, millisecond resolution).
import { spawn, spawnSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { Api, isType, median, now, quantile, summary, terminalAny } from "./client.mjs";
import { heapAfterGc, startProfile } from "./cpuprofile.mjs";
import { e2e } from "./e2e.mjs";
import { long } from "./long-run.mjs";
import { memoryOf } from "./procs.mjs";
import { protocols } from "./protocols.mjs";
import { scale } from "./scale.mjs";
import { sessionDbDir } from "./session-db.mjs";
import { cpuDiff } from "./stack.mjs";
import { splitTurn } from "./timeline.mjs";

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const loopModel = (steps, calls, deltas) => `loop-s${steps}-c${calls}-d${deltas}`;

/** A fresh session with a WebSocket already open on it; run() submits one turn and times it. */
async function preparedTurn(stack, model, maxSteps, { deflate }) {
  const { api } = stack;
  const sid = await api.createSession(model, maxSteps);
  const sub = api.subscribe(sid, await api.lastSequence(sid), { keep: true, deflate });
  await sub.opened;
  return {
    sid,
    async run() {
      const done = sub.waitFor(terminalAny);
      const c0 = stack.cpu();
      const t0 = now();
      const { turn_id } = await api.submit(sid);
      const { t, s } = await done;
      const cpu = cpuDiff(c0, stack.cpu());
      sub.close();
      const end = JSON.parse(s);
      if (end.type !== "turn.completed") throw new Error(`turn ended ${end.type}: ${s.slice(0, 300)}`);
      const submitted = JSON.parse(sub.frames[0].s);
      return { sid, turn_id, ms: t - t0, server_ms: end.timestamp - submitted.timestamp, count: sub.count, cpu };
    },
  };
}

async function runtimeTurn(stack, model, maxSteps, opts) {
  return (await preparedTurn(stack, model, maxSteps, opts)).run();
}

async function baselineRun(stack, model, steps, mode) {
  const c0 = stack.cpu();
  const t0 = now();
  const res = await fetch(`${stack.blBase}/run`, { method: "POST", body: JSON.stringify({ model, steps, mode }) });
  const j = await res.json();
  const ms = now() - t0;
  if (res.status !== 200) throw new Error(`baseline ${res.status}: ${JSON.stringify(j)}`);
  return { ms, server_ms: j.ms, steps: j.steps, tool_calls: j.tool_calls, deltas: j.deltas, cpu: cpuDiff(c0, stack.cpu()) };
}

function addCpu(acc, d) {
  if (!acc) return { ...d };
  for (const k of Object.keys(d)) acc[k] += d[k];
  return acc;
}
const perRun = (acc, n) => Object.fromEntries(Object.entries(acc ?? {}).map(([k, v]) => [k, v / n]));

export const PHASES = {
  e2e,
  long,
  scale,
  protocols,
  /** Loop overhead: the same turn through the runtime and in a plain AI SDK loop, interleaved. */
  async loop(stack, cfg, say) {
    const { steps, calls, deltas, runs, textDeltas, textRuns } = cfg.loop;
    const model = loopModel(steps, calls, deltas);
    const modelCalls = steps + 1;
    const deflate = cfg.deflate;
    const sides = {
      runtime: async () => (await preparedTurn(stack, model, modelCalls, { deflate })).run(),
      generateText: () => baselineRun(stack, model, modelCalls, "generate"),
      streamText: () => baselineRun(stack, model, modelCalls, "stream"),
    };
    for (let i = 0; i < cfg.warmup; i++) for (const f of Object.values(sides)) await f();
    const names = Object.keys(sides);
    const ms = Object.fromEntries(names.map((n) => [n, []]));
    const serverMs = Object.fromEntries(names.map((n) => [n, []]));
    const cpu = {};
    const runtimeSessions = [];
    let events = 0;
    for (let i = 0; i < runs; i++) {
      // Rotate the order so that no side always runs first, or always right after another.
      for (let j = 0; j < names.length; j++) {
        const name = names[(i + j) % names.length];
        const r = await sides[name]();
        ms[name].push(r.ms);
        serverMs[name].push(r.server_ms);
        cpu[name] = addCpu(cpu[name], r.cpu);
        if (name === "runtime") {
          runtimeSessions.push(r.sid);
          events = r.count;
        } else if (r.steps !== modelCalls || r.tool_calls !== steps * calls) {
          throw new Error(`baseline made ${r.steps} steps and ${r.tool_calls} tool calls`);
        }
      }
    }
    // Time splits of the runtime's turns, from their events.
    const splits = [];
    for (const sid of runtimeSessions.slice(-Math.min(10, runtimeSessions.length))) splits.push(splitTurn(await stack.api.events(sid)));
    const split = Object.fromEntries(Object.keys(splits[0]).map((k) => [k, median(splits.map((s) => s[k]))]));

    // A text-heavy turn: one model call streaming many deltas (each one event), runtime vs streamText.
    const textModel = loopModel(0, 0, textDeltas);
    const text = { runtime: [], streamText: [] };
    const textCpu = {};
    await sides.runtime();
    await baselineRun(stack, textModel, 1, "stream");
    for (let i = 0; i < textRuns; i++) {
      const r = await (await preparedTurn(stack, textModel, 1, { deflate })).run();
      text.runtime.push(r.ms);
      textCpu.runtime = addCpu(textCpu.runtime, r.cpu);
      const b = await baselineRun(stack, textModel, 1, "stream");
      if (b.deltas !== textDeltas) throw new Error(`baseline streamed ${b.deltas} deltas`);
      text.streamText.push(b.ms);
      textCpu.streamText = addCpu(textCpu.streamText, b.cpu);
    }
    const out = {
      model,
      model_calls_per_turn: modelCalls,
      tool_calls_per_turn: steps * calls,
      runs,
      events_per_turn: events,
      runtime: { ...summary(ms.runtime), ms_per_step: median(ms.runtime) / modelCalls, server_ms_per_step: median(serverMs.runtime) / modelCalls },
      generateText: {
        ...summary(ms.generateText),
        ms_per_step: median(ms.generateText) / modelCalls,
        server_ms_per_step: median(serverMs.generateText) / modelCalls,
      },
      streamText: { ...summary(ms.streamText), ms_per_step: median(ms.streamText) / modelCalls, server_ms_per_step: median(serverMs.streamText) / modelCalls },
      ratio_runtime_vs_generateText: median(ms.runtime) / median(ms.generateText),
      ratio_runtime_vs_streamText: median(ms.runtime) / median(ms.streamText),
      median_pairwise_ratio_vs_generateText: median(ms.runtime.map((x, i) => x / ms.generateText[i])),
      cpu_ms_per_turn: Object.fromEntries(names.map((n) => [n, perRun(cpu[n], runs)])),
      runtime_split_ms: split,
      text_turn: {
        model: textModel,
        deltas: textDeltas,
        runs: textRuns,
        runtime_ms: median(text.runtime),
        streamText_ms: median(text.streamText),
        runtime_ms_per_delta: median(text.runtime) / textDeltas,
        streamText_ms_per_delta: median(text.streamText) / textDeltas,
        ratio: median(text.runtime) / median(text.streamText),
        cpu_ms_per_turn: { runtime: perRun(textCpu.runtime, textRuns), streamText: perRun(textCpu.streamText, textRuns) },
        samples: text,
      },
      samples: ms,
    };
    stack.loopSession = runtimeSessions[runtimeSessions.length - 1];
    say(
      `   tool loop: runtime ${out.runtime.ms_per_step.toFixed(2)} ms/step, generateText ${out.generateText.ms_per_step.toFixed(2)}, streamText ${out.streamText.ms_per_step.toFixed(2)}; ratio ${out.ratio_runtime_vs_generateText.toFixed(2)}x (vs streamText ${out.ratio_runtime_vs_streamText.toFixed(2)}x)`,
    );
    say(
      `   runtime turn split (server): model calls ${split.model_calls} ms, tool phases ${split.tool_phases} ms, other ${split.other} ms of ${split.total} ms`,
    );
    say(
      `   text turn (${textDeltas} deltas): runtime ${out.text_turn.runtime_ms.toFixed(0)} ms (${(out.text_turn.runtime_ms_per_delta * 1000).toFixed(0)} µs/delta), streamText ${out.text_turn.streamText_ms.toFixed(0)} ms (${(out.text_turn.streamText_ms_per_delta * 1000).toFixed(0)} µs/delta)`,
    );
    return out;
  },

  /** Time to the first event (and first model.delta, and turn.completed) after POST .../turns, on an open WebSocket. */
  async latency(stack, cfg, say) {
    const { api } = stack;
    const model = loopModel(0, 0, cfg.latency.deltas);
    const sid = await api.createSession(model, 11);
    const sub = api.subscribe(sid, await api.lastSequence(sid), { deflate: cfg.deflate });
    await sub.opened;
    const acc = { http_202: [], first_event: [], first_delta: [], completed: [], server_submitted_to_completed: [] };
    for (let i = 0; i < cfg.warmup + cfg.latency.turns; i++) {
      const first = sub.waitFor(() => true);
      const delta = sub.waitFor(isType("model.delta"));
      const term = sub.waitFor(terminalAny);
      const t0 = now();
      await api.submit(sid);
      const t202 = now();
      const [f, d, e] = await Promise.all([first, delta, term]);
      if (i < cfg.warmup) continue;
      acc.http_202.push(t202 - t0);
      acc.first_event.push(f.t - t0);
      acc.first_delta.push(d.t - t0);
      acc.completed.push(e.t - t0);
      acc.server_submitted_to_completed.push(JSON.parse(e.s).timestamp - JSON.parse(f.s).timestamp);
    }
    sub.close();
    const out = { model, turns: cfg.latency.turns, ...Object.fromEntries(Object.entries(acc).map(([k, v]) => [k, summary(v)])) };
    say(
      `   first event p50 ${out.first_event.p50.toFixed(2)} ms, p99 ${out.first_event.p99.toFixed(2)} ms; first delta p50 ${out.first_delta.p50.toFixed(2)} ms; turn.completed p50 ${out.completed.p50.toFixed(2)} ms, p99 ${out.completed.p99.toFixed(2)} ms`,
    );
    return out;
  },

  /** Bytes of event log per step; workerd memory and the isolate heap after many turns in one session. */
  async footprint(stack, cfg, say) {
    const { api } = stack;
    const out = {};
    const { steps, calls, deltas } = cfg.loop;
    const modelCalls = steps + 1;
    const sid = stack.loopSession ?? (await runtimeTurn(stack, loopModel(steps, calls, deltas), modelCalls, { deflate: cfg.deflate })).sid;
    const events = (await api.events(sid)).filter((e) => e.turn_id);
    const byType = {};
    for (const e of events) {
      const b = Buffer.byteLength(JSON.stringify(e));
      byType[e.type] ??= { count: 0, bytes: 0 };
      byType[e.type].count += 1;
      byType[e.type].bytes += b;
    }
    const total = Object.values(byType).reduce((n, t) => n + t.bytes, 0);
    const toolStep = ["model.requested", "model.completed", "cost.recorded", "tool.started", "tool.result"].reduce((n, t) => n + (byType[t]?.bytes ?? 0), 0);
    const n = (t) => byType[t]?.count ?? 0;
    // Write transactions of this turn, from the code path: one per TurnPorts.emit (model.completed and
    // cost.recorded share one; the tool phase ends with an emit of no events that checkpoints), plus submit,
    // start and finish. model.delta events are batched and do not rewrite the checkpoint: a batch is a run
    // of deltas with one timestamp, and a run that goes into the transaction of the event after it (same
    // timestamp) is not a transaction of its own. So the delta count is an estimate from the timestamps.
    const tx = {
      "turn.submitted": 1,
      "turn.started + tool.catalog.resolved": 1,
      "model.requested": n("model.requested"),
      "model.delta": deltaBatches(events),
      "model.completed + cost.recorded": n("model.completed"),
      "tool.started": n("tool.started"),
      "tool.result": n("tool.result"),
      "end of tool phase (no event)": steps,
      "turn.completed (finish)": 1,
    };
    const txTotal = Object.values(tx).reduce((a, b) => a + b, 0);
    const checkpoints = txTotal - 2 - tx["model.delta"];
    out.event_log = {
      turn: loopModel(steps, calls, deltas),
      events: events.length,
      bytes: total,
      bytes_per_step: total / modelCalls,
      bytes_per_tool_step: toolStep / steps,
      by_type: byType,
      transactions_per_turn: txTotal,
      transactions_per_step: txTotal / modelCalls,
      checkpoint_rewrites_per_turn: checkpoints,
      transactions: tx,
    };
    say(
      `   event log: ${events.length} events, ${total} B per turn = ${Math.round(total / modelCalls)} B/step; ${txTotal} write transactions per turn (${checkpoints} rewrite the checkpoint)`,
    );

    // The same tool-loop turn, again and again in one session: each turn's prompt carries the history.
    const H = cfg.footprint.historyTurns;
    const hsid = await api.createSession(loopModel(steps, calls, deltas), modelCalls);
    const hsub = api.subscribe(hsid, await api.lastSequence(hsid), { deflate: cfg.deflate });
    await hsub.opened;
    const hist = [];
    for (let i = 0; i < H; i++) {
      await stack.settle({ quietMs: 150, maxMs: 3000 });
      const done = hsub.waitFor(terminalAny);
      const c0 = stack.cpu();
      const t0 = now();
      await api.submit(hsid);
      const { t } = await done;
      hist.push({ turn: i + 1, ms: t - t0, workerd_cpu_ms: cpuDiff(c0, stack.cpu()).runtime_workerd });
    }
    hsub.close();
    out.history_growth = {
      model: loopModel(steps, calls, deltas),
      turns: hist,
      first_ms: hist[0]?.ms,
      last_ms: hist[hist.length - 1]?.ms,
      first_cpu_ms: hist[0]?.workerd_cpu_ms,
      last_cpu_ms: hist[hist.length - 1]?.workerd_cpu_ms,
      ms_per_prior_turn: H > 1 ? (hist[H - 1].ms - hist[0].ms) / (H - 1) : null,
    };
    say(
      `   the same tool-loop turn ${H} times in one session: ${hist.map((h) => h.ms.toFixed(0)).join(", ")} ms (workerd CPU ${hist.map((h) => h.workerd_cpu_ms.toFixed(0)).join(", ")} ms)`,
    );

    // Many turns in one session.
    const T = cfg.footprint.turns;
    const model = loopModel(0, 0, 5);
    const doDir = sessionDbDir(stack);
    const filesBefore = new Set(existsSync(doDir) ? readdirSync(doDir) : []);
    const fsid = await api.createSession(model, 11);
    const sub = api.subscribe(fsid, await api.lastSequence(fsid), { deflate: cfg.deflate });
    await sub.opened;
    const turn = async () => {
      const done = sub.waitFor(terminalAny);
      const t0 = now();
      await api.submit(fsid);
      const { t, s } = await done;
      if (!s.includes('"type":"turn.completed"')) throw new Error(`turn ended: ${s.slice(0, 200)}`);
      return t - t0;
    };
    await turn();
    const insp = stack.inspectors.runtime;
    const heap0 = insp ? await heapAfterGc(insp).catch(() => null) : null;
    await sleep(300);
    const rss0 = stack.rt.userPid ? memoryOf(stack.rt.userPid) : null;
    const lat = [];
    const c0 = stack.cpu();
    for (let i = 0; i < T; i++) lat.push(await turn());
    const cpu = cpuDiff(c0, stack.cpu(), T);
    sub.close();
    const rss1 = stack.rt.userPid ? memoryOf(stack.rt.userPid) : null;
    const heap1 = insp ? await heapAfterGc(insp).catch(() => null) : null;
    await sleep(1000);
    const rss2 = stack.rt.userPid ? memoryOf(stack.rt.userPid) : null;
    const last = await api.lastSequence(fsid);
    const newFiles = existsSync(doDir) ? readdirSync(doDir).filter((f) => !filesBefore.has(f)) : [];
    const dbBytes = newFiles.reduce((s, f) => s + (f.endsWith("-shm") ? 0 : statSync(join(doDir, f)).size), 0);
    const win = Math.max(1, Math.min(50, Math.floor(T / 5)));
    const snap = await api.req("GET", `/v1/sessions/${fsid}`);
    out.many_turns = {
      turns: T,
      model,
      events: last,
      rss_before: rss0?.rss ?? null,
      rss_after: rss1?.rss ?? null,
      rss_after_1s: rss2?.rss ?? null,
      rss_growth: rss0 && rss2 ? rss2.rss - rss0.rss : null,
      hwm_after: rss1?.hwm ?? null,
      js_heap_before: heap0?.usedSize ?? null,
      js_heap_after: heap1?.usedSize ?? null,
      js_heap_growth: heap0 && heap1 ? heap1.usedSize - heap0.usedSize : null,
      js_heap_growth_per_turn: heap0 && heap1 ? (heap1.usedSize - heap0.usedSize) / T : null,
      sqlite_files: newFiles,
      sqlite_bytes: dbBytes,
      sqlite_bytes_per_event: dbBytes / last,
      turn_ms_first: median(lat.slice(0, win)),
      turn_ms_last: median(lat.slice(-win)),
      window: win,
      snapshot_bytes: Buffer.byteLength(JSON.stringify(snap)),
      cpu_ms_per_turn: cpu,
    };
    const mb = (b) => (b === null || b === undefined ? "-" : (b / 1048576).toFixed(1));
    say(
      `   ${T} turns in one session: workerd RSS ${mb(rss0?.rss)} -> ${mb(rss2?.rss)} MiB, isolate heap ${mb(heap0?.usedSize)} -> ${mb(heap1?.usedSize)} MiB; SQLite ${mb(dbBytes)} MiB for ${last} events; turn ${out.many_turns.turn_ms_first.toFixed(1)} ms (first ${win}) -> ${out.many_turns.turn_ms_last.toFixed(1)} ms (last ${win})`,
    );
    return out;
  },

  /** One session streaming a turn of many deltas to K WebSocket clients. */
  async fanout(stack, cfg, say) {
    const { api } = stack;
    const model = loopModel(0, 0, cfg.fanout.deltas);
    const sid = await api.createSession(model, 11);
    const out = { model, per_clients: {} };
    const serverMs = async (turnId) => {
      const snap = await api.req("GET", `/v1/sessions/${sid}`);
      const t = snap.turns.find((x) => x.turn_id === turnId);
      return t.ended_at - t.submitted_at;
    };
    for (const k of [0, ...cfg.fanout.clients.filter((c) => c > 0)]) {
      const after = await api.lastSequence(sid);
      const subs = Array.from({ length: k }, () => api.subscribe(sid, after, { deflate: cfg.deflate }));
      await Promise.all(subs.map((s) => s.opened));
      const rows = [];
      for (let r = 0; r < cfg.fanout.runs + 1; r++) {
        await stack.settle({ quietMs: 200, maxMs: 5000 });
        const before = subs.map((s) => s.count);
        const waits = subs.map((s) => s.waitFor(terminalAny, 300_000));
        const c0 = stack.cpu();
        const t0 = now();
        const { turn_id } = await api.submit(sid);
        let tEnd;
        if (k === 0) {
          // No subscriber: poll the read model (every 10 ms) until the turn has ended.
          for (;;) {
            const th = await api.req("GET", `/v1/sessions/${sid}/thread`);
            if (th.status === "idle" && th.last_outcome?.turn_id === turn_id) break;
            await sleep(10);
          }
          tEnd = now();
        } else {
          const ends = await Promise.all(waits);
          tEnd = Math.max(...ends.map((e) => e.t));
        }
        const cpu = cpuDiff(c0, stack.cpu());
        const delivered = subs.reduce((s, sub, i) => s + sub.count - before[i], 0);
        const ms = tEnd - t0;
        if (r === 0) continue; // a warm-up turn for each number of clients
        rows.push({
          ms,
          delivered,
          events_per_s: (delivered / ms) * 1000,
          server_turn_ms: await serverMs(turn_id),
          workerd_cpu_ms: cpu.runtime_workerd,
          client_cpu_ms: cpu.client,
        });
      }
      for (const s of subs) s.close();
      await sleep(300);
      const m = (f) => median(rows.map(f));
      out.per_clients[k] = {
        clients: k,
        events_per_turn: k > 0 ? rows[0].delivered / k : null,
        ms: m((r) => r.ms),
        events_per_s: m((r) => r.events_per_s),
        server_turn_ms: m((r) => r.server_turn_ms),
        workerd_cpu_ms: m((r) => r.workerd_cpu_ms),
        client_cpu_ms: m((r) => r.client_cpu_ms),
        runs: rows,
      };
      const v = out.per_clients[k];
      say(
        `   ${k} clients: ${k > 0 ? `${Math.round(v.events_per_s)} events/s delivered, ` : ""}turn ${v.ms.toFixed(0)} ms (server ${v.server_turn_ms} ms), workerd CPU ${v.workerd_cpu_ms} ms, client CPU ${v.client_cpu_ms.toFixed(0)} ms`,
      );
    }
    return out;
  },

  /** N sessions each running a turn at the same moment. */
  async concurrency(stack, cfg, say) {
    const { api } = stack;
    const { sessions, rounds, steps, calls } = cfg.concurrency;
    const model = loopModel(steps, calls, 5);
    const sids = [];
    for (let i = 0; i < sessions; i++) sids.push(await api.createSession(model, steps + 1));
    const subs = [];
    for (const sid of sids) subs.push(api.subscribe(sid, await api.lastSequence(sid), { deflate: cfg.deflate }));
    await Promise.all(subs.map((s) => s.opened));
    const solo = [];
    for (let i = 0; i < 3; i++) solo.push((await runtimeTurn(stack, model, steps + 1, { deflate: cfg.deflate })).ms);
    const latencies = [];
    const perRound = [];
    for (let r = 0; r < rounds; r++) {
      await stack.settle({ quietMs: 200, maxMs: 5000 });
      const waits = subs.map((s) => s.waitFor(terminalAny, 600_000));
      const starts = new Array(sessions);
      const c0 = stack.cpu();
      await Promise.all(
        sids.map(async (sid, i) => {
          starts[i] = now();
          await api.submit(sid);
        }),
      );
      const ends = await Promise.all(waits);
      const cpu = cpuDiff(c0, stack.cpu());
      const lat = ends.map((e, i) => e.t - starts[i]);
      latencies.push(...lat);
      const span = Math.max(...ends.map((e) => e.t)) - Math.min(...starts);
      perRound.push({
        span_ms: span,
        turns_per_s: (sessions / span) * 1000,
        failed: ends.filter((e) => !e.s.includes('"type":"turn.completed"')).length,
        p50: quantile(lat, 0.5),
        p99: quantile(lat, 0.99),
        cpu_ms: cpu,
        workerd_busy: cpu.runtime_workerd / span,
      });
    }
    for (const s of subs) s.close();
    const first = perRound[0];
    const out = {
      sessions,
      rounds,
      model,
      // Round 1 runs on fresh sessions; each later round has one more turn of history in every session.
      turns_per_s: first.turns_per_s,
      latency_ms: { p50: first.p50, p99: first.p99 },
      workerd_cpu_ms_per_turn: first.cpu_ms.runtime_workerd / sessions,
      workerd_busy: first.workerd_busy,
      all_rounds: {
        turns_per_s: perRound.map((r) => r.turns_per_s),
        workerd_cpu_ms_per_turn: perRound.map((r) => r.cpu_ms.runtime_workerd / sessions),
        latency_ms: summary(latencies),
      },
      solo_turn_ms: median(solo),
      failed: perRound.reduce((s, r) => s + r.failed, 0),
      rounds_detail: perRound,
    };
    say(
      `   round 1 (fresh sessions): ${out.turns_per_s.toFixed(1)} turns/s, latency p50 ${out.latency_ms.p50.toFixed(0)} ms, p99 ${out.latency_ms.p99.toFixed(0)} ms (alone ${out.solo_turn_ms.toFixed(0)} ms); workerd ${Math.round(out.workerd_busy * 100)}% of a core busy, ${out.workerd_cpu_ms_per_turn.toFixed(0)} ms CPU per turn`,
    );
    if (rounds > 1)
      say(
        `   later rounds (one more turn of history each): ${out.all_rounds.turns_per_s.map((x) => x.toFixed(1)).join(", ")} turns/s; ${out.all_rounds.workerd_cpu_ms_per_turn.map((x) => x.toFixed(0)).join(", ")} ms CPU per turn`,
      );
    return out;
  },

  /** Replay from cursor 0 over WebSocket and SSE, on a log built from turns of many small text deltas. */
  async replay(stack, cfg, say) {
    const { api } = stack;
    const counts = [...cfg.replay.counts].sort((a, b) => a - b);
    const target = counts[counts.length - 1];
    const model = loopModel(0, 0, cfg.replay.deltasPerTurn);
    const sid = await api.createSession(model, 11);
    let last = await api.lastSequence(sid);
    const live = api.subscribe(sid, last, { deflate: cfg.deflate });
    await live.opened;
    const b0 = now();
    const c0 = stack.cpu();
    const first = last;
    let turns = 0;
    while (last < target) {
      const done = live.waitFor(terminalAny, 300_000);
      await api.submit(sid);
      last = JSON.parse((await done).s).sequence;
      turns += 1;
    }
    const buildMs = now() - b0;
    const buildCpu = cpuDiff(c0, stack.cpu());
    live.close();
    const built = last - first;
    say(
      `   built ${last} events in ${turns} turns: ${(buildMs / 1000).toFixed(1)} s, ${Math.round((built / buildMs) * 1000)} events/s appended and streamed live`,
    );

    // ws_batch: the WebSocket with frames=batch (a replay page of 256 events to a frame).
    const TRANSPORTS = ["ws", "sse", "ws_batch"];
    const byTransport = (f) => Object.fromEntries(TRANSPORTS.map((t) => [t, f(t)]));
    const res = byTransport(() => Object.fromEntries(counts.map((n) => [n, []])));
    const cpuPer = byTransport(() => []);
    const firstMs = byTransport(() => []);
    const idleAfter = byTransport(() => []);
    const wsReplay = async (deflate, batch = false) => {
      const t0 = now();
      const sub = api.subscribe(sid, 0, { deflate, batch });
      const marks = counts.map((n) => sub.waitCount(n));
      const f = sub.waitCount(1);
      const ts = await Promise.all(marks);
      const out = { marks: ts.map((t) => t - t0), first_ms: (await f) - t0, extensions: sub.extensions };
      sub.close();
      return out;
    };
    await stack.settle();
    for (let r = 0; r < cfg.replay.runs; r++) {
      for (const transport of [...TRANSPORTS.slice(r % 3), ...TRANSPORTS.slice(0, r % 3)]) {
        const c1 = stack.cpu();
        const { marks, first_ms } = transport === "sse" ? await api.sseReplay(sid, 0, counts) : await wsReplay(cfg.deflate, transport === "ws_batch");
        const t1 = now();
        idleAfter[transport].push(await stack.settle());
        const cpu = cpuDiff(c1, stack.cpu());
        for (const [i, n] of counts.entries()) res[transport][n].push(marks[i]);
        firstMs[transport].push(first_ms);
        cpuPer[transport].push({
          workerd_us_per_event: (cpu.runtime_workerd * 1000) / target,
          client_us_per_event: (cpu.client * 1000) / target,
          settle_ms: now() - t1,
        });
      }
    }
    // The same WebSocket replay with permessage-deflate negotiated (what browsers offer), smallest count.
    const n0 = counts[0];
    const c2 = stack.cpu();
    const deflated = await (async () => {
      const t0 = now();
      const sub = api.subscribe(sid, 0, { deflate: !cfg.deflate });
      const t = await sub.waitCount(n0);
      const ext = sub.extensions;
      sub.close();
      return { ms: t - t0, extensions: ext };
    })();
    await stack.settle();
    const c3 = cpuDiff(c2, stack.cpu());
    const row = (xs, n) => ({ ...summary(xs), events_per_s: (n / median(xs)) * 1000 });
    const out = {
      log_events: last,
      deltas_per_turn: cfg.replay.deltasPerTurn,
      build: {
        turns,
        events: built,
        ms: buildMs,
        events_per_s: (built / buildMs) * 1000,
        cpu_ms: buildCpu,
        workerd_cpu_us_per_event: (buildCpu.runtime_workerd * 1000) / built,
      },
      ...byTransport((t) => Object.fromEntries(counts.map((n) => [n, row(res[t][n], n)]))),
      first_event_ms: byTransport((t) => summary(firstMs[t])),
      cpu_per_event: byTransport((t) => ({
        workerd_us: median(cpuPer[t].map((c) => c.workerd_us_per_event)),
        client_us: median(cpuPer[t].map((c) => c.client_us_per_event)),
      })),
      idle_after_ms: byTransport((t) => median(idleAfter[t])),
      ws_other_deflate: {
        deflate: !cfg.deflate,
        count: n0,
        ms: deflated.ms,
        extensions: deflated.extensions,
        workerd_us_per_event: (c3.runtime_workerd * 1000) / n0,
        client_us_per_event: (c3.client * 1000) / n0,
      },
    };
    for (const n of counts) {
      say(
        `   ${n} events from 0: WebSocket ${median(res.ws[n]).toFixed(0)} ms, SSE ${median(res.sse[n]).toFixed(0)} ms, WebSocket frames=batch ${median(res.ws_batch[n]).toFixed(0)} ms`,
      );
    }
    say(
      `   workerd CPU per replayed event: WebSocket ${out.cpu_per_event.ws.workerd_us.toFixed(1)} µs, SSE ${out.cpu_per_event.sse.workerd_us.toFixed(1)} µs, frames=batch ${out.cpu_per_event.ws_batch.workerd_us.toFixed(1)} µs; WebSocket with deflate ${out.ws_other_deflate.deflate ? "on" : "off"}: ${deflated.ms.toFixed(0)} ms for ${n0}, ${out.ws_other_deflate.workerd_us_per_event.toFixed(1)} µs workerd CPU/event`,
    );
    return out;
  },

  /** Storage, output-gate and delivery primitives in isolation, in the baseline worker's Micro object. */
  async micro(stack, cfg, say) {
    const { n, runs } = cfg.micro;
    const call = async (body) => {
      const c0 = stack.cpu();
      const res = await fetch(`${stack.blBase}/micro`, { method: "POST", body: JSON.stringify(body) });
      const j = await res.json();
      if (res.status !== 200) throw new Error(JSON.stringify(j));
      return { ...j, cpu_ms: cpuDiff(c0, stack.cpu()).baseline_workerd };
    };
    const yieldN = Math.min(n, 2000);
    const fetchN = Math.min(n, 200);
    const ops = [
      ["one event per transaction, one burst", { op: "tx_per_event", n }],
      ["10 events per transaction, one burst", { op: "tx_batched", n, k: 10 }],
      ["event + checkpoint rewrite per transaction, one burst", { op: "tx_checkpoint", n }],
      ["checkpoint rewrite alone (1.5 KB state)", { op: "checkpoint_only", n }],
      ["checkpoint rewrite alone (15 KB state)", { op: "checkpoint_only", n, state_bytes: 15000 }],
      ["event-loop turn (setTimeout 0) alone", { op: "yield", n: yieldN }],
      ["one event committed per event-loop turn", { op: "write_then_yield", n: yieldN }],
      ["10 events committed per event-loop turn", { op: "batched_then_yield", n: yieldN, k: 10 }],
      ["subrequest (fetch) alone", { op: "fetch", n: fetchN }],
      ["subrequest right after a write", { op: "write_then_fetch", n: fetchN }],
    ];
    const out = { n, storage: {}, websocket: {} };
    await call({ op: "noop", n: 0 });
    for (const [label, body] of ops) {
      const inner = [];
      const cpu = [];
      for (let r = 0; r < runs; r++) {
        const j = await call(body);
        inner.push(j.inner_ms);
        cpu.push(j.cpu_ms);
      }
      out.storage[label] = { ...body, us_per_op: (median(inner) * 1000) / body.n, cpu_us_per_op: (median(cpu) * 1000) / body.n, runs: inner };
    }
    await call({ op: "seed_messages", n: 0, messages: 500 });
    const xs = [];
    for (let r = 0; r < runs; r++) xs.push((await call({ op: "checkpoint_only", n })).inner_ms);
    out.storage["checkpoint rewrite with 500 stored turn messages"] = { op: "checkpoint_only", n, messages: 500, us_per_op: (median(xs) * 1000) / n, runs: xs };
    await call({ op: "seed_messages", n: 0, messages: 0 });
    for (const [label, v] of Object.entries(out.storage))
      say(`   ${label}: ${v.us_per_op.toFixed(1)} µs${v.cpu_us_per_op !== undefined ? ` (workerd CPU ${v.cpu_us_per_op.toFixed(1)} µs)` : ""}`);

    const frames = Math.min(n, 2000);
    for (const k of cfg.micro.clients) {
      const api = new Api(stack.blBase, "none");
      const subs = Array.from({ length: k }, () => api.subscribeRaw(`${stack.blBase.replace(/^http/, "ws")}/micro/ws`, cfg.deflate));
      await Promise.all(subs.map((s) => s.opened));
      const row = {};
      for (const op of ["ws_send", "ws_send_restringify"]) {
        const inner = [];
        const rate = [];
        for (let r = 0; r < runs; r++) {
          const targets = subs.map((s) => s.waitCount(s.count + frames));
          const t0 = now();
          const j = await call({ op, n: frames });
          const ends = await Promise.all(targets);
          inner.push(j.inner_ms);
          rate.push(((frames * k) / (Math.max(...ends) - t0)) * 1000);
        }
        row[op] = { us_per_frame_per_socket: (median(inner) * 1000) / (frames * k), delivered_per_s: median(rate) };
      }
      out.websocket[k] = row;
      for (const s of subs) s.close();
      await sleep(300);
      say(
        `   ws.send to ${k} sockets: ${row.ws_send.us_per_frame_per_socket.toFixed(2)} µs per frame per socket (serialized again per socket: ${row.ws_send_restringify.us_per_frame_per_socket.toFixed(2)} µs), ${Math.round(row.ws_send.delivered_per_s)} frames/s delivered`,
      );
    }
    return out;
  },

  /**
   * Where the CPU goes: JavaScript CPU profiles (through the inspector) of the runtime's tool-loop turn and
   * text turn beside the baseline's streamText loop, summed per module; and, when strace is available,
   * the system calls of the runtime's workerd per turn (SQLite WAL writes and fsyncs).
   */
  async profile(stack, cfg, say) {
    const { steps, calls, deltas, textDeltas } = cfg.loop;
    const N = cfg.profile.turns;
    const out = {};
    const toolModel = loopModel(steps, calls, deltas);
    const textModel = loopModel(0, 0, textDeltas);
    const perTurn = (summary, turns) => ({
      total_ms: summary.total_ms / turns,
      busy_ms: summary.busy_ms / turns,
      by_group: summary.by_group.map((g) => ({ name: g.name, ms: g.ms / turns, pct: g.pct })),
      by_function: summary.by_function.slice(0, 25).map((g) => ({ name: g.name, ms: g.ms / turns, pct: g.pct })),
      inclusive: summary.inclusive.map((g) => ({ name: g.name, ms: g.ms / turns, pct: g.pct })),
      inclusive_src: summary.inclusive_src.map((g) => ({ name: g.name, ms: g.ms / turns, pct: g.pct })),
    });
    const runs = [
      ["runtime tool loop", "runtime", async () => (await preparedTurn(stack, toolModel, steps + 1, { deflate: cfg.deflate })).run()],
      ["baseline streamText tool loop", "baseline", () => baselineRun(stack, toolModel, steps + 1, "stream")],
      ["runtime text turn", "runtime", async () => (await preparedTurn(stack, textModel, 1, { deflate: cfg.deflate })).run()],
      ["baseline streamText text turn", "baseline", () => baselineRun(stack, textModel, 1, "stream")],
    ];
    for (const [label, which, fn] of runs) {
      const insp = stack.inspectors[which];
      if (!insp) continue;
      const turns = label.includes("text") ? Math.max(2, Math.round(N / 4)) : N;
      await fn();
      // Sessions are created before profiling starts, so only the turns themselves are profiled.
      const prepared = [];
      if (which === "runtime") {
        for (let i = 0; i < turns; i++)
          prepared.push(
            await preparedTurn(stack, label.includes("text") ? textModel : toolModel, label.includes("text") ? 1 : steps + 1, { deflate: cfg.deflate }),
          );
      }
      await stack.settle({ quietMs: 200, maxMs: 5000 });
      const p = await startProfile(insp, { intervalUs: cfg.profile.intervalUs });
      for (let i = 0; i < turns; i++) {
        if (which === "runtime") await prepared[i].run();
        else await fn();
      }
      const { summary } = await p.stop();
      out[label] = { turns, ...perTurn(summary, turns) };
      const top = out[label].by_group
        .filter((g) => !["(idle)"].includes(g.name))
        .slice(0, 8)
        .map((g) => `${g.name} ${g.ms.toFixed(1)}`)
        .join(", ");
      say(`   ${label}: ${top} (ms per turn)`);
    }
    if (cfg.profile.strace && spawnSync("strace", ["-V"]).status === 0 && stack.rt.userPid) {
      const traced = async (label, model, maxSteps, turns) => {
        const prepared = [];
        for (let i = 0; i < turns; i++) prepared.push(await preparedTurn(stack, model, maxSteps, { deflate: cfg.deflate }));
        const file = join(stack.tmp, `strace-${label.replace(/\W+/g, "-")}.txt`);
        const st = spawn(
          "strace",
          ["-c", "-f", "-e", "trace=pwrite64,pwritev,fsync,fdatasync,writev,write,sendmsg,sendto", "-p", String(stack.rt.userPid), "-o", file],
          { stdio: "ignore" },
        );
        await sleep(1000);
        let events = 0;
        for (const p of prepared) events += (await p.run()).count;
        st.kill("SIGINT");
        await new Promise((r) => st.once("exit", r));
        const counts = {};
        for (const line of existsSync(file) ? readFileSync(file, "utf8").split("\n") : []) {
          const f = line.trim().split(/\s+/);
          if (f.length >= 5 && /^\d+$/.test(f[3]) && /^[a-z_0-9]+$/.test(f[f.length - 1])) counts[f[f.length - 1]] = Number(f[3]);
        }
        return {
          turns,
          events,
          per_turn: Object.fromEntries(Object.entries(counts).map(([k, v]) => [k, v / turns])),
          per_event: Object.fromEntries(Object.entries(counts).map(([k, v]) => [k, v / events])),
        };
      };
      out.syscalls = {
        "tool loop": await traced("tool loop", toolModel, steps + 1, Math.max(2, Math.round(N / 2))),
        "text turn": await traced("text turn", textModel, 1, 2),
      };
      for (const [k, v] of Object.entries(out.syscalls)) {
        say(
          `   syscalls, ${k}: ${Object.entries(v.per_event)
            .map(([s, c]) => `${s} ${c.toFixed(2)}`)
            .join(", ")} per event (${(v.events / v.turns).toFixed(0)} events/turn)`,
        );
      }
    }
    return out;
  },
};

/** Transactions of their own that model.delta events took: the last delta of each run of one timestamp that the next event does not share. */
function deltaBatches(events) {
  return events.filter((e, i) => e.type === "model.delta" && events[i + 1]?.timestamp !== e.timestamp).length;
}
