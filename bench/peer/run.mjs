#!/usr/bin/env node
// `npm run bench:peer`: the end-to-end turn of `npm run bench` (bench/lib/e2e.mjs) measured on the runtime, on
// the closest peer (the Cloudflare Agents SDK's chat agent, bench/peer/worker.ts, driven over its WebSocket
// chat protocol by chat-client.mjs) and on the bare generateText loop in Node and inside workerd. Same
// scripted model, same webhook tool, alternating, each runtime and peer turn in a fresh session or agent
// instance. The peer's packages live in bench/peer/package.json and are installed here on first use.
// Sizes: BENCH_E2E_STEPS / _CALLS / _DELTAS / _RUNS as for `npm run bench`; BENCH_VIA_PROXY=1, BENCH_DEV_NETWORK=1
// and BENCH_DEV_CONSOLE=1 as there (wrangler's proxy in the path, the DevTools Network and Runtime domains left
// on) apply to every worker.
import { execFileSync } from "node:child_process";
import { createWriteStream, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { bareLoop } from "../lib/bare-loop.mjs";
import { median } from "../lib/client.mjs";
import { connectInspector } from "../lib/cpuprofile.mjs";
import { e2eShapes, runtimeTurn, workerdLoop } from "../lib/e2e.mjs";
import { cpuMsOf, freePort, settle, startWrangler, stopAll } from "../lib/procs.mjs";
import { startStack, withoutDevRelays } from "../lib/stack.mjs";
import { peerClient } from "./chat-client.mjs";

const PEER = dirname(fileURLToPath(import.meta.url));
const ROOT = resolve(PEER, "..", "..");
const env = (name, dflt) => Number(process.env[name] ?? dflt);
const CFG = {
  steps: env("BENCH_E2E_STEPS", 10),
  calls: env("BENCH_E2E_CALLS", 4),
  deltas: env("BENCH_E2E_DELTAS", 5),
  runs: env("BENCH_E2E_RUNS", 9),
  warmup: 1,
  viaProxy: process.env.BENCH_VIA_PROXY === "1",
  devNetwork: process.env.BENCH_DEV_NETWORK === "1",
  devConsole: process.env.BENCH_DEV_CONSOLE === "1",
};
const SIDES = ["runtime", "peer", "bare_node", "bare_workerd"];

const stamp = new Date().toISOString().replace(/[:.]/g, "-");
const resultsDir = join(ROOT, "bench", "results");
mkdirSync(resultsDir, { recursive: true });
const logPath = join(resultsDir, `peer-${stamp}.log`);
const logStream = createWriteStream(logPath);
const log = (s) => logStream.write(String(s).endsWith("\n") ? String(s) : `${s}\n`);
const say = (s) => {
  process.stdout.write(`${s}\n`);
  log(s);
};

const version = (dir, pkg) => {
  try {
    return JSON.parse(readFileSync(join(dir, "node_modules", pkg, "package.json"), "utf8")).version;
  } catch {
    return null;
  }
};

/** Runs `npm ci` (exactly the lockfile) in bench/peer unless every pinned dependency is installed at its version. */
function ensureInstalled() {
  const { dependencies } = JSON.parse(readFileSync(join(PEER, "package.json"), "utf8"));
  if (Object.entries(dependencies).every(([pkg, v]) => version(PEER, pkg) === v)) return;
  say("installing the peer's packages (npm ci in bench/peer) ...");
  execFileSync("npm", ["ci", "--no-audit", "--no-fund"], { cwd: PEER, stdio: "inherit" });
}

/** The peer worker under `wrangler dev`, with the DevTools relays off as for the other workers. */
async function startPeer(stack) {
  const w = await startWrangler({
    cwd: ROOT,
    config: join(PEER, "wrangler.toml"),
    port: await freePort(),
    inspectorPort: await freePort(),
    persistTo: join(stack.tmp, "peer"),
    vars: { OPENAI_COMPATIBLE_BASE_URL: stack.fake.baseUrl },
    readyPath: "/healthz",
    log,
    label: "peer",
  });
  const inspector = await connectInspector(w.inspectorPort);
  await withoutDevRelays(inspector, CFG);
  return { w, inspector, base: CFG.viaProxy || !w.direct ? w.base : w.direct };
}

/** CPU ms used so far by the process serving each side (this process for the bare loop in Node). */
function cpuBySide(stack, peer) {
  const node = process.cpuUsage();
  return {
    runtime: cpuMsOf(stack.rt.userPid),
    peer: cpuMsOf(peer.w.userPid),
    bare_node: (node.user + node.system) / 1000,
    bare_workerd: cpuMsOf(stack.bl.userPid),
  };
}

async function compare(stack, peerSide) {
  const bare = bareLoop(stack.fake.baseUrl);
  const peer = peerClient(peerSide.base);
  const pids = [stack.rt.userPid, peerSide.w.userPid, stack.bl.userPid];
  const out = {};
  for (const [name, { model, maxSteps }] of Object.entries(e2eShapes(CFG))) {
    const toolCalls = name === "tool_turn" ? CFG.steps * CFG.calls : 0;
    const run = {
      runtime: () => runtimeTurn(stack, model, maxSteps),
      peer: async () => {
        const r = await peer(model, maxSteps);
        if (r.tool_outputs !== toolCalls) throw new Error(`peer turn had ${r.tool_outputs} tool results, expected ${toolCalls}`);
        return r;
      },
      bare_node: () => bare(model, maxSteps),
      bare_workerd: () => workerdLoop(stack, model, maxSteps),
    };
    const ms = Object.fromEntries(SIDES.map((s) => [s, []]));
    // CPU per turn: each workerd over the whole alternation (it is idle during the other sides' turns, and
    // this way its work after a turn's last frame counts too); this process only around the bare loop.
    const cpu = Object.fromEntries(SIDES.map((s) => [s, 0]));
    await settle(pids);
    const cpu0 = cpuBySide(stack, peerSide);
    for (let i = 0; i < CFG.warmup + CFG.runs; i++) {
      const r = {};
      for (const side of SIDES) {
        const before = side === "bare_node" ? cpuBySide(stack, peerSide).bare_node : 0;
        r[side] = (await run[side]()).ms;
        if (side === "bare_node") cpu.bare_node += cpuBySide(stack, peerSide).bare_node - before;
      }
      if (i >= CFG.warmup) for (const side of SIDES) ms[side].push(r[side]);
    }
    await settle(pids);
    const cpu1 = cpuBySide(stack, peerSide);
    const turns = CFG.warmup + CFG.runs;
    const cpuPerTurn = Object.fromEntries(SIDES.map((s) => [s, (s === "bare_node" ? cpu.bare_node : cpu1[s] - cpu0[s]) / turns]));
    const med = Object.fromEntries(SIDES.map((s) => [s, median(ms[s])]));
    out[name] = {
      model,
      max_steps: maxSteps,
      model_calls: name === "tool_turn" ? CFG.steps + 1 : 1,
      ms,
      median: med,
      ratio_runtime_to_peer: med.runtime / med.peer,
      median_of_ratios_runtime_to_peer: median(ms.runtime.map((x, i) => x / ms.peer[i])),
      cpu_ms_per_turn: cpuPerTurn,
    };
    say(
      `   ${name}: runtime ${med.runtime.toFixed(1)} ms, peer ${med.peer.toFixed(1)} ms, bare (Node) ${med.bare_node.toFixed(1)} ms, bare in workerd ${med.bare_workerd.toFixed(1)} ms; runtime/peer ${out[name].ratio_runtime_to_peer.toFixed(2)}x (median of per-run ratios ${out[name].median_of_ratios_runtime_to_peer.toFixed(2)}x), runtime/bare ${(med.runtime / med.bare_node).toFixed(2)}x, peer/bare ${(med.peer / med.bare_node).toFixed(2)}x`,
    );
  }
  return out;
}

function rows(r) {
  const f = (x, d = 1) => Number(x).toFixed(d);
  const t = r.tool_turn;
  const o = r.one_call;
  const per = (side) => f(t.median[side] / t.model_calls, 1);
  const marginal = (side) => f((t.median[side] - o.median[side]) / CFG.steps, 1);
  const lines = ["| measurement | runtime / peer / bare (Node) / bare (workerd) | ratio runtime / peer |", "|---|---|---|"];
  const row = (label, side, ratio) => lines.push(`| ${label} | ${SIDES.map(side).join(" / ")} | ${ratio} |`);
  row(
    `Tool turn (${CFG.steps} steps x ${CFG.calls} webhook calls + answer), ms`,
    (s) => f(t.median[s]),
    `${f(t.ratio_runtime_to_peer, 2)}x (per-run median ${f(t.median_of_ratios_runtime_to_peer, 2)}x)`,
  );
  row(`Tool turn, ms per step (turn / ${t.model_calls} model calls)`, per, `${f(t.median.runtime / t.median.peer, 2)}x`);
  row("Tool turn, ms per added tool step ((tool turn - one-call turn) / steps)", marginal, `${f(marginal("runtime") / marginal("peer"), 2)}x`);
  row("One-call turn, ms", (s) => f(o.median[s]), `${f(o.ratio_runtime_to_peer, 2)}x (per-run median ${f(o.median_of_ratios_runtime_to_peer, 2)}x)`);
  row("Tool turn, CPU ms per turn (the serving process)", (s) => f(t.cpu_ms_per_turn[s]), `${f(t.cpu_ms_per_turn.runtime / t.cpu_ms_per_turn.peer, 2)}x`);
  row("One-call turn, CPU ms per turn", (s) => f(o.cpu_ms_per_turn[s]), `${f(o.cpu_ms_per_turn.runtime / o.cpu_ms_per_turn.peer, 2)}x`);
  return lines.join("\n");
}

async function main() {
  ensureInstalled();
  const t0 = Date.now();
  say(`agent-runtime bench:peer; log ${logPath}`);
  const stack = await startStack({ root: ROOT, log, viaProxy: CFG.viaProxy, devNetwork: CFG.devNetwork, devConsole: CFG.devConsole });
  let peer;
  try {
    peer = await startPeer(stack);
    say(
      `started in ${((Date.now() - t0) / 1000).toFixed(1)} s: runtime ${stack.rtBase}, peer ${peer.base}, baseline ${stack.blBase}; ${CFG.runs} runs + ${CFG.warmup} warm-up${CFG.viaProxy ? "; via wrangler's proxy" : ""}${CFG.devNetwork ? "; DevTools Network on" : ""}`,
    );
    const results = await compare(stack, peer);
    const out = {
      started_at: new Date(t0).toISOString(),
      git_commit: execFileSync("git", ["rev-parse", "HEAD"], { cwd: ROOT, encoding: "utf8" }).trim(),
      node: process.version,
      versions: {
        wrangler: version(ROOT, "wrangler"),
        ai: version(ROOT, "ai"),
        agents: version(PEER, "agents"),
        "@cloudflare/ai-chat": version(PEER, "@cloudflare/ai-chat"),
        peer_ai: version(PEER, "ai"),
      },
      config: CFG,
      results,
    };
    const jsonPath = join(resultsDir, `peer-${stamp}.json`);
    writeFileSync(jsonPath, `${JSON.stringify(out, null, 2)}\n`);
    const v = out.versions;
    say(
      `\nagents ${v.agents}, @cloudflare/ai-chat ${v["@cloudflare/ai-chat"]}, ai ${v.peer_ai} (peer) / ${v.ai} (runtime), wrangler ${v.wrangler}, node ${out.node}\n`,
    );
    say(rows(results));
    say(`\nJSON: ${jsonPath}\nlog:  ${logPath}\ntotal ${((Date.now() - t0) / 1000).toFixed(0)} s`);
  } finally {
    peer?.inspector.close();
    await Promise.all([peer?.w.stop(), stack.stop()]);
  }
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
  say(`bench:peer failed: ${err?.stack ?? err}`);
  process.exitCode = 1;
} finally {
  await stopAll();
  logStream.end();
}
