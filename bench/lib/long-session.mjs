// The long session of the long-run phase: one session of M one-call turns of about 50 events
// each (the scripted model's text deltas), so 2,000 turns make about 100,000 events. When the log passes
// 1k, 10k, 50k and 100k events: workerd's memory (process RSS, and the isolate's heap after a full GC),
// resuming from a cursor near the end of the log (WebSocket and SSE, time to the first event), the
// snapshot, the thread read model and the conversation route (whole, and its newest page), and the export's
// throughput. Those reads are timed, alternating, on a short session of 1k events too: the machine's load
// changes over the minutes the build takes, so the long log is compared with the short one at the same moments.
import { median, now, summary, terminalAny } from "./client.mjs";
import { heapAfterGc } from "./cpuprofile.mjs";
import { memoryOf } from "./procs.mjs";

const EVENTS_PER_TURN = 50;
const MARKS = [1000, 10_000, 50_000, 100_000];
/** A resume starts this many events before the end of the log. */
const RESUME_BEHIND = 10;
/** The turns a snapshot lists at most (MAX_TURNS_IN_VIEW, src/views/read-model.ts). */
const SHORT_TURNS = 100;
/** The messages of a page of the conversation route (useChat's newest messages of a long session). */
const PAGE = 50;
/** Turns at each end of the build whose latencies are compared. */
const EDGE = 50;

async function memory(stack) {
  const insp = stack.inspectors.runtime;
  const heap = insp ? await heapAfterGc(insp).catch(() => null) : null;
  const m = stack.rt.userPid ? memoryOf(stack.rt.userPid) : null;
  return { rss: m?.rss ?? null, hwm: m?.hwm ?? null, heap_used: heap?.usedSize ?? null };
}

/** The reads whose time should not depend on the log's length, on session `sid` from cursor `after`. */
function probes(api, sid, after) {
  const get = (path) => async () => {
    const t0 = now();
    await api.req("GET", path);
    return now() - t0;
  };
  return {
    resume_ws: async () => {
      const t0 = now();
      const sub = api.subscribe(sid, after, { deflate: false });
      const t = await sub.waitCount(1, 30_000);
      sub.close();
      return t - t0;
    },
    resume_sse: async () => (await api.sseReplay(sid, after, [1])).marks[0],
    snapshot: get(`/v1/sessions/${sid}`),
    thread: get(`/v1/sessions/${sid}/thread`),
    messages: get(`/v1/sessions/${sid}/messages`),
    messages_page: get(`/v1/sessions/${sid}/messages?limit=${PAGE}`),
  };
}

/** Each probe `reps` times on the long session and on the short reference, alternating, so both see one load. */
async function compare(reps, long, short) {
  const out = { long: {}, short: {} };
  for (const name of Object.keys(long)) {
    const xs = [];
    const ys = [];
    for (let i = 0; i < (name === "messages" ? Math.min(reps, 5) : reps); i++) {
      if (i % 2 === 0) xs.push(await long[name]());
      ys.push(await short[name]());
      if (i % 2 === 1) xs.push(await long[name]());
    }
    out.long[name] = summary(xs);
    out.short[name] = summary(ys);
  }
  return out;
}

/** One turn on an open WebSocket, until its end frame. */
async function turn(api, sub, sid) {
  const done = sub.waitFor(terminalAny, 120_000);
  const t0 = now();
  await api.submit(sid);
  const { t, s } = await done;
  const end = JSON.parse(s);
  if (end.type !== "turn.completed") throw new Error(`a turn ended ${end.type}: ${s.slice(0, 300)}`);
  return { ms: t - t0, sequence: end.sequence };
}

async function openSession(api, model) {
  const sid = await api.createSession(model, 2);
  const sub = api.subscribe(sid, await api.lastSequence(sid), { deflate: false });
  await sub.opened;
  return { sid, sub };
}

async function measureAt(stack, sid, events, reps, reference) {
  const { api } = stack;
  const mem = await memory(stack);
  const cmp = await compare(reps, probes(api, sid, events - RESUME_BEHIND), probes(api, reference.sid, reference.events - RESUME_BEHIND));
  const t0 = now();
  const exp = await api.exportLog(sid);
  const ms = now() - t0;
  return {
    events,
    memory: mem,
    ...cmp.long,
    reference: { events: reference.events, turns: reference.turns, ...cmp.short },
    export: { ms, lines: exp.lines, bytes: exp.bytes, events_per_s: (events / ms) * 1000, mib_per_s: exp.bytes / 2 ** 20 / (ms / 1000) },
  };
}

const mib = (b) => (b === null ? "-" : (b / 2 ** 20).toFixed(1));
const p = (s) => `${s.p50.toFixed(1)}/${s.p99.toFixed(1)}`;

