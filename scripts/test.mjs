#!/usr/bin/env node
// `npm test`: the lanes in order, each as its own command; it stops at the first lane that fails, with that
// lane's exit code, and ends with a table of each lane's duration and result.
import { spawnSync } from "node:child_process";
import { delimiter, join } from "node:path";

const LANES = [
  ["check", "npm run -s check"],
  ["engine", "vitest run -c vitest.engine.config.ts"],
  ["workerd", "vitest run"],
  ["browser", "npm run -s test:browser"],
  ["node", "vitest run -c vitest.node.config.ts"],
];

const root = join(import.meta.dirname, "..");
// The local binaries (vitest) as npm scripts see them, also when this runs as `node scripts/test.mjs`.
const env = { ...process.env, PATH: [join(root, "node_modules", ".bin"), process.env.PATH].join(delimiter) };
const rows = [];
let failed = 0;
for (const [lane, command] of LANES) {
  if (failed) {
    rows.push([lane, "", "not run"]);
    continue;
  }
  const started = performance.now();
  const { status, signal } = spawnSync(command, { cwd: root, env, stdio: "inherit", shell: true });
  const seconds = `${((performance.now() - started) / 1000).toFixed(1)} s`;
  failed = status ?? (signal ? 1 : 0);
  rows.push([lane, seconds, failed ? `failed (exit ${signal ?? status})` : "passed"]);
}
const widths = [0, 1, 2].map((i) => Math.max(...[["lane", "duration", "result"], ...rows].map((r) => r[i].length)));
const line = (r) => `${r[0].padEnd(widths[0])}  ${r[1].padStart(widths[1])}  ${r[2]}`;
console.log(`\n${[line(["lane", "duration", "result"]), ...rows.map(line)].join("\n")}`);
process.exit(failed);
