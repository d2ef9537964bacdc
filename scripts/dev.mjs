#!/usr/bin/env node
// `npm start`: runs the runtime locally with `wrangler dev` (offline: local Durable Objects, SQLite and R2).
// On first start it writes a git-ignored .dev.vars with a random API key and prints how to use it.
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { createInterface } from "node:readline";

const VARS = ".dev.vars";
const PORT = process.env.PORT ?? "8787";

if (!existsSync(VARS)) {
  const key = `dev_${randomBytes(18).toString("hex")}`;
  writeFileSync(
    VARS,
    [
      "# Local settings for `npm start` (git-ignored). Add provider keys here to use real models.",
      `API_KEYS=${key}`,
      "# Signs the short-lived browser tokens of POST /v1/tokens:",
      `TOKEN_SIGNING_SECRET=${randomBytes(24).toString("hex")}`,
      "# URL prefixes HTTP tools may call (scheme, host, port and path prefix), comma-separated:",
      "TOOL_URL_ALLOWLIST=http://127.0.0.1:9000/",
      "CORS_ORIGINS=*",
      "# OPENAI_API_KEY=",
      "# ANTHROPIC_API_KEY=",
      "# OPENAI_COMPATIBLE_BASE_URL=http://127.0.0.1:11434/v1",
      "",
    ].join("\n"),
  );
  console.log(`Created ${VARS} with a random local API key.`);
}

const key = /^API_KEYS=([^,\n]+)/m.exec(readFileSync(VARS, "utf8"))?.[1]?.trim() ?? "<your key>";
const base = `http://127.0.0.1:${PORT}`;
// The commands are written here only; test/node/logs.test.ts runs what this prints against `npm start`.
const commands = [
  `export KEY=${key} AGENT_RUNTIME_URL=${base}`,
  `curl -s -X PUT $AGENT_RUNTIME_URL/v1/agents/demo -H "authorization: Bearer $KEY" -H "content-type: application/json" -d '{"model":"demo:fast","tools":["calculator","clock"]}'`,
  `echo "what is 2 * (3 + 4)?" | npx agent-runtime chat --agent demo`,
];
console.log(`
Agent runtime starting on ${base} (offline; the built-in "demo" model needs no provider key).
Inspector: ${base}/inspect (sign in with the API key ${key}).
In a second terminal, register an agent on the demo model and talk to it:

${commands.join("\n")}

README.md's tour goes on from there.
`);

// wrangler prints a line per request already; the runtime's own JSON line per request (what Workers Logs
// gets in production) would double it, so locally only its turn-end lines are written (LOGS=request,turn for both).
const logs = process.env.LOGS || "turn";
// Arguments after `npm start --` go to wrangler dev (such as --persist-to <dir>).
const args = ["wrangler", "dev", "--port", PORT, "--ip", "127.0.0.1", "--var", `LOGS:${logs}`, ...process.argv.slice(2)];
const child = spawn("npx", args, {
  stdio: ["inherit", "inherit", "pipe"],
  // Offline: no metrics, and no download of request.cf data (it fails without a network; Miniflare's
  // placeholder values serve). Set CLOUDFLARE_CF_FETCH_ENABLED=true to fetch them.
  env: { WRANGLER_SEND_METRICS: "false", CLOUDFLARE_CF_FETCH_ENABLED: "false", ...process.env },
});
// workerd warns "NOSENTRY SQLite alarm overdue" when a session's alarm fell due while the runtime was stopped
// and runs it at start: that alarm is the runtime resuming the session, as designed, so the line is dropped
// (with the blank line wrangler puts after a warning).
let dropped = false;
createInterface({ input: child.stderr }).on("line", (line) => {
  const drop = line.includes("NOSENTRY SQLite alarm overdue") || (dropped && line.trim() === "");
  dropped = line.includes("NOSENTRY SQLite alarm overdue");
  if (!drop) process.stderr.write(`${line}\n`);
});
child.on("exit", (code) => process.exit(code ?? 0));
for (const sig of ["SIGINT", "SIGTERM"]) process.on(sig, () => child.kill(sig));
