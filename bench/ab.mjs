#!/usr/bin/env node
// `node bench/ab.mjs [REV]`: the end-to-end turns of `npm run bench` (bench/lib/e2e.mjs) on the runtime as of
// git revision REV (default HEAD) against the working tree, both under `wrangler dev` at the same time and
// alternating turn by turn, so a change is measured under the same machine load as what it changes (this
// machine's timings move by 30% between runs). Prints medians, the ratio, and workerd CPU per turn.
// BENCH_E2E_RUNS (default 15) measured turns per side and shape after 2 warm-ups; BENCH_AB_SHAPES (say
// "one_call") measures only the shapes it names; the shape "create" (not measured unless named) is the
// session's creation alone, POST /v1/sessions, with the e2e turns' agent; the shape "long_turn" (not measured
// unless named) is one turn of BENCH_AB_LONG_STEPS (default 300) webhook steps whose arguments carry
// BENCH_AB_LONG_PAD (default 1000) characters each, and also prints the time per step early (steps 5-15) and
// late (the last 15 but 5) in the turn, from its events' timestamps (needs a REV with the raisable budget caps).
// BENCH_AB_TURN_CPU=1 reads the CPU of the turn alone: its session is created and its WebSocket opened before the
// CPU window, with 30 ms of quiet either side (the creation's CPU and index write are most of the noise under load);
// it also prints the mean of the middle half of the paired CPU differences.
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { Api, median, now, terminalAny } from "./lib/client.mjs";
import { connectInspector } from "./lib/cpuprofile.mjs";
import { assertCompleted, benchAgent, e2eShapes, longTurnShape, runtimeTurn, stepMs, watchOptions } from "./lib/e2e.mjs";
import { cpuMsOf, freePort, snapshotRuntime, startFakeLlmProcess, startWrangler, stopAll } from "./lib/procs.mjs";
import { withoutDevRelays } from "./lib/stack.mjs";

const ROOT = resolve(fileURLToPath(import.meta.url), "..", "..");
const REV = process.argv[2] ?? "HEAD";
const RUNS = Number(process.env.BENCH_E2E_RUNS ?? 15);
const WARMUP = 2;
const log = () => {};

const tmp = mkdtempSync(join(tmpdir(), "agent-runtime-ab-"));
const cache = join(ROOT, "bench", ".cache");
const before = join(cache, "ab-before");
rmSync(before, { recursive: true, force: true });
mkdirSync(before, { recursive: true });
// The revision's runtime files, laid out as snapshotRuntime lays out the working tree's.
execFileSync("sh", ["-c", `git archive ${REV} src migrations wrangler.toml | tar -x -C ${before}`], { cwd: ROOT });
mkdirSync(join(before, "dist", "inspector"), { recursive: true });
const sides = { before: join(before, "wrangler.toml"), after: snapshotRuntime(ROOT, join(cache, "ab-after")) };

const TURN_CPU = process.env.BENCH_AB_TURN_CPU === "1";
const pause = (ms) => new Promise((r) => setTimeout(r, ms));

/** A turn whose CPU window holds the turn alone: the session and its WebSocket are made first. */
async function turnAlone(stack, model, maxSteps) {
  const { session_id } = await stack.api.req("POST", "/v1/sessions", { agent: benchAgent(stack, model, maxSteps) });
  const sub = stack.api.subscribe(session_id, 0, watchOptions(false));
  await sub.opened;
  await pause(30);
  const done = sub.waitFor(terminalAny);
  const c0 = cpuMsOf(stack.w.userPid);
  const t0 = now();
  await stack.api.submit(session_id);
  const { t, s } = await done;
  const cpu = cpuMsOf(stack.w.userPid) - c0;
  sub.close();
  assertCompleted(s);
  await pause(30);
  return { ms: t - t0, cpu, sid: session_id };
}

/** Times the creation of a session alone; waits a moment after, so its index write is not in the next pair. */
async function created(stack, model, maxSteps) {
  const t0 = now();
  await stack.api.req("POST", "/v1/sessions", { agent: benchAgent(stack, model, maxSteps) });
  const ms = now() - t0;
  await new Promise((r) => setTimeout(r, 20));
  return { ms };
}

