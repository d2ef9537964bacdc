#!/usr/bin/env node
// `npm run bench`: measures the runtime's own cost with a zero-latency scripted model, beside a plain
// AI SDK tool loop in the same runtime (workerd). Prints a table and writes bench/results/<timestamp>.json.
// Sizes come from environment variables (docs/performance.md lists them); BENCH_QUICK=1 runs a small version.
import { execFileSync } from "node:child_process";
import { createWriteStream, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { cpus, freemem, totalmem } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { WS_KIND } from "./lib/client.mjs";
import { codeMode, codeModeRows, codeToolRows, codeTools } from "./lib/code-phases.mjs";
import { e2eRows } from "./lib/e2e.mjs";
import { evals, evalsRows } from "./lib/evals.mjs";
import { longRows } from "./lib/long-run.mjs";
import { PHASES } from "./lib/phases.mjs";
import { stopAll, treeHash } from "./lib/procs.mjs";
import { protocolRows } from "./lib/protocols.mjs";
import { quota, quotaRows } from "./lib/quota.mjs";
import { scaleRows } from "./lib/scale.mjs";
import { startStack } from "./lib/stack.mjs";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const QUICK = process.env.BENCH_QUICK === "1";
const pick = (name, full, quick) => process.env[name] ?? String(QUICK ? quick : full);
const num = (name, full, quick) => Number(pick(name, full, quick));
const list = (name, full, quick) =>
  pick(name, full, quick)
    .split(",")
    .map((s) => Number(s.trim()))
    .filter((n) => Number.isFinite(n) && n >= 0);
const flag = (name, dflt) => (process.env[name] === undefined ? dflt : process.env[name] === "1");

// Profile runs early, while the isolate holds few sessions; replay last of the runtime phases (its log is large).
// long runs early too, so its memory readings see little else; it erases its sessions when done.
PHASES.quota = quota;
PHASES.evals = evals;
PHASES.code_tools = codeTools;
PHASES.code_mode = codeMode;
const ALL_PHASES = [
  "e2e",
  "long",
  "scale",
  "loop",
  "protocols",
  "latency",
  "profile",
  "concurrency",
  "fanout",
  "footprint",
  "replay",
  "micro",
  "quota",
  "evals",
  "code_tools",
  "code_mode",
].filter((p) => PHASES[p]);
const CFG = {
  quick: QUICK,
  phases: pick("BENCH_PHASES", ALL_PHASES.join(","), ALL_PHASES.join(","))
    .split(",")
    .map((s) => s.trim()),
  warmup: num("BENCH_WARMUP", 5, 2),
  e2e: {
    steps: num("BENCH_E2E_STEPS", 10, 10),
    calls: num("BENCH_E2E_CALLS", 4, 4),
    deltas: num("BENCH_E2E_DELTAS", 5, 5),
    runs: num("BENCH_E2E_RUNS", 9, 5),
    warmup: 1,
  },
  loop: {
    steps: num("BENCH_LOOP_STEPS", 10, 10),
    calls: num("BENCH_LOOP_CALLS", 4, 4),
    deltas: num("BENCH_LOOP_DELTAS", 5, 5),
    runs: num("BENCH_LOOP_RUNS", 30, 6),
    textDeltas: num("BENCH_TEXT_DELTAS", 1000, 300),
    textRuns: num("BENCH_TEXT_RUNS", 8, 3),
  },
  protocols: { runs: num("BENCH_PROTOCOL_RUNS", 30, 8) },
  code: { runs: num("BENCH_CODE_RUNS", 7, 3) },
  quota: { runs: num("BENCH_QUOTA_RUNS", 15, 5), reservations: num("BENCH_QUOTA_RESERVATIONS", 2000, 300), width: num("BENCH_QUOTA_WIDTH", 16, 16) },
  evals: { cases: num("BENCH_EVAL_CASES", 40, 12), runs: num("BENCH_EVAL_RUNS", 3, 1), concurrency: 4, turns: num("BENCH_VERSION_TURNS", 15, 5) },
  latency: { turns: num("BENCH_LATENCY_TURNS", 50, 12), deltas: num("BENCH_LATENCY_DELTAS", 8, 8) },
  footprint: { turns: num("BENCH_FOOTPRINT_TURNS", 1000, 100), historyTurns: num("BENCH_HISTORY_TURNS", 10, 4) },
  fanout: { clients: list("BENCH_FANOUT_CLIENTS", "1,10,50", "1,10,50"), deltas: num("BENCH_FANOUT_DELTAS", 1000, 200), runs: num("BENCH_FANOUT_RUNS", 5, 1) },
  concurrency: {
    sessions: num("BENCH_CONC_SESSIONS", 50, 50),
    rounds: num("BENCH_CONC_ROUNDS", 3, 1),
    steps: num("BENCH_CONC_STEPS", 10, 2),
    calls: num("BENCH_CONC_CALLS", 4, 4),
  },
  long: { steps: num("BENCH_LONG_STEPS", 300, 50), turns: num("BENCH_LONG_TURNS", 2000, 200), reps: num("BENCH_LONG_REPS", 20, 10) },
  scale: { sessions: num("BENCH_SCALE_SESSIONS", 10000, 1000), pages: num("BENCH_SCALE_PAGES", 50, 20), events: num("BENCH_SCALE_EVENTS", 100000, 10000) },
  replay: {
    counts: list("BENCH_REPLAY_EVENTS", "10000,100000", "2000,10000"),
    runs: num("BENCH_REPLAY_RUNS", 3, 2),
    deltasPerTurn: num("BENCH_REPLAY_DELTAS", 1000, 500),
  },
  micro: { n: num("BENCH_MICRO_N", 5000, 1000), runs: num("BENCH_MICRO_RUNS", 5, 2), clients: list("BENCH_MICRO_CLIENTS", "1,10,50", "1,10") },
  profile: { turns: num("BENCH_PROFILE_TURNS", 8, 4), intervalUs: num("BENCH_PROFILE_INTERVAL_US", 200, 200), strace: flag("BENCH_STRACE", true) },
  deflate: flag("BENCH_WS_DEFLATE", false),
  viaProxy: flag("BENCH_VIA_PROXY", false),
  devNetwork: flag("BENCH_DEV_NETWORK", false),
  devConsole: flag("BENCH_DEV_CONSOLE", false),
  liveSrc: flag("BENCH_LIVE_SRC", false),
  keep: flag("BENCH_KEEP", false),
};

const stamp = new Date().toISOString().replace(/[:.]/g, "-");
const resultsDir = join(ROOT, "bench", "results");
mkdirSync(resultsDir, { recursive: true });
const logPath = join(resultsDir, `${stamp}.log`);
const logStream = createWriteStream(logPath);
let logOpen = true;
const log = (s) => {
  if (logOpen) logStream.write(String(s).endsWith("\n") ? String(s) : `${s}\n`);
};
const say = (s) => {
  process.stdout.write(`${s}\n`);
  log(s);
};
const sh = (cmd, args) => {
  try {
    return execFileSync(cmd, args, { cwd: ROOT, encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }).trim();
  } catch {
    return null;
  }
};
const pkgVersion = (...paths) => {
  for (const p of paths) {
    try {
      return JSON.parse(readFileSync(join(ROOT, p), "utf8")).version;
    } catch {
      // next
    }
  }
  return null;
};

function machine() {
  return {
    nproc: Number(sh("nproc", [])) || cpus().length,
    cpu_model: cpus()[0]?.model ?? null,
    mem_total_bytes: totalmem(),
    mem_free_bytes: freemem(),
    free_h: sh("free", ["-h"]),
    kernel: sh("uname", ["-r"]),
    node: process.version,
    wrangler: pkgVersion("node_modules/wrangler/package.json"),
    workerd: pkgVersion("node_modules/wrangler/node_modules/workerd/package.json", "node_modules/workerd/package.json"),
    ai: pkgVersion("node_modules/ai/package.json"),
    ws_client: WS_KIND,
  };
}

async function main() {
  const t0 = Date.now();
  say(`agent-runtime bench${QUICK ? " (BENCH_QUICK)" : ""}; log ${logPath}`);
  const stack = await startStack({ root: ROOT, log, liveSrc: CFG.liveSrc, viaProxy: CFG.viaProxy, devNetwork: CFG.devNetwork, devConsole: CFG.devConsole });
  say(
    `started in ${((Date.now() - t0) / 1000).toFixed(1)} s: runtime ${stack.rtBase} (workerd ${stack.rt.userPid}), baseline ${stack.blBase} (workerd ${stack.bl.userPid}), fake model pid ${stack.fake.pid}`,
  );
  const rssStart = stack.rt.userPid ? Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${stack.rt.userPid}/status`, "utf8"))?.[1]) * 1024 : null;
  const results = {};
  const seconds = {};
  try {
    for (const name of ALL_PHASES) {
      if (!CFG.phases.includes(name)) continue;
      const p0 = Date.now();
      say(`\n== ${name}`);
      try {
        results[name] = await PHASES[name](stack, CFG, say);
      } catch (err) {
        say(`   ${name} failed: ${err?.stack ?? err}`);
        results[name] = { error: String(err?.message ?? err) };
      }
      seconds[name] = (Date.now() - p0) / 1000;
      say(`   (${seconds[name].toFixed(1)} s)`);
    }
  } finally {
    results.process = { runtime_workerd_rss_start: rssStart };
    try {
      results.process.runtime_workerd_rss_end = Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${stack.rt.userPid}/status`, "utf8"))?.[1]) * 1024;
    } catch {
      // gone
    }
    await stack.stop({ keep: CFG.keep });
  }
  const out = {
    version: 1,
    started_at: new Date(t0).toISOString(),
    duration_s: (Date.now() - t0) / 1000,
    phase_seconds: seconds,
    machine: machine(),
    source: {
      git_commit: sh("git", ["rev-parse", "HEAD"]),
      src_dirty: (sh("git", ["status", "--porcelain", "--", "src", "migrations", "wrangler.toml"]) ?? "") !== "",
      src_hash: treeHash(ROOT, CFG.liveSrc ? ["src", "migrations"] : ["bench/.cache/runtime/src", "bench/.cache/runtime/migrations"]),
      snapshot: !CFG.liveSrc,
    },
    config: CFG,
    results,
  };
  const jsonPath = join(resultsDir, `${stamp}.json`);
  writeFileSync(jsonPath, `${JSON.stringify(out, null, 2)}\n`);
  say(`\n${table(out)}`);
  say(`\nJSON: ${jsonPath}\nlog:  ${logPath}\ntotal ${out.duration_s.toFixed(0)} s`);
}

