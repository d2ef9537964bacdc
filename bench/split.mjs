#!/usr/bin/env node
// `node bench/split.mjs [one_call|tool_turn] [N]`: where the wall time of the e2e phase's turn goes, seen from
// outside, for the runtime, the durable floor and the bare loop inside workerd: from the POST to the first
// request reaching the scripted server, the server's own time, and from its last response to the turn's end
// (the runtime's turn.completed frame; the baselines' HTTP answer). For the runtime also when its first frames
// arrived. The scripted server stamps each request with the monotonic clock this process reads too (GET /marks).
// Medians of N turns a side (default 40), alternating, after 3 warm-ups.
import { resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { median, now } from "./lib/client.mjs";
import { e2eShapes, runtimeTurn, workerdLoop } from "./lib/e2e.mjs";
import { startStack } from "./lib/stack.mjs";

const ROOT = resolve(fileURLToPath(import.meta.url), "..", "..");
const SHAPE = process.argv[2] ?? "one_call";
const N = Number(process.argv[3] ?? 40);
const FRAMES = ["turn.submitted", "model.requested", "turn.completed"];

const stack = await startStack({ root: ROOT, log: () => {} });
// performance.now() and the server's process.hrtime() are both the monotonic clock, from different origins.
const originUs = Number(process.hrtime.bigint() / 1000n) - now() * 1000;
const marks = stack.fake.marks;
const { model, maxSteps } = e2eShapes({ steps: 10, calls: 4, deltas: 5 })[SHAPE];

function split(t0, t1, requests) {
  const us = (t) => t * 1000 + originUs;
  const first = requests[0];
  const last = requests.at(-1);
  return {
    before_first_request: (first.arrived_us - us(t0)) / 1000,
    in_server: requests.reduce((sum, r) => sum + (r.sent_us - r.arrived_us), 0) / 1000,
    after_last_response: (us(t1) - last.sent_us) / 1000,
    total: t1 - t0,
  };
}

/** A baseline side: the bare loop inside workerd at `path`, timed around its HTTP answer. */
const baseline = (path) => async () => {
  await marks();
  const t0 = now();
  await workerdLoop(stack, model, maxSteps, path);
  return split(t0, now(), await marks());
};

const sides = {
  runtime: async () => {
    await marks();
    const r = await runtimeTurn(stack, model, maxSteps);
    const out = split(r.t0, r.t0 + r.ms, await marks());
    for (const type of FRAMES) {
      const f = r.frames.find((x) => x.t >= r.t0 && x.s.includes(`"type":"${type}"`));
      out[`${type} frame`] = f ? f.t - r.t0 : Number.NaN;
    }
    return out;
  },
  durable_floor: baseline("/durable-run"),
  bare_workerd: baseline("/run"),
};

try {
  const rows = Object.fromEntries(Object.keys(sides).map((k) => [k, []]));
  for (let i = 0; i < N + 3; i++) {
    for (const [side, run] of Object.entries(sides)) {
      const r = await run();
      if (i >= 3) rows[side].push(r);
    }
  }
  console.log(`${SHAPE}, medians of ${N} turns a side (ms)`);
  for (const [side, list] of Object.entries(rows)) {
    const cols = Object.keys(list[0]).map((k) => `${k.replaceAll("_", " ")} ${median(list.map((r) => r[k])).toFixed(2)}`);
    console.log(`  ${side.padEnd(14)} ${cols.join(", ")}`);
  }
} finally {
  await stack.stop();
}
