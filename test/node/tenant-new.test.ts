// Deploy tooling, run as a user would: `npm run tenant:new -- <name>` on a copy of wrangler.toml, then
// `wrangler deploy --dry-run --env <name>` on the result (offline: it bundles and lists the bindings).
import { execFile } from "node:child_process";
import { copyFileSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";

const run = promisify(execFile);
const ROOT = join(import.meta.dirname, "..", "..");
// In the project root, so the copy's relative paths (src/worker.ts, migrations) resolve as in wrangler.toml.
const CONFIG = join(ROOT, `.tenant-test-${process.pid}.toml`);

afterAll(() => rmSync(CONFIG, { force: true }));

describe("npm run tenant:new", () => {
  it("adds a deployable environment with its own deployment id and prints the commands and secrets to set", async () => {
    copyFileSync(join(ROOT, "wrangler.toml"), CONFIG);
    const { stdout } = await run("node", ["scripts/tenant-new.mjs", "acme-co", "--config", CONFIG], { cwd: ROOT });
    expect(stdout).toContain("npx wrangler r2 bucket create agent-runtime-acme-co-blobs");
    expect(stdout).toMatch(/echo 'rk_[A-Za-z0-9_-]{43}' \| npx wrangler secret put API_KEYS --env acme-co/);
    // A signing secret of its own, set as a secret (never written into the file), and a deployment id of its own
    // (a variable: its tokens name it as their audience, so no other deployment accepts them).
    const secret = /echo '([A-Za-z0-9_-]{43})' \| npx wrangler secret put TOKEN_SIGNING_SECRET --env acme-co/.exec(stdout)?.[1];
    expect(secret).toBeDefined();
    const deploymentId = /\[env\.acme-co\.vars\]\nDEPLOYMENT_ID = "(acme-co-[0-9a-f]{16})"/.exec(readFileSync(CONFIG, "utf8"))?.[1];
    expect(deploymentId).toBeDefined();
    expect(readFileSync(CONFIG, "utf8")).not.toContain(secret);
    expect(stdout).toContain("npm run deploy -- --env acme-co");
    // The runtime keeps its index in a Durable Object, so a tenant needs no D1 database and no D1 rights.
    expect(stdout).not.toMatch(/\bD1\b|\bd1\b/);
    expect(readFileSync(CONFIG, "utf8")).toContain('[env.acme-co]\nname = "agent-runtime-acme-co"');

    // As docs/deploy.md says: the deploy script builds the inspector (wrangler's assets) first.
    const dry = await run(
      "npm",
      ["run", "deploy", "--", "--env", "acme-co", "--dry-run", "-c", CONFIG, "--outdir", join(ROOT, ".wrangler", "tenant-dry-run")],
      {
        cwd: ROOT,
        env: { ...process.env, WRANGLER_SEND_METRICS: "false" },
      },
    );
    const out = dry.stdout + dry.stderr;
    expect(out).toContain("env.SESSIONS (SessionObject)");
    expect(out).toContain("env.BLOBS (agent-runtime-acme-co-blobs)");
    expect(out).toContain("--dry-run: exiting now.");
    expect(out).toContain(`env.DEPLOYMENT_ID ("${deploymentId}")`);

    // Another tenant gets another secret and another deployment id.
    const other = await run("node", ["scripts/tenant-new.mjs", "beta-co", "--config", CONFIG], { cwd: ROOT });
    const otherSecret = /echo '([A-Za-z0-9_-]{43})' \| npx wrangler secret put TOKEN_SIGNING_SECRET --env beta-co/.exec(other.stdout)?.[1];
    expect(otherSecret).toBeDefined();
    expect(otherSecret).not.toBe(secret);
    const otherId = /\[env\.beta-co\.vars\]\nDEPLOYMENT_ID = "(beta-co-[0-9a-f]{16})"/.exec(readFileSync(CONFIG, "utf8"))?.[1];
    expect(otherId).toBeDefined();

    // A second tenant of the same name, or a bad name, is refused without touching the file.
    const before = readFileSync(CONFIG, "utf8");
    await expect(run("node", ["scripts/tenant-new.mjs", "acme-co", "--config", CONFIG], { cwd: ROOT })).rejects.toMatchObject({ code: 2 });
    await expect(run("node", ["scripts/tenant-new.mjs", "Acme!", "--config", CONFIG], { cwd: ROOT })).rejects.toMatchObject({
      stderr: expect.stringContaining("is not a tenant name"),
    });
    expect(readFileSync(CONFIG, "utf8")).toBe(before);
  }, 120_000);
});
