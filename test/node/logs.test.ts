// Logs, as Workers Logs receives them: one JSON line per request and one per turn end, with the caller as a
// key id and never the key itself.
import { execFile, spawn } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type DevRuntime, freePort, startRuntime } from "./support/wrangler-dev";

const ROOT = join(import.meta.dirname, "..", "..");

const KEY = "log-test-key-do-not-print";
let rt: DevRuntime;

beforeAll(async () => {
  rt = await startRuntime({ API_KEYS: KEY });
}, 90_000);
afterAll(() => rt?.stop());

const lines = () =>
  rt
    .output()
    .split("\n")
    .flatMap((l) => {
      const at = l.indexOf('{"log":');
      return at >= 0 ? [JSON.parse(l.slice(at))] : [];
    });

describe("structured logs", () => {
  it("writes a line per request and per turn end, without keys or payloads", async () => {
    const headers = { authorization: `Bearer ${KEY}`, "content-type": "application/json" };
    const created = await fetch(`${rt.base}/v1/sessions`, { method: "POST", headers, body: JSON.stringify({ agent: { name: "logged", model: "demo:fast" } }) });
    const { session_id } = (await created.json()) as { session_id: string };
    const turn = await fetch(`${rt.base}/v1/sessions/${session_id}/turns`, { method: "POST", headers, body: JSON.stringify({ input: "a secret input" }) });
    const { turn_id } = (await turn.json()) as { turn_id: string };
    await fetch(`${rt.base}/v1/agents`, { headers: { authorization: "Bearer wrong" } });

    const deadline = Date.now() + 10_000;
    while (!lines().some((l) => l.log === "turn") && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    const requests = lines().filter((l) => l.log === "request");
    expect(requests).toContainEqual(
      expect.objectContaining({ method: "POST", route: "/v1/sessions/:sid/turns", status: 202, caller: expect.stringMatching(/^key_[0-9a-f]{16}$/) }),
    );
    expect(requests).toContainEqual(expect.objectContaining({ method: "GET", status: 401, caller: null }));
    expect(requests.every((l) => typeof l.duration_ms === "number")).toBe(true);
    expect(lines().find((l) => l.log === "turn")).toMatchObject({
      session_id,
      turn_id,
      agent: "logged",
      status: "completed",
      stop_reason: "final_answer",
      input_tokens: expect.any(Number),
      output_tokens: expect.any(Number),
    });
    expect(rt.output()).not.toContain(KEY);
    expect(rt.output()).not.toContain("a secret input");
  }, 60_000);
});

describe("npm start's console", () => {
  it("shows one line per request (wrangler's) and the runtime's turn-end line", async () => {
    const hadVars = existsSync(join(ROOT, ".dev.vars"));
    const state = mkdtempSync(join(tmpdir(), "dev-logs-"));
    const port = await freePort();
    const dev = spawn(process.execPath, ["scripts/dev.mjs", "--persist-to", state, "--inspector-port", String(await freePort())], {
      cwd: ROOT,
      env: { ...process.env, PORT: String(port), CI: "1", WRANGLER_SEND_METRICS: "false", LOGS: undefined },
      stdio: ["ignore", "pipe", "pipe"],
      detached: true,
    });
    let out = "";
    dev.stdout!.on("data", (d) => {
      out += String(d);
    });
    const until = async (probe: () => Promise<boolean> | boolean) => {
      for (const deadline = Date.now() + 60_000; !(await probe()); await new Promise((r) => setTimeout(r, 200))) {
        if (Date.now() > deadline) throw new Error(`timed out; output:\n${out}`);
      }
    };
    try {
      const base = `http://127.0.0.1:${port}`;
      await until(() =>
        fetch(`${base}/healthz`).then(
          (r) => r.ok,
          () => false,
        ),
      );
      const key = /^API_KEYS=([^,\n]+)/m.exec(readFileSync(join(ROOT, ".dev.vars"), "utf8"))![1]!.trim();
      const headers = { authorization: `Bearer ${key}`, "content-type": "application/json" };
      expect((await fetch(`${base}/v1/agents/log-probe`, { headers })).status).toBe(404);
      const created = await fetch(`${base}/v1/sessions`, { method: "POST", headers, body: JSON.stringify({ agent: { model: "demo:fast" } }) });
      const { session_id } = (await created.json()) as { session_id: string };
      await fetch(`${base}/v1/sessions/${session_id}/turns`, { method: "POST", headers, body: JSON.stringify({ input: "hi" }) });
      await until(() => out.includes('{"log":"turn"'));
      expect(out.split("\n").filter((l) => l.includes("/v1/agents/log-probe"))).toHaveLength(1);
      expect(out).not.toContain('{"log":"request"');

      // The banner's commands are real: run as printed, in a fresh shell, they register an agent and chat with it.
      const printed = out.split("and talk to it:\n\n")[1]?.split("\n\n")[0] ?? "";
      expect(printed).toContain(`export KEY=${key} AGENT_RUNTIME_URL=${base}`);
      expect(out).toContain(`Inspector: ${base}/inspect`);
      const { stdout } = await promisify(execFile)("bash", ["-eo", "pipefail", "-c", printed], {
        cwd: ROOT,
        env: { PATH: process.env.PATH, HOME: process.env.HOME },
      });
      expect(stdout).toMatch(/^\{"name":"demo","model":"demo:fast",/);
      expect(stdout).toContain("The answer is 14.");
    } finally {
      process.kill(-dev.pid!, "SIGKILL");
      rmSync(state, { recursive: true, force: true });
      if (!hadVars) rmSync(join(ROOT, ".dev.vars"), { force: true });
    }
  }, 90_000);

  it("leaves out workerd's warning about an overdue alarm it runs at start, and passes the rest of wrangler's errors and its exit code on", async () => {
    // A stand-in for `npx wrangler dev`, first on PATH: it writes what workerd logs on a restart with a session
    // whose alarm fell due meanwhile, then another warning, and exits 3.
    const dir = mkdtempSync(join(tmpdir(), "dev-stderr-"));
    mkdirSync(join(dir, "bin"));
    const npx = join(dir, "bin", "npx");
    writeFileSync(
      npx,
      [
        "#!/bin/sh",
        "printf '▲ [WARNING] workerd/server/alarm-scheduler.c++:123: warning: NOSENTRY SQLite alarm overdue, running despite AlarmManager mismatch\\n\\n' >&2",
        "printf '▲ [WARNING] another warning\\n' >&2",
        "exit 3",
      ].join("\n"),
    );
    chmodSync(npx, 0o755);
    try {
      const result = await promisify(execFile)(process.execPath, [join(ROOT, "scripts", "dev.mjs")], {
        cwd: dir,
        env: { ...process.env, PATH: `${join(dir, "bin")}:${process.env.PATH}` },
      }).catch((err: { code: number; stderr: string }) => err);
      expect("code" in result ? result.code : 0).toBe(3);
      expect(result.stderr).toContain("another warning");
      expect(result.stderr).not.toContain("NOSENTRY");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
