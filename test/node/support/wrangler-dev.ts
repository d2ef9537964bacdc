// Runs the runtime under `wrangler dev` (offline, its own state directory and variables) for tests that
// need a whole process: settings that differ from the test pool's, or a process that dies and comes back.
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

const ROOT = join(import.meta.dirname, "..", "..", "..");

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });
}

export interface DevRuntime {
  base: string;
  /** Everything the process wrote to stdout and stderr so far. */
  output(): string;
  /** A JSON request with the first of the vars' API_KEYS: its status and its parsed body (null when empty). */
  call(method: string, path: string, body?: unknown): Promise<{ status: number; body: any }>;
  /** The same request with another credential (a key or a token); also answers the response headers. */
  callAs(credential: string, method: string, path: string, body?: unknown): Promise<{ status: number; headers: Headers; body: any }>;
  stop(): Promise<void>;
}

/** `cwd`: the project to run (default the runtime's own; examples/custom-tools is a tenant's Worker). */
export async function startRuntime(vars: Record<string, string>, cwd = ROOT): Promise<DevRuntime> {
  const port = await freePort();
  const state = mkdtempSync(join(tmpdir(), "agent-runtime-test-"));
  const args = ["wrangler", "dev", "--port", String(port), "--ip", "127.0.0.1", "--persist-to", state, "--inspector-port", String(await freePort())];
  for (const [k, v] of Object.entries(vars)) args.push("--var", `${k}:${v}`);
  const child: ChildProcess = spawn("npx", args, {
    cwd,
    env: { ...process.env, WRANGLER_SEND_METRICS: "false", CI: "1" },
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  let stdout = "";
  const append = (d: Buffer) => {
    stdout += String(d);
  };
  child.stdout!.on("data", append);
  child.stderr!.on("data", append);
  const base = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    try {
      if ((await fetch(`${base}/healthz`)).ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error("wrangler dev did not start within 60 s");
    await new Promise((r) => setTimeout(r, 200));
  }
  const callAs = async (credential: string, method: string, path: string, body?: unknown) => {
    const headers = { authorization: `Bearer ${credential}`, "content-type": "application/json" };
    const res = await fetch(`${base}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    const text = await res.text();
    return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : null };
  };
  const firstKey = vars.API_KEYS?.split(",")[0] ?? "";
  return {
    base,
    output: () => stdout,
    call: (method, path, body) => callAs(firstKey, method, path, body),
    callAs,
    async stop() {
      try {
        process.kill(-child.pid!, "SIGTERM");
      } catch {
        // already gone
      }
      await new Promise((r) => setTimeout(r, 300));
      // A workerd of the group that did not end on SIGTERM (one stuck in a busy loop ignores it) must not outlive the test.
      try {
        process.kill(-child.pid!, "SIGKILL");
      } catch {
        // all gone
      }
      rmSync(state, { recursive: true, force: true });
    },
  };
}
