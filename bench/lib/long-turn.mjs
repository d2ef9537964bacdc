// The long turn of the long-run phase: one turn of N tool steps (each one `lookup` webhook call)
// against the scripted model, and what each step costs the runtime at step 10, 100 and N.
//
// Time, from the scripted server's marks (stepTimes): a step's wall time, the server's share, and the rest,
// the runtime's own; a figure is the mean over a window of steps. workerd CPU is read (schedstat) when the
// window's first and last model.requested frames reach the client.
//
// Storage, from a second run of the same turn in a fresh session (its reads would disturb the timed run):
// the session database's write-ahead log is read at every model.requested frame, so the pages SQLite wrote
// per step are counted; and at each window's ends a read-only sqlite3 reads the log's bytes and the
// running turn's checkpoint (turn_state and turn_messages rows).
import { median, now, terminalAny } from "./client.mjs";
import { benchAgent } from "./e2e.mjs";
import { hasSqlite3, knownDatabases, newDatabase, rowStats, WalWatch } from "./session-db.mjs";

const WINDOW = 10;

/** The steps measured: 10, 100, 300 up to N, and N; each as a window of WINDOW steps ending near it. */
export function stepWindows(n) {
  const points = [10, 100, 300].filter((p) => p <= n);
  if (!points.includes(n)) points.push(n);
  return points.map((step) => {
    const lo = Math.max(1, Math.min(step - WINDOW / 2 + 1, n - WINDOW + 1));
    return { step, lo, hi: Math.min(n, lo + WINDOW - 1) };
  });
}

/** The agent of the long turn: the e2e agent with a budget that lets it make N tool steps and its answer. */
export function longAgent(stack, n) {
  const agent = benchAgent(stack, `loop-s${n}-c1-d5-tlookup`, n + 1);
  return { ...agent, name: "bench-long", budget: { max_total_llm_calls: n + 1, max_total_tool_calls: n } };
}

async function createSession(stack, agent) {
  try {
    return (await stack.api.req("POST", "/v1/sessions", { agent })).session_id;
  } catch (err) {
    const b = agent.budget;
    throw new Error(
      `the runtime refused a budget of ${b.max_total_llm_calls} model calls and ${b.max_total_tool_calls} tool calls for a turn, over its per-turn caps ` +
        `(60 model calls before they became deployment settings: BENCH_LONG_STEPS=50 fits); it said: ${err.message}`,
    );
  }
}

/** Runs the session's turn; onRequested(k) runs as the k-th model.requested frame arrives. */
async function runTurn(stack, sid, onRequested) {
  const { api } = stack;
  const sub = api.subscribe(sid, await api.lastSequence(sid), { deflate: false });
  await sub.opened;
  let k = 0;
  const test = (s) => {
    if (s.includes('"type":"model.requested"')) onRequested(++k);
    return terminalAny(s);
  };
  const done = sub.waitFor(test, 900_000);
  const t0 = now();
  await api.submit(sid);
  const { t, s } = await done;
  sub.close();
  const end = JSON.parse(s);
  if (end.type !== "turn.completed") throw new Error(`the long turn ended ${end.type} after ${k} model calls: ${s.slice(0, 400)}`);
  return { ms: t - t0, model_calls: k };
}

/**
 * Each tool step's time, from the scripted server's marks (µs of the monotonic clock): a step runs from its
 * model request's arrival to the next one's; the server's share is its time on the model request and on the
 * step's webhook call (reading and parsing the request, which grows with the conversation, included); the
 * rest is the runtime's own, the legs between workerd and the server included.
 */
function stepTimes(marks) {
  const model = marks.filter((m) => m.url.endsWith("/chat/completions"));
  const tools = marks.filter((m) => m.url.endsWith("/_tools/lookup"));
  const served = (m) => (m ? m.sent_us - m.arrived_us : 0);
  return model.slice(0, -1).map((m, i) => {
    const wall = (model[i + 1].arrived_us - m.arrived_us) / 1000;
    const server = (served(m) + served(tools[i])) / 1000;
    return { wall, server, own: wall - server, request_bytes: m.bytes };
  });
}

const mean = (xs) => xs.reduce((a, b) => a + b, 0) / xs.length;

