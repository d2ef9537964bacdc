#!/usr/bin/env node
// `npm run check`: Biome (formatter and linter) and every TypeScript project type-checked, as many projects at
// once as the machine has cores (one after another they took about a minute). Prints each failing step's output and
// exits non-zero when any failed.
import { spawn } from "node:child_process";
import { availableParallelism } from "node:os";
import { delimiter, join } from "node:path";

const PROJECTS = [".", "tsconfig.engine.json", "test/node", "web/inspector", "test/browser"];

const root = join(import.meta.dirname, "..");
const env = { ...process.env, PATH: [join(root, "node_modules", ".bin"), process.env.PATH].join(delimiter) };

/** Runs `command`, resolving to its exit code and everything it printed. */
function run(command) {
  return new Promise((resolve) => {
    const child = spawn(command, { cwd: root, env, shell: true });
    let output = "";
    child.stdout.on("data", (d) => (output += d));
    child.stderr.on("data", (d) => (output += d));
    child.on("close", (code, signal) => resolve({ code: code ?? (signal ? 1 : 0), output }));
  });
}

function report(command, { code, output }) {
  if (code === 0) return 0;
  console.error(`✗ ${command} (exit ${code})\n${output}`);
  return 1;
}

// Biome (a few seconds, its own threads) runs beside the type-checks rather than before them.
const BIOME = "biome check --error-on-warnings .";
let failed = 0;
const biome = run(BIOME).then((result) => (failed += report(BIOME, result)));
const queue = PROJECTS.map((p) => `tsc --noEmit -p ${p}`);
const worker = async () => {
  for (let command = queue.shift(); command; command = queue.shift()) failed += report(command, await run(command));
};
await Promise.all([biome, ...Array.from({ length: Math.max(1, availableParallelism()) }, worker)]);
if (failed === 0) console.log(`biome and ${PROJECTS.length} TypeScript projects: no problems`);
process.exit(failed === 0 ? 0 : 1);
