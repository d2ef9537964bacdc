// The runtime as a package (docs/guides/typescript-tools.md): examples/custom-tools, a tenant's Worker with a tool
// written in TypeScript, type-checks and runs a turn that calls its tool through HTTP under `wrangler dev`; and
// `npm pack`'s tarball installs in an empty folder, where the same Worker type-checks against it. The two type-checks
// are not one: the first resolves the runtime's dependencies at this checkout's locked versions, the second at what
// a fresh install of the tarball resolves (a newer patch, at times). They mostly wait or take one core each, so the
// three tests run at once, with `wrangler dev` starting beside them.
import { execFile } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, it } from "vitest";
import { type DevRuntime, startRuntime } from "./support/wrangler-dev";

const run = promisify(execFile);
const ROOT = join(import.meta.dirname, "..", "..");
const EXAMPLE = join(ROOT, "examples", "custom-tools");
const TSC = join(ROOT, "node_modules", ".bin", "tsc");
/** The example under `wrangler dev`, started before the tests and awaited by the one that uses it. */
let started: Promise<DevRuntime>;

/** What `tsc --noEmit -p project` prints: nothing when the project type-checks. */
async function typeErrors(tsc: string, project: string): Promise<string> {
  try {
    await run(tsc, ["--noEmit", "-p", project], { cwd: project });
    return "";
  } catch (err) {
    return String((err as { stdout?: string }).stdout || err);
  }
}

beforeAll(() => {
  // What `npm install` makes of the example's `"agent-runtime": "file:../.."`: a link to this checkout, whose own
  // node_modules then serve the runtime's dependencies (wrangler and tsc are this checkout's too).
  const link = join(EXAMPLE, "node_modules", "agent-runtime");
  if (!existsSync(link)) {
    mkdirSync(join(EXAMPLE, "node_modules"), { recursive: true });
    symlinkSync(join("..", "..", ".."), link);
  }
  started = startRuntime({ API_KEYS: "tenant-key" }, EXAMPLE);
  started.catch(() => {}); // the test that uses it reports the failure
});
afterAll(async () => (await started.catch(() => undefined))?.stop());

describe.concurrent("examples/custom-tools", () => {
  it("type-checks (strict, the Workers types)", async ({ expect }) => {
    expect(await typeErrors(TSC, EXAMPLE)).toBe("");
  }, 240_000);

  it("runs a turn that calls its TypeScript tool, and refuses an agent naming a tool it does not have", async ({ expect }) => {
    const rt = await started;
    const agent = await rt.call("PUT", "/v1/agents/glossary", { model: "demo:fast", tools: ["lookup"] });
    expect(agent.status, JSON.stringify(agent.body)).toBe(201);
    const unknown = await rt.call("PUT", "/v1/agents/typo", { model: "demo:fast", tools: ["lookups"] });
    expect(unknown.status).toBe(422);
    expect(unknown.body.error.details).toEqual([{ path: "tools.0", reason: 'unknown tool "lookups"' }]);

    const session = await rt.call("POST", "/v1/sessions", { agent: "glossary" });
    const sid = session.body.session_id;
    const turn = await rt.call("POST", `/v1/sessions/${sid}/turns`, { input: 'use lookup with {"word":"fork"}' });
    expect(turn.status).toBe(202);
    await fetch(`${rt.base}/v1/chat/${sid}/stream`, { headers: { authorization: "Bearer tenant-key" } }).then((r) => r.text()); // the turn's end
    const { body } = await rt.call("GET", `/v1/sessions/${sid}/events?after=0&limit=100`);
    const result = body.events.find((e: any) => e.type === "tool.result");
    expect(result.payload).toMatchObject({
      name: "lookup",
      is_error: false,
      output: { word: "fork", meaning: "a new session that starts from an earlier point of another session's log" },
    });
    expect(body.events.at(-1)).toMatchObject({ type: "turn.completed", payload: { output: expect.stringContaining("The lookup tool returned:") } });
  });
});

describe.concurrent("npm pack", () => {
  it("gives a tarball that installs in an empty folder, where a Worker importing it type-checks", async ({ expect }) => {
    const dir = mkdtempSync(join(tmpdir(), "agent-runtime-tenant-"));
    try {
      await run("npm", ["pack", "--pack-destination", dir, "--loglevel=error"], { cwd: ROOT });
      const tarball = readdirSync(dir).find((f) => f.endsWith(".tgz"))!;
      const tenant = join(dir, "tenant");
      mkdirSync(join(tenant, "src"), { recursive: true });
      writeFileSync(join(tenant, "package.json"), JSON.stringify({ name: "tenant", private: true, type: "module" }));
      copyFileSync(join(EXAMPLE, "tsconfig.json"), join(tenant, "tsconfig.json"));
      copyFileSync(join(EXAMPLE, "src", "index.ts"), join(tenant, "src", "index.ts"));
      // The runtime's dependencies come from the npm registry (the local cache first), like any package's.
      const install = ["install", "--prefer-offline", "--no-audit", "--no-fund", "--loglevel=error"];
      await run("npm", [...install, join(dir, tarball), "typescript@5.9.3", "@cloudflare/workers-types@4.20260702.1"], { cwd: tenant });
      expect(existsSync(join(tenant, "node_modules", "agent-runtime", "src", "runtime", "index.ts"))).toBe(true);
      expect(existsSync(join(tenant, "node_modules", "agent-runtime", "test"))).toBe(false);
      expect(await typeErrors(join(tenant, "node_modules", ".bin", "tsc"), tenant)).toBe("");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 480_000);
});
