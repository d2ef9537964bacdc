// The README's quickstart as a new user runs it: the agent and the turn from its commands, watched with
// scripts/watch.mjs; and the watcher's answers to a wrong key, session or address, and to Ctrl-C.
import { type ChildProcess, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type DevRuntime, freePort, startRuntime } from "./support/wrangler-dev";

const ROOT = join(import.meta.dirname, "..", "..");
const KEY = "walkthrough-key";
let rt: DevRuntime;

beforeAll(async () => {
  rt = await startRuntime({ API_KEYS: KEY });
}, 90_000);
afterAll(() => rt?.stop());

/** The JSON bodies the README's tour sends, in order (agent, session, turn). */
function readmeBodies(): Record<string, unknown>[] {
  const readme = readFileSync(join(ROOT, "README.md"), "utf8");
  const quickstart = readme.slice(readme.indexOf("## A five-minute tour"), readme.indexOf("## Documentation"));
  return [...quickstart.matchAll(/-d '(\{.*?\})'/g)].map((m) => JSON.parse(m[1]!));
}

function watch(args: string[], env: Record<string, string>) {
  const child: ChildProcess = spawn(process.execPath, ["--experimental-websocket", "scripts/watch.mjs", ...args], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  child.stdout!.on("data", (d) => {
    out += String(d);
  });
  child.stderr!.on("data", (d) => {
    out += String(d);
  });
  const exited = new Promise<number>((resolve) => child.on("exit", (code) => resolve(code ?? -1)));
  return { child, output: () => out, exited };
}

async function until(probe: () => boolean, ms = 15_000) {
  const deadline = Date.now() + ms;
  while (!probe()) {
    if (Date.now() > deadline) throw new Error("timed out");
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe("the quickstart and the watcher", () => {
  it("shows the calculator call and the answer the README promises, and prints where to resume at once on Ctrl-C", async () => {
    const [agent, session, turn] = readmeBodies();
    const headers = { authorization: `Bearer ${KEY}`, "content-type": "application/json" };
    const call = (method: string, path: string, body: unknown) => fetch(`${rt.base}${path}`, { method, headers, body: JSON.stringify(body) });
    expect((await call("PUT", "/v1/agents/demo", { ...agent, model: "demo:fast" })).status).toBe(201);
    const { session_id } = (await (await call("POST", "/v1/sessions", session)).json()) as { session_id: string };
    const w = watch([session_id, "0"], { AGENT_RUNTIME_URL: rt.base, KEY });
    await until(() => w.output().includes("session.created"));
    expect((await call("POST", `/v1/sessions/${session_id}/turns`, turn)).status).toBe(202);
    await until(() => w.output().includes("turn.completed"));
    expect(turn).toEqual({ input: "and 6 * 7?" });
    expect(w.output()).toMatch(/tool\.started\s+calculator \{"expression":"6 \* 7"\}/);
    expect(w.output()).toMatch(/turn\.completed\s+final_answer: "The answer is 42\."/);
    const last = Math.max(...[...w.output().matchAll(/^\s*(\d+) /gm)].map((m) => Number(m[1])));
    const t0 = Date.now();
    w.child.kill("SIGINT");
    expect(await w.exited).toBe(0);
    expect(Date.now() - t0).toBeLessThan(2_000);
    expect(w.output()).toContain(`resume with: npm run watch -- ${session_id} ${last}`);
  }, 60_000);

  it("says at once that a watched session was erased, exits 1 and prints no resume hint", async () => {
    const headers = { authorization: `Bearer ${KEY}`, "content-type": "application/json" };
    const created = await fetch(`${rt.base}/v1/sessions`, { method: "POST", headers, body: JSON.stringify({ agent: { model: "demo:fast" } }) });
    const { session_id } = (await created.json()) as { session_id: string };
    const w = watch([session_id, "0"], { AGENT_RUNTIME_URL: rt.base, KEY });
    await until(() => w.output().includes("session.created"));
    expect((await fetch(`${rt.base}/v1/sessions/${session_id}`, { method: "DELETE", headers })).status).toBe(204);
    // The old watcher waited for the TCP close, which `wrangler dev` holds about 10 s.
    await until(() => w.child.exitCode !== null, 5_000);
    expect(await w.exited).toBe(1);
    expect(w.output()).toContain(`the session ${session_id} was erased`);
    expect(w.output()).not.toContain("resume with");
  }, 60_000);

  it("says what is wrong and exits 1 for a wrong key, an unknown session or a wrong address", async () => {
    const created = await fetch(`${rt.base}/v1/sessions`, {
      method: "POST",
      headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json" },
      body: JSON.stringify({ agent: { model: "demo:fast" } }),
    });
    const { session_id } = (await created.json()) as { session_id: string };
    const cases: [string[], Record<string, string>, RegExp][] = [
      [[session_id], { AGENT_RUNTIME_URL: rt.base, KEY: "wrong" }, /401 unauthorized/],
      [["ses_ffffffffffffffffffffffff"], { AGENT_RUNTIME_URL: rt.base, KEY }, /404 not_found/],
      [[session_id], { AGENT_RUNTIME_URL: `http://127.0.0.1:${await freePort()}`, KEY }, /cannot reach http:\/\/127\.0\.0\.1:\d+/],
    ];
    for (const [args, env, message] of cases) {
      const w = watch(args, env);
      expect(await w.exited).toBe(1);
      expect(w.output()).toMatch(message);
    }
  }, 60_000);
});
