#!/usr/bin/env node
// The `agent-runtime` command line. The commands live in src/client/cli.ts (TypeScript, shared with the
// client and tested inside workerd); this launcher gives them a terminal. On first use, and whenever a
// source file changed, it compiles src/client/cli.ts with the esbuild that `npm install` puts in
// node_modules (a dependency of wrangler and vitest) into node_modules/.cache/agent-runtime-cli/. Node 20
// and 21 have WebSocket only behind a flag: the launcher runs itself again with it.
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { dirname, join, resolve } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath, pathToFileURL } from "node:url";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const ENTRY = join(ROOT, "src/client/cli.ts");
const OUT_DIR = join(ROOT, "node_modules/.cache/agent-runtime-cli");
const OUT_FILE = join(OUT_DIR, "cli.mjs");
const INPUTS_FILE = join(OUT_DIR, "inputs.json");

function fail(message, code = 1) {
  process.stderr.write(`agent-runtime: ${message}\n`);
  process.exit(code);
}

if (typeof globalThis.WebSocket === "undefined") {
  if (process.env.AGENT_RUNTIME_CLI_REEXEC) fail("this Node has no WebSocket even with --experimental-websocket; use Node 20.10 or newer");
  const child = spawn(
    process.execPath,
    ["--experimental-websocket", "--no-warnings=ExperimentalWarning", fileURLToPath(import.meta.url), ...process.argv.slice(2)],
    {
      stdio: "inherit",
      env: { ...process.env, AGENT_RUNTIME_CLI_REEXEC: "1" },
    },
  );
  // Ctrl-C reaches both processes (one process group): the child decides what it means.
  process.on("SIGINT", () => {});
  child.on("exit", (code, signal) => process.exit(code ?? (signal === "SIGINT" ? 130 : 1)));
} else {
  await main();
}

/** Whether the compiled CLI is missing or older than any file it was built from. */
function stale() {
  if (!existsSync(OUT_FILE) || !existsSync(INPUTS_FILE)) return true;
  const built = statSync(OUT_FILE).mtimeMs;
  try {
    const inputs = JSON.parse(readFileSync(INPUTS_FILE, "utf8"));
    return inputs.some((file) => !existsSync(join(ROOT, file)) || statSync(join(ROOT, file)).mtimeMs > built);
  } catch {
    return true;
  }
}

async function build() {
  let esbuild;
  try {
    esbuild = createRequire(join(ROOT, "package.json"))("esbuild");
  } catch {
    fail(`compiling the CLI needs esbuild: run \`npm install\` in ${ROOT}`);
  }
  const result = await esbuild.build({
    entryPoints: [ENTRY],
    absWorkingDir: ROOT,
    bundle: true,
    format: "esm",
    platform: "neutral",
    target: "es2022",
    write: false,
    metafile: true,
    logLevel: "silent",
  });
  mkdirSync(OUT_DIR, { recursive: true });
  // Written next to the target and renamed, so two CLIs building at once never read half a file.
  const tmp = `${OUT_FILE}.${process.pid}.tmp`;
  writeFileSync(tmp, result.outputFiles[0].contents);
  renameSync(tmp, OUT_FILE);
  writeFileSync(INPUTS_FILE, JSON.stringify(Object.keys(result.metafile.inputs)));
}

/** The terminal: stdout/stderr, one readline interface (created on the first question), Ctrl-C. */
function terminalIO() {
  let rl = null;
  let ended = false;
  const interruptHandlers = new Set();
  const fire = () => {
    for (const h of [...interruptHandlers]) h();
  };
  const onEnd = new Set();
  const readline = () => {
    if (rl) return rl;
    rl = createInterface({ input: process.stdin, output: process.stdout, terminal: !!process.stdin.isTTY });
    // In a terminal, readline takes Ctrl-C itself (raw mode): without this listener it would only pause.
    rl.on("SIGINT", () => (interruptHandlers.size > 0 ? fire() : process.exit(130)));
    rl.on("close", () => {
      ended = true;
      for (const f of [...onEnd]) f();
    });
    return rl;
  };
  // Without a command listening for Ctrl-C (agents, tree, ...), it ends the process as usual.
  process.on("SIGINT", () => (interruptHandlers.size > 0 ? fire() : process.exit(130)));
  return {
    stdout: (text) => process.stdout.write(text),
    stderr: (text) => process.stderr.write(text),
    question(prompt, signal) {
      const r = readline();
      if (ended || signal?.aborted) return Promise.resolve(null);
      return new Promise((resolve) => {
        const done = (value) => {
          onEnd.delete(end);
          signal?.removeEventListener("abort", abort);
          resolve(value);
        };
        const end = () => done(null);
        const abort = () => done(null);
        onEnd.add(end);
        signal?.addEventListener("abort", abort, { once: true });
        // With the signal, an aborted question is withdrawn from readline (the next one gets the next line).
        r.question(prompt, signal ? { signal } : {}, (answer) => done(answer));
      });
    },
    readFile: (path) => readFile(resolve(process.cwd(), path), "utf8"),
    redrawPrompt: () => rl?.prompt(true),
    onInterrupt(handler) {
      interruptHandlers.add(handler);
      return () => interruptHandlers.delete(handler);
    },
    env: process.env,
    color: !!process.stdout.isTTY && !process.env.NO_COLOR,
    close: () => rl?.close(),
  };
}

async function main() {
  if (stale()) {
    try {
      await build();
    } catch (err) {
      fail(`could not compile the CLI: ${err?.message ?? err}`);
    }
  }
  const { runCli } = await import(pathToFileURL(OUT_FILE).href);
  const io = terminalIO();
  const code = await runCli(process.argv.slice(2), io);
  io.close();
  // Sockets or timers may still be open: leave now, once the output is flushed.
  process.stdout.write("", () => process.exit(code));
}