function table(o) {
  const r = o.results;
  const lines = [];
  const f = (x, d = 1) => (x === null || x === undefined || Number.isNaN(Number(x)) ? "-" : Number(x).toFixed(d));
  const mb = (b) => (b === null || b === undefined ? "-" : (b / 1048576).toFixed(1));
  const row = (a, b, c = "") => lines.push(`| ${a} | ${b} | ${c} |`);
  const m = o.machine;
  lines.push(
    `Machine: ${m.nproc} CPUs (${m.cpu_model}), ${(m.mem_total_bytes / 2 ** 30).toFixed(1)} GiB; node ${m.node}, wrangler ${m.wrangler}, workerd ${m.workerd}, ai ${m.ai}`,
  );
  lines.push(
    `Source: ${o.source.git_commit?.slice(0, 10) ?? "?"}${o.source.src_dirty ? " + uncommitted changes" : ""} (src ${o.source.src_hash})${o.config.quick ? "; BENCH_QUICK" : ""}`,
  );
  lines.push("");
  lines.push("| measurement | median (p50 / p99 where given) | notes |");
  lines.push("|---|---|---|");
  const failed = (name) => r[name]?.error && row(`${name} phase`, "failed", r[name].error.slice(0, 120));
  if (r.e2e && !r.e2e.error) e2eRows(r.e2e, row, f);
  if (r.long && !r.long.error) longRows(r.long, row, f);
  else failed("long");
  if (r.scale && !r.scale.error) scaleRows(r.scale, row, f);
  if (r.protocols && !r.protocols.error) protocolRows(r.protocols, row, f);
  else failed("protocols");
  if (r.loop && !r.loop.error) {
    const l = r.loop;
    row(
      "Tool loop, runtime: ms per step",
      f(l.runtime.ms_per_step, 2),
      `${l.model_calls_per_turn} model calls, ${l.tool_calls_per_turn} calculator calls, ${l.events_per_turn} events per turn, durable and streamed to 1 WS; turn ${f(l.runtime.median)} ms; ${l.runs} runs`,
    );
    row(
      "Tool loop, AI SDK generateText: ms per step",
      f(l.generateText.ms_per_step, 2),
      `same scripted model and calculator in workerd; turn ${f(l.generateText.median)} ms`,
    );
    row("Tool loop, AI SDK streamText: ms per step", f(l.streamText.ms_per_step, 2), `turn ${f(l.streamText.median)} ms`);
    row(
      "Tool loop, ratio runtime / generateText",
      `${f(l.ratio_runtime_vs_generateText, 2)}x`,
      `median of per-run ratios ${f(l.median_pairwise_ratio_vs_generateText, 2)}x; runtime / streamText ${f(l.ratio_runtime_vs_streamText, 2)}x`,
    );
    const c = l.cpu_ms_per_turn;
    row(
      "Tool loop, workerd CPU ms per turn",
      `${f(c.runtime.runtime_workerd)} / ${f(c.generateText.baseline_workerd)} / ${f(c.streamText.baseline_workerd)}`,
      "runtime / generateText / streamText",
    );
    const s = l.runtime_split_ms;
    row("Tool loop, runtime turn split (server)", `${s.model_calls} / ${s.tool_phases} / ${s.other} ms`, `model calls / tool phases / rest, of ${s.total} ms`);
    const t = l.text_turn;
    row(
      `Text turn (${t.deltas} deltas), runtime / streamText`,
      `${f(t.runtime_ms, 0)} / ${f(t.streamText_ms, 0)} ms`,
      `${f(t.runtime_ms_per_delta * 1000, 0)} / ${f(t.streamText_ms_per_delta * 1000, 0)} µs per delta; workerd CPU ${f(t.cpu_ms_per_turn.runtime.runtime_workerd, 0)} / ${f(t.cpu_ms_per_turn.streamText.baseline_workerd, 0)} ms`,
    );
  } else failed("loop");
  if (r.latency && !r.latency.error) {
    const l = r.latency;
    row(
      "First event after POST .../turns (WS open)",
      `${f(l.first_event.p50, 2)} / ${f(l.first_event.p99, 2)} ms`,
      `the 202 arrives at ${f(l.http_202.p50, 2)} ms; ${l.turns} turns`,
    );
    row("First model.delta after POST", `${f(l.first_delta.p50, 2)} / ${f(l.first_delta.p99, 2)} ms`, `${l.model}: one model call, no tools`);
    row(
      "turn.completed after POST",
      `${f(l.completed.p50, 2)} / ${f(l.completed.p99, 2)} ms`,
      `server (event timestamps) ${f(l.server_submitted_to_completed.p50, 0)} ms`,
    );
  } else failed("latency");
  if (r.footprint && !r.footprint.error) {
    const e = r.footprint.event_log;
    row(
      "Event log bytes per step",
      f(e.bytes_per_step, 0),
      `${e.bytes} B for the ${e.events} events of a ${e.turn} turn; a tool step ${f(e.bytes_per_tool_step, 0)} B`,
    );
    row(
      "Write transactions per step",
      f(e.transactions_per_step, 2),
      `${e.transactions_per_turn} per turn; ${e.checkpoint_rewrites_per_turn} of them rewrite the turn checkpoint`,
    );
    const t = r.footprint.many_turns;
    row(
      `workerd RSS after ${t.turns} turns in one session`,
      `${mb(t.rss_after_1s)} MiB`,
      `before ${mb(t.rss_before)} MiB (growth ${mb(t.rss_growth)} MiB); isolate heap ${mb(t.js_heap_before)} -> ${mb(t.js_heap_after)} MiB after GC`,
    );
    row(`SQLite file after ${t.turns} turns`, `${mb(t.sqlite_bytes)} MiB`, `${t.events} events, ${f(t.sqlite_bytes_per_event, 0)} B per event`);
    row(
      "Turn latency, first vs last turns of that session",
      `${f(t.turn_ms_first, 1)} -> ${f(t.turn_ms_last, 1)} ms`,
      `medians of the first and last ${t.window} turns (${t.model})`,
    );
    const h = r.footprint.history_growth;
    if (h)
      row(
        `Tool-loop turn 1 vs turn ${h.turns.length} of one session`,
        `${f(h.first_ms, 0)} -> ${f(h.last_ms, 0)} ms`,
        `workerd CPU ${f(h.first_cpu_ms, 0)} -> ${f(h.last_cpu_ms, 0)} ms; +${f(h.ms_per_prior_turn, 1)} ms per earlier turn in the history`,
      );
  } else failed("footprint");
  if (r.fanout && !r.fanout.error) {
    for (const [k, v] of Object.entries(r.fanout.per_clients)) {
      if (Number(k) === 0)
        row("Fan-out, no client (reference)", `turn ${f(v.ms, 0)} ms`, `server ${f(v.server_turn_ms, 0)} ms, workerd CPU ${f(v.workerd_cpu_ms, 0)} ms`);
      else
        row(
          `Fan-out, ${k} WS client${k === "1" ? "" : "s"}: events/s delivered`,
          f(v.events_per_s, 0),
          `${f(v.events_per_turn, 0)} events per turn; last client done at ${f(v.ms, 0)} ms, turn ${f(v.server_turn_ms, 0)} ms on the server, workerd CPU ${f(v.workerd_cpu_ms, 0)} ms`,
        );
    }
  } else failed("fanout");
  if (r.concurrency && !r.concurrency.error) {
    const c = r.concurrency;
    row(
      `Concurrency, ${c.sessions} fresh sessions at once: turns/s`,
      f(c.turns_per_s, 1),
      `${c.model}; the same turn alone ${f(c.solo_turn_ms, 0)} ms; ${c.failed} failed`,
    );
    row(
      `Concurrency, ${c.sessions} sessions: turn latency`,
      `${f(c.latency_ms.p50, 0)} / ${f(c.latency_ms.p99, 0)} ms`,
      `workerd CPU ${f(c.workerd_cpu_ms_per_turn, 1)} ms per turn, ${f(c.workerd_busy * 100, 0)}% of one core busy`,
    );
    if (c.rounds > 1)
      row(
        "Concurrency, later rounds (1 more turn of history each)",
        `${c.all_rounds.turns_per_s
          .slice(1)
          .map((x) => f(x, 1))
          .join(", ")} turns/s`,
        `workerd CPU ${c.all_rounds.workerd_cpu_ms_per_turn
          .slice(1)
          .map((x) => f(x, 0))
          .join(", ")} ms per turn; p50 / p99 over all rounds ${f(c.all_rounds.latency_ms.p50, 0)} / ${f(c.all_rounds.latency_ms.p99, 0)} ms`,
      );
  } else failed("concurrency");
  if (r.replay && !r.replay.error) {
    const p = r.replay;
    for (const n of Object.keys(p.ws)) {
      row(`Replay ${n} events from cursor 0, WebSocket`, `${f(p.ws[n].median, 0)} ms`, `${f(p.ws[n].events_per_s, 0)} events/s`);
      row(`Replay ${n} events from cursor 0, SSE`, `${f(p.sse[n].median, 0)} ms`, `${f(p.sse[n].events_per_s, 0)} events/s`);
      row(`Replay ${n} events from cursor 0, WebSocket frames=batch`, `${f(p.ws_batch[n].median, 0)} ms`, `${f(p.ws_batch[n].events_per_s, 0)} events/s`);
    }
    row(
      "Replay, workerd CPU per event (WS / SSE / WS frames=batch)",
      `${f(p.cpu_per_event.ws.workerd_us, 1)} / ${f(p.cpu_per_event.sse.workerd_us, 1)} / ${f(p.cpu_per_event.ws_batch.workerd_us, 1)} µs`,
      `WS with deflate ${p.ws_other_deflate.deflate ? "on" : "off"}: ${f(p.ws_other_deflate.workerd_us_per_event, 1)} µs/event, ${f(p.ws_other_deflate.ms, 0)} ms for ${p.ws_other_deflate.count}`,
    );
    row(
      "Building the log (live, 1 WS client)",
      `${f(p.build.events_per_s, 0)} events/s`,
      `${f(p.build.workerd_cpu_us_per_event, 0)} µs workerd CPU per delta event`,
    );
  } else failed("replay");
  if (r.quota && !r.quota.error) quotaRows(r.quota, row, f);
  else failed("quota");
  if (r.evals && !r.evals.error) evalsRows(r.evals, row, f);
  else failed("evals");
  if (r.code_tools && !r.code_tools.error) codeToolRows(r.code_tools, row, f);
  else failed("code_tools");
  if (r.code_mode && !r.code_mode.error) codeModeRows(r.code_mode, row, f);
  else failed("code_mode");
  if (r.micro && !r.micro.error) {
    for (const [label, v] of Object.entries(r.micro.storage))
      row(`Micro: ${label}`, `${f(v.us_per_op, 1)} µs`, v.cpu_us_per_op !== undefined ? `workerd CPU ${f(v.cpu_us_per_op, 1)} µs` : "");
    for (const [k, v] of Object.entries(r.micro.websocket))
      row(
        `Micro: ws.send to ${k} socket(s)`,
        `${f(v.ws_send.us_per_frame_per_socket, 2)} µs`,
        `per frame per socket; serialized again per socket ${f(v.ws_send_restringify.us_per_frame_per_socket, 2)} µs; ${f(v.ws_send.delivered_per_s, 0)} frames/s delivered`,
      );
  } else failed("micro");
  if (r.profile && !r.profile.error) {
    for (const [label, p] of Object.entries(r.profile)) {
      if (label === "syscalls") continue;
      const top = p.by_group
        .filter((g) => g.name !== "(idle)")
        .slice(0, 6)
        .map((g) => `${g.name} ${f(g.ms, 1)}`)
        .join(", ");
      row(`Profile: ${label}`, `${f(p.busy_ms, 1)} ms/turn not idle`, top);
    }
    for (const [k, v] of Object.entries(r.profile.syscalls ?? {})) {
      row(
        `Syscalls per event, ${k}`,
        Object.entries(v.per_event)
          .map(([s, c]) => `${s} ${f(c, 2)}`)
          .join(", "),
        `${f(v.events / v.turns, 0)} events per turn`,
      );
    }
  } else failed("profile");
  return lines.join("\n");
}

for (const sig of ["SIGINT", "SIGTERM"]) {
  process.on(sig, async () => {
    await stopAll();
    process.exit(130);
  });
}

try {
  await main();
} catch (err) {
  say(`bench failed: ${err?.stack ?? err}`);
  process.exitCode = 1;
} finally {
  await stopAll();
  logOpen = false;
  logStream.end();
}
