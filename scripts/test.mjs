#!/usr/bin/env node
// `npm test`: the lanes in order, each as its own command; it stops at the first lane that fails, with that
// lane's exit code, and ends with a table of each lane's duration and result (also when a lane failed).
// `npm test -- engine workerd` runs only the lanes named, in the same order.
import { spawnSync } from "node:child_process";
import { delimiter, join } from "node:path";

const LANES = [
  ["check", "npm run -s check"],
  ["engine", "vitest run -c vitest.engine.config.ts"],
  ["workerd", "vitest run"],
  ["browser", "npm run -s test:browser"],
  ["node", "vitest run -c vitest.node.config.ts"],
];

const asked = process.argv.slice(2);
const unknown = asked.filter((name) => !LANES.some(([lane]) => lane === name));
if (unknown.length > 0) {
  console.error(`unknown lane ${unknown.join(", ")}; the lanes: ${LANES.map(([lane]) => lane).join(", ")}`);
  process.exit(2);
}

const root = join(import.meta.dirname, "..");
// The local binaries (vitest) as npm scripts see them, also when this runs as `node scripts/test.mjs`.
const env = { ...process.env, PATH: [join(root, "node_modules", ".bin"), process.env.PATH].join(delimiter) };
const rows = [];
let failed = 0;
const start = performance.now();
const seconds = (since) => `${((performance.now() - since) / 1000).toFixed(1)} s`;
for (const [lane, command] of LANES) {
  if (asked.length > 0 && !asked.includes(lane)) continue;
  if (failed) {
    rows.push([lane, "", "not run"]);
    continue;
  }
  const started = performance.now();
  const { status, signal } = spawnSync(command, { cwd: root, env, stdio: "inherit", shell: true });
  failed = status ?? (signal ? 1 : 0);
  rows.push([lane, seconds(started), failed ? `failed (exit ${signal ?? status})` : "passed"]);
}
rows.push(["total", seconds(start), failed ? "failed" : "passed"]);
const widths = [0, 1, 2].map((i) => Math.max(...[["lane", "duration", "result"], ...rows].map((r) => r[i].length)));
const line = (r) => `${r[0].padEnd(widths[0])}  ${r[1].padStart(widths[1])}  ${r[2]}`;
console.log(`\n${[line(["lane", "duration", "result"]), ...rows.map(line)].join("\n")}`);
process.exit(failed);