export async function longTurn(stack, cfg, say, sessions) {
  const n = cfg.long.steps;
  const agent = longAgent(stack, n);
  const windows = stepWindows(n);
  // The timed run: CPU read only at the windows' ends.
  const bounds = new Set(windows.flatMap((w) => [w.lo, w.hi + 1]));
  const cpuAt = new Map();
  const sid = await createSession(stack, agent);
  sessions.push(sid);
  await stack.settle({ quietMs: 200, maxMs: 5000 });
  await stack.fake.marks();
  const timed = await runTurn(stack, sid, (k) => {
    if (bounds.has(k)) cpuAt.set(k, stack.cpu().runtime_workerd);
  });
  const steps = stepTimes(await stack.fake.marks());
  if (steps.length < n) throw new Error(`the long turn made ${steps.length} tool steps, not ${n}`);
  const time = windows.map((w) => {
    const ws = steps.slice(w.lo - 1, w.hi);
    const field = (k) => mean(ws.map((s) => s[k]));
    return {
      ...w,
      wall_ms: field("wall"),
      server_ms: field("server"),
      own_ms: field("own"),
      own_median_ms: median(ws.map((s) => s.own)),
      request_bytes: field("request_bytes"),
      workerd_cpu_ms: (cpuAt.get(w.hi + 1) - cpuAt.get(w.lo)) / (w.hi - w.lo + 1),
    };
  });
  const first = time[0];
  const last = time[time.length - 1];
  const out = {
    steps: n,
    window: WINDOW,
    model: agent.model,
    turn_ms: timed.ms,
    time,
    own_ratio: last.own_ms / first.own_ms,
    cpu_ratio: last.workerd_cpu_ms / first.workerd_cpu_ms,
  };
  for (const t of time)
    say(
      `   steps ${t.lo}-${t.hi}: ${t.wall_ms.toFixed(2)} ms a step = scripted server ${t.server_ms.toFixed(2)} + runtime ${t.own_ms.toFixed(2)} ms; workerd CPU ${t.workerd_cpu_ms.toFixed(2)} ms a step; model request ${Math.round(t.request_bytes)} B`,
    );
  say(
    `   runtime's own time a step at step ${last.step} / step ${first.step}: ${out.own_ratio.toFixed(2)}x, workerd CPU ${out.cpu_ratio.toFixed(2)}x (goal 1.2x); the turn took ${(timed.ms / 1000).toFixed(1)} s`,
  );
  out.storage = await storageRun(stack, agent, windows, sessions);
  const s = out.storage;
  for (const w of s.windows)
    say(
      `   steps ${w.lo}-${w.hi}: SQLite wrote ${w.wal_bytes_per_step === null ? "-" : Math.round(w.wal_bytes_per_step)} B a step to its WAL; log +${w.log_bytes_per_step === null ? "-" : Math.round(w.log_bytes_per_step)} B a step; checkpoint ${w.checkpoint_bytes ?? "-"} B after ${w.at_model_calls ?? "-"} model calls`,
    );
  return out;
}

/** The storage run: the same turn in a fresh session, its database read as it runs. */
async function storageRun(stack, agent, windows, sessions) {
  const known = knownDatabases(stack);
  const sid = await createSession(stack, agent);
  sessions.push(sid);
  const db = newDatabase(stack, known);
  if (!db) return { error: "the session's database file was not found (is wrangler dev persisting?)" };
  const sqlite = hasSqlite3();
  const wal = new WalWatch(db);
  const reads = [wal.read()];
  const stats = new Map();
  // Read before the window's last step, so that the turn (and its checkpoint) is still there when sqlite3 reads.
  const statEnd = (w) => Math.max(w.lo + 1, w.hi - 1);
  const statAt = new Set(windows.flatMap((w) => [w.lo, statEnd(w)]));
  try {
    await runTurn(stack, sid, (k) => {
      reads[k] = wal.read();
      if (sqlite && statAt.has(k)) stats.set(k, rowStats(db));
    });
  } finally {
    wal.close();
  }
  // Frames written while step k ran: between the k-th and the (k+1)-th model.requested frame; unknown
  // when the log started over in between.
  const framesOf = (k) => (reads[k + 1] && !reads[k + 1].restarted ? reads[k + 1].frames - reads[k].frames : null);
  const restarts = reads.filter((r) => r?.restarted).length;
  const out = { session_id: sid, page_frame_bytes: wal.frameBytes, wal_restarts: restarts, sqlite3: sqlite, windows: [] };
  for (const w of windows) {
    const frames = [];
    for (let k = w.lo; k <= w.hi; k++) if (framesOf(k) !== null) frames.push(framesOf(k));
    const a = sqlite ? await stats.get(w.lo) : null;
    const end = sqlite ? await stats.get(statEnd(w)) : null;
    // A read that came after the turn's end finds no checkpoint.
    const b = end?.state_bytes > 0 ? end : null;
    const calls = b && a ? b.model_calls - a.model_calls : 0;
    out.windows.push({
      ...w,
      wal_frames_per_step: frames.length > 0 ? mean(frames) : null,
      wal_bytes_per_step: frames.length > 0 ? mean(frames) * wal.frameBytes : null,
      log_bytes_per_step: calls > 0 ? (b.log_bytes - a.log_bytes) / calls : null,
      events_per_step: calls > 0 ? (b.events - a.events) / calls : null,
      checkpoint_bytes: b?.checkpoint_bytes ?? null,
      checkpoint_state_bytes: b?.state_bytes ?? null,
      checkpoint_growth_per_step: calls > 0 ? (b.checkpoint_bytes - a.checkpoint_bytes) / calls : null,
      at_model_calls: b?.model_calls ?? null,
    });
  }
  if (!sqlite) out.note = "sqlite3 is not installed: the log and checkpoint sizes are not read";
  return out;
}
