#!/usr/bin/env node
// `npm start`: runs the runtime locally with `wrangler dev` (offline: local Durable Objects, SQLite and R2).
// On first start it writes a git-ignored .dev.vars with a random API key and prints how to use it.
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, readFileSync, writeFileSync } from "node:fs";

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
// The commands are the README's own (its Quickstart), so what is printed and what is documented never differ.
const readme = readFileSync(new URL("../README.md", import.meta.url), "utf8");
const blocks = [...readme.slice(readme.indexOf("In a second terminal")).matchAll(/```sh\n([\s\S]*?)```/g)].slice(0, 2).map((m) => m[1]);
const [setup, turn] = blocks.map((b) => b.replace("export KEY=dev_...", `export KEY=${key}`).replace("http://127.0.0.1:8787", base));
console.log(`
Agent runtime starting on ${base} (offline; the built-in "demo" model needs no provider key).
Inspector: ${base}/inspect (sign in with the API key ${key}).
In a second terminal:

${setup}
and in a third (with KEY, AGENT_RUNTIME_URL and SID set the same way):

${turn}`);

// wrangler prints a line per request already; the runtime's own JSON line per request (what Workers Logs
// gets in production) would double it, so locally only its turn-end lines are written (LOGS=request,turn for both).
const logs = process.env.LOGS || "turn";
// Arguments after `npm start --` go to wrangler dev (such as --persist-to <dir>).
const args = ["wrangler", "dev", "--port", PORT, "--ip", "127.0.0.1", "--var", `LOGS:${logs}`, ...process.argv.slice(2)];
const child = spawn("npx", args, {
  stdio: "inherit",
  // Offline: no metrics, and no download of request.cf data (it fails without a network; Miniflare's
  // placeholder values serve). Set CLOUDFLARE_CF_FETCH_ENABLED=true to fetch them.
  env: { WRANGLER_SEND_METRICS: "false", CLOUDFLARE_CF_FETCH_ENABLED: "false", ...process.env },
});
child.on("exit", (code) => process.exit(code ?? 0));
for (const sig of ["SIGINT", "SIGTERM"]) process.on(sig, () => child.kill(sig));