export async function longSession(stack, cfg, say, sessions) {
  const { api } = stack;
  const { turns, reps } = cfg.long;
  const before = await memory(stack);
  // How many deltas make a turn of about EVENTS_PER_TURN events: a one-delta turn shows the other events.
  const probe = await openSession(api, "loop-s0-c0-d1");
  sessions.push(probe.sid);
  const seq0 = await api.lastSequence(probe.sid);
  const others = (await turn(api, probe.sub, probe.sid)).sequence - seq0 - 1;
  probe.sub.close();
  const deltas = Math.max(1, EVENTS_PER_TURN - others);

  // A short session beside the long one, the reads timed on both at the same moments: 1k events in
  // SHORT_TURNS shorter turns, so that its snapshot lists as many turns as the long session's.
  const short = await openSession(api, `loop-s0-c0-d${Math.max(1, Math.ceil(MARKS[0] / SHORT_TURNS) - others)}`);
  sessions.push(short.sid);
  const reference = { sid: short.sid, events: 0, turns: 0 };
  while (reference.turns < SHORT_TURNS || reference.events < MARKS[0]) {
    reference.events = (await turn(api, short.sub, short.sid)).sequence;
    reference.turns += 1;
  }
  short.sub.close();

  const { sid, sub } = await openSession(api, `loop-s0-c0-d${deltas}`);
  sessions.push(sid);
  const expected = (await api.lastSequence(sid)) + turns * (others + deltas);
  const marks = MARKS.filter((m) => m <= expected);
  const points = [];
  const turnMs = [];
  let measuring = 0;
  let events = 0;
  const t0 = now();
  const c0 = stack.cpu().runtime_workerd;
  let measureCpu = 0;
  for (let i = 0; i < turns; i++) {
    const r = await turn(api, sub, sid);
    turnMs.push(r.ms);
    events = r.sequence;
    if (marks.length === 0 || events < marks[0]) continue;
    while (marks.length > 0 && events >= marks[0]) marks.shift();
    const m0 = now();
    const mc = stack.cpu().runtime_workerd;
    const at = await measureAt(stack, sid, events, reps, reference);
    measureCpu += stack.cpu().runtime_workerd - mc;
    measuring += now() - m0;
    points.push(at);
    say(
      `   at ${events} events: workerd RSS ${mib(at.memory.rss)} MiB, isolate heap ${mib(at.memory.heap_used)} MiB; ms p50/p99 here (and in the ${reference.events}-event session): resume near the end WS ${p(at.resume_ws)} (${p(at.reference.resume_ws)}), SSE ${p(at.resume_sse)} (${p(at.reference.resume_sse)}); snapshot ${p(at.snapshot)} (${p(at.reference.snapshot)}), thread ${p(at.thread)} (${p(at.reference.thread)}), messages ${p(at.messages)}, its newest ${PAGE} ${p(at.messages_page)}; export ${Math.round(at.export.events_per_s)} events/s, ${at.export.mib_per_s.toFixed(1)} MiB/s`,
    );
  }
  sub.close();
  const buildMs = now() - t0 - measuring;
  const buildCpu = stack.cpu().runtime_workerd - c0 - measureCpu;
  if (points.length === 0) points.push(await measureAt(stack, sid, events, reps, reference));
  const edge = Math.max(1, Math.min(EDGE, Math.floor(turns / 4)));
  const last = points[points.length - 1];
  const out = {
    turns,
    deltas_per_turn: deltas,
    events_per_turn: others + deltas,
    events,
    memory_before: before,
    build: {
      ms: buildMs,
      turns_per_s: (turns / buildMs) * 1000,
      events_per_s: (events / buildMs) * 1000,
      workerd_cpu_ms_per_turn: buildCpu / turns,
      turn_ms_first: median(turnMs.slice(0, edge)),
      turn_ms_last: median(turnMs.slice(-edge)),
      edge,
    },
    points,
    /** At the longest log, its p50 over the short session's at the same moments. */
    ratios: Object.fromEntries(["resume_ws", "resume_sse", "snapshot", "thread"].map((k) => [k, last[k].p50 / last.reference[k].p50])),
  };
  say(
    `   built ${turns} turns (${out.events_per_turn} events each), ${events} events in ${(buildMs / 1000).toFixed(1)} s (${out.build.turns_per_s.toFixed(0)} turns/s, workerd CPU ${out.build.workerd_cpu_ms_per_turn.toFixed(1)} ms a turn); turn ${out.build.turn_ms_first.toFixed(1)} ms (first ${edge}) -> ${out.build.turn_ms_last.toFixed(1)} ms (last ${edge})`,
  );
  return out;
}