try {
  const key = "bench_ab";
  const fakePort = await freePort();
  await startFakeLlmProcess(join(ROOT, "bench", "lib", "fake-llm.mjs"), fakePort, log);
  const baseUrl = `http://127.0.0.1:${fakePort}/v1`;
  const stacks = {};
  for (const [name, config] of Object.entries(sides)) {
    const w = await startWrangler({
      cwd: ROOT,
      config,
      port: await freePort(),
      inspectorPort: await freePort(),
      persistTo: join(tmp, name),
      vars: { API_KEYS: key, OPENAI_COMPATIBLE_BASE_URL: baseUrl, TOOL_URL_ALLOWLIST: `${baseUrl}/_tools/` },
      readyPath: "/healthz",
      log,
      label: name,
    });
    const inspector = await connectInspector(w.inspectorPort);
    await withoutDevRelays(inspector);
    stacks[name] = { w, api: new Api(w.direct ?? w.base, key), fake: { baseUrl } };
  }
  console.log(`${REV} (before) against the working tree (after), ${RUNS} turns each after ${WARMUP} warm-ups, alternating`);
  const only = process.env.BENCH_AB_SHAPES?.split(",");
  const turns = e2eShapes({ steps: 10, calls: 4, deltas: 5 });
  const longSteps = Number(process.env.BENCH_AB_LONG_STEPS ?? 300);
  const long = longTurnShape({ steps: longSteps, pad: Number(process.env.BENCH_AB_LONG_PAD ?? 1000) });
  const shapes = { ...turns, create: turns.one_call, long_turn: long };
  for (const [shape, { model, maxSteps }] of Object.entries(shapes)) {
    if (only ? !only.includes(shape) : shape === "create" || shape === "long_turn") continue;
    const ms = { before: [], after: [] };
    const cpu = { before: [], after: [] };
    const steps = { before: { early: [], late: [] }, after: { early: [], late: [] } };
    for (let i = 0; i < WARMUP + RUNS; i++) {
      // Alternate which side goes first, so neither always follows the other's leftovers.
      const order = i % 2 === 0 ? ["before", "after"] : ["after", "before"];
      for (const side of order) {
        const s = stacks[side];
        const c0 = cpuMsOf(s.w.userPid);
        const alone = TURN_CPU && shape !== "create";
        const r = shape === "create" ? await created(s, model, maxSteps) : alone ? await turnAlone(s, model, maxSteps) : await runtimeTurn(s, model, maxSteps);
        const { ms: t, sid } = r;
        if (i < WARMUP) continue;
        ms[side].push(t);
        cpu[side].push(alone ? r.cpu : cpuMsOf(s.w.userPid) - c0);
        if (shape === "long_turn") {
          const events = await s.api.events(sid);
          steps[side].early.push(stepMs(events, 5, 15));
          steps[side].late.push(stepMs(events, longSteps - 15, longSteps - 5));
        }
      }
    }
    const m = { before: median(ms.before), after: median(ms.after) };
    // Each pair ran back to back, so the median of their differences cancels most of the machine's drift.
    const paired = median(ms.after.map((a, i) => a - ms.before[i]));
    const pairedCpu = median(cpu.after.map((a, i) => a - cpu.before[i]));
    const sorted = cpu.after.map((a, i) => a - cpu.before[i]).sort((a, b) => a - b);
    const middle = sorted.slice(Math.floor(sorted.length / 4), Math.ceil((3 * sorted.length) / 4));
    const trimmed = middle.reduce((a, b) => a + b, 0) / middle.length;
    console.log(
      `${shape}: before ${m.before.toFixed(1)} ms, after ${m.after.toFixed(1)} ms (${((100 * (m.after - m.before)) / m.before).toFixed(1)}%; median paired difference ${paired.toFixed(2)} ms); workerd CPU per turn (${TURN_CPU && shape !== "create" ? "the turn alone" : "session creation included"}) ${median(cpu.before).toFixed(2)} -> ${median(cpu.after).toFixed(2)} ms (median paired difference ${pairedCpu.toFixed(2)} ms, mean of the middle half ${trimmed.toFixed(2)} ms)`,
    );
    if (shape === "long_turn") {
      for (const side of ["before", "after"]) {
        const early = median(steps[side].early);
        const late = median(steps[side].late);
        console.log(
          `  ${side}: ms per step, steps 5-15 ${early.toFixed(1)}, steps ${longSteps - 15}-${longSteps - 5} ${late.toFixed(1)} (late/early ${(late / early).toFixed(2)}x)`,
        );
      }
    }
  }
} finally {
  await stopAll();
  rmSync(tmp, { recursive: true, force: true });
}
process.exit(0);
