// The README's fork, replay and eval examples, run as written (bash, curl, sed, the CLI) against the runtime
// under `wrangler dev` on the demo model, after the Quickstart's turn: no jq, no provider key, no fixed port.
import { execFile } from "node:child_process";
import { readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { codeBlocks, ROOT, readmeSection } from "./support/markdown";
import { type DevRuntime, startRuntime } from "./support/wrangler-dev";

const run = promisify(execFile);
const KEY = "readme-examples-key";
let rt: DevRuntime;
let sid: string;
const headers = { authorization: `Bearer ${KEY}`, "content-type": "application/json" };
const call = async (method: string, path: string, body?: unknown) =>
  (await fetch(`${rt.base}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) })).json() as Promise<any>;

async function until<T>(probe: () => Promise<T | undefined>, ms = 30_000): Promise<T> {
  for (const deadline = Date.now() + ms; ; ) {
    const found = await probe();
    if (found !== undefined) return found;
    if (Date.now() > deadline) throw new Error("timed out");
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Runs a README block with bash -e, with the Quickstart's variables set, in the repository. */
async function bash(block: string): Promise<string> {
  const { stdout } = await run("bash", ["-e", "-c", block], { cwd: ROOT, env: { ...process.env, KEY, AGENT_RUNTIME_URL: rt.base, SID: sid } });
  return stdout;
}

beforeAll(async () => {
  rt = await startRuntime({ API_KEYS: KEY });
  // The Quickstart's agent and turn (on the quick demo model, which answers the same way).
  await call("PUT", "/v1/agents/demo", { model: "demo:fast", tools: ["calculator", "clock"] });
  sid = (await call("POST", "/v1/sessions", { agent: "demo" })).session_id;
  await call("POST", `/v1/sessions/${sid}/turns`, { input: "what is 2 * (3 + 4)?" });
  await until(async () => ((await call("GET", `/v1/sessions/${sid}/thread`)).last_outcome ? true : undefined));
}, 90_000);
afterAll(async () => {
  rmSync(join(ROOT, "candidate.json"), { force: true });
  await rt?.stop();
});

describe("the README's fork, replay and eval examples", () => {
  const [fork, replay, evaluate] = codeBlocks(readmeSection("### Forking a session", "### MCP"), "sh");

  it("forks the Quickstart's session after its tool result onto a registered agent", async () => {
    const { events } = await call("GET", `/v1/sessions/${sid}/events?limit=1000`);
    const at = events.find((e: any) => e.type === "tool.result").sequence;
    const out = await bash(fork!);
    expect(out).toContain(`{"session_id":"ses_`);
    expect(out).toContain(`"from_session":"${sid}","at_sequence":${at}}`);
  });

  it("replays the Quickstart's turn and reads the comparison", async () => {
    const out = await bash(replay!);
    const execId = /"exec_id":"(ses_[0-9a-f]+)"/.exec(out)?.[1];
    expect(execId).toBeDefined();
    const done = await until(async () => {
      const r = await call("GET", `/v1/replays/${execId}`);
      return r.status === "completed" ? r : undefined;
    });
    expect(done.comparison).toMatchObject({ source_session: sid, diverged: { step: 1 }, replay: { status: "completed" } });
  });

  it("evaluates a candidate on the demo model, offline", async () => {
    const out = await bash(evaluate!);
    expect(out).toMatch(/^trn_[0-9a-f]+ {2}completed {2}diverged at call 1 {2}output same/m);
    expect(out).toContain("1 turns replayed: 1 left the recording");
  });
});

describe("the README's subscriptions", () => {
  it("name the local allowlist that npm start writes into .dev.vars", () => {
    const allowed = /"TOOL_URL_ALLOWLIST=([^"]+)"/.exec(readFileSync(join(ROOT, "scripts", "dev.mjs"), "utf8"))?.[1];
    expect(allowed).toBeDefined();
    expect(readmeSection("**Subscriptions.**", "- A subscription delivers")).toContain(`\`.dev.vars\` that \`npm start\` writes allows only \`${allowed}\``);
  });
});
