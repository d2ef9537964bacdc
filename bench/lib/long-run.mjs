// The long-run phase (BENCH_PHASES=long): one turn of many tool steps (long-turn.mjs) and one
// session of many turns (long-session.mjs), each reported next to its goal. Its sessions are erased at the
// end, so the phases after it do not run beside a log of 100,000 events.
import { longSession } from "./long-session.mjs";
import { longTurn } from "./long-turn.mjs";

/** The long-run goals, as the bench reads them (docs/performance.md says why these thresholds). */
export const LONG_GOALS = {
  /** The runtime's own time (and workerd CPU) a step at step N, against step 10. */
  step_ratio: 1.2,
  /** "Well under" the platform's 128 MB for an isolate: half of it. */
  heap_bytes: 64 * 2 ** 20,
  /** "Independent of the log's length": the p50 at the longest log within this factor of a 1k-event session's, timed alternately. */
  length_ratio: 1.5,
};

function goals(out) {
  const g = {};
  const t = out.turn;
  if (t && !t.error)
    g.step_cost = {
      own_ratio: t.own_ratio,
      cpu_ratio: t.cpu_ratio,
      goal: LONG_GOALS.step_ratio,
      met: t.own_ratio <= LONG_GOALS.step_ratio && t.cpu_ratio <= LONG_GOALS.step_ratio,
    };
  const s = out.session;
  if (s && !s.error) {
    const heap = s.points[s.points.length - 1].memory.heap_used;
    g.memory = { events: s.events, heap_used: heap, goal_bytes: LONG_GOALS.heap_bytes, met: heap === null ? null : heap < LONG_GOALS.heap_bytes };
    g.length_independent = { ratios: s.ratios, goal: LONG_GOALS.length_ratio, met: Object.values(s.ratios).every((r) => r <= LONG_GOALS.length_ratio) };
  }
  return g;
}

export async function long(stack, cfg, say) {
  const out = {};
  const sessions = [];
  for (const [name, run] of [
    ["turn", longTurn],
    ["session", longSession],
  ]) {
    try {
      out[name] = await run(stack, cfg, say, sessions);
    } catch (err) {
      say(`   long ${name} failed: ${err?.message ?? err}`);
      out[name] = { error: String(err?.message ?? err) };
    }
  }
  for (const sid of sessions) await fetch(`${stack.api.base}/v1/sessions/${sid}`, { method: "DELETE", headers: stack.api.headers }).catch(() => {});
  out.goals = goals(out);
  return out;
}

const met = (x) => (x === null || x === undefined ? "not measured" : x ? "met" : "NOT met");

/** Table rows for bench/run.mjs. */
export function longRows(r, row, f) {
  const t = r.turn;
  const g = r.goals;
  if (t?.error) row("Long turn", "failed", t.error.slice(0, 400));
  else if (t) {
    const at = (k, d = 2) => t.time.map((w) => f(w[k], d)).join(" / ");
    const steps = t.time.map((w) => w.step).join(" / ");
    row(
      `Long turn (${t.steps} tool steps): runtime's own ms a step at step ${steps}`,
      at("own_ms"),
      `step ${t.time[t.time.length - 1].step} / step 10: ${f(t.own_ratio, 2)}x, workerd CPU ${f(t.cpu_ratio, 2)}x (goal ${g.step_cost.goal}x: ${met(g.step_cost.met)}); a mean over ${t.window} steps; wall ${at("wall_ms")} ms, of which the scripted server ${at("server_ms")} ms; model request ${at("request_bytes", 0)} B`,
    );
    row(`Long turn: workerd CPU ms a step at step ${steps}`, at("workerd_cpu_ms"), "includes parsing the model's stream");
    const s = t.storage;
    if (s?.error) row("Long turn: storage", "failed", s.error);
    else if (s) {
      const sw = (k) => s.windows.map((w) => f(w[k], 0)).join(" / ");
      row(
        `Long turn: SQLite WAL bytes a step at step ${steps}`,
        sw("wal_bytes_per_step"),
        `pages written (${s.page_frame_bytes} B a frame); the log grew ${sw("log_bytes_per_step")} B a step; ${s.wal_restarts} WAL restarts`,
      );
      row(
        `Long turn: checkpoint bytes at step ${steps}`,
        sw("checkpoint_bytes"),
        `turn_state row ${sw("checkpoint_state_bytes")} B; grows ${sw("checkpoint_growth_per_step")} B a step`,
      );
    }
  }
  const s = r.session;
  if (s?.error) row("Long session", "failed", s.error.slice(0, 400));
  else if (s) {
    const pts = s.points;
    const ev = pts.map((x) => x.events).join(" / ");
    const each = (fn) => pts.map(fn).join(" / ");
    const q = (k) => each((x) => `${f(x[k].p50)}/${f(x[k].p99)}`);
    const mib = (b) => f(b === null ? null : b / 2 ** 20);
    row(
      `Long session (${s.turns} turns, ${s.events} events): built in`,
      `${f(s.build.ms / 1000)} s`,
      `${f(s.build.turns_per_s, 0)} turns/s, ${s.events_per_turn} events a turn, workerd CPU ${f(s.build.workerd_cpu_ms_per_turn)} ms a turn; turn ${f(s.build.turn_ms_first)} ms (first ${s.build.edge}) -> ${f(s.build.turn_ms_last)} ms (last ${s.build.edge})`,
    );
    row(
      `Long session: isolate heap after GC at ${ev} events`,
      `${each((x) => mib(x.memory.heap_used))} MiB`,
      `before the session ${mib(s.memory_before.heap_used)} MiB (goal: under ${g.memory.goal_bytes / 2 ** 20} MiB: ${met(g.memory.met)}); workerd RSS ${each((x) => mib(x.memory.rss))} MiB (before ${mib(s.memory_before.rss)})`,
    );
    const li = g.length_independent;
    const vs = (k) =>
      `the ${pts[0].reference.events}-event session at the same moments ${each((x) => `${f(x.reference[k].p50)}/${f(x.reference[k].p99)}`)} ms; longest / short ${f(li.ratios[k], 2)}x`;
    row(`Long session: resume 10 events from the end, WS first event at ${ev} events`, `${q("resume_ws")} ms`, `p50/p99; ${vs("resume_ws")}`);
    row("Long session: resume, SSE first event", `${q("resume_sse")} ms`, vs("resume_sse"));
    row("Long session: snapshot GET /v1/sessions/:sid", `${q("snapshot")} ms`, vs("snapshot"));
    row(
      "Long session: thread read model GET .../thread",
      `${q("thread")} ms`,
      `${vs("thread")}; goal ${li.goal}x for resume, snapshot and thread: ${met(li.met)}`,
    );
    row(`Long session: conversation GET .../messages`, `${q("messages")} ms`, "the whole conversation: grows with the session by design");
    row(
      "Long session: its newest 50 messages GET .../messages?limit=50",
      `${q("messages_page")} ms`,
      "a page folds its own turns only: flat from mark to mark (turns of equal size); the short session's turns are shorter, so no ratio",
    );
    row(
      `Long session: export at ${ev} events`,
      `${each((x) => f(x.export.events_per_s, 0))} events/s`,
      `${each((x) => f(x.export.mib_per_s))} MiB/s; ${each((x) => f(x.export.ms, 0))} ms`,
    );
  }
}
