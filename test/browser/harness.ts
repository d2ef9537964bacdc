// What the browser tests run against, all on this machine: the fake Chat Completions server
// (test/support/fake-openai.ts), the runtime under `wrangler dev` (local, its own free ports and a fresh
// persistence directory, so it can be killed and started again with its state), and Debian's Chromium
// driven by playwright-core with a fresh profile.
import { type ChildProcess, spawn } from "node:child_process";
import { createWriteStream, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type BrowserContext, chromium, type Page } from "playwright-core";
import { RuntimeClient } from "../../src/client/index";
import { freePort } from "../node/support/wrangler-dev";
import type { Step } from "../support/fake-model";
import { startFakeOpenAI } from "../support/fake-openai";

export const ROOT = join(import.meta.dirname, "..", "..");
/** The example front end (its own package.json), built by the global setup. */
export const EXAMPLE = join(ROOT, "examples", "react-chat");
/** Screenshots and logs of a run (git-ignored). */
export const OUTPUT = join(ROOT, "test-output", "inspector");
export const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
const CHROMIUM_FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run"];

/**
 * The fake model server; `script(steps)` stores a script and answers the model string that plays it,
 * `requests(model)` the Chat Completions bodies that model's calls sent.
 */
export async function startFakeModel(): Promise<{
  baseUrl: string;
  script(steps: Step[]): Promise<string>;
  requests(model: string): Promise<any[]>;
  close(): Promise<void>;
}> {
  const port = await freePort();
  const server = await startFakeOpenAI(port);
  let n = 0;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    async script(steps) {
      const id = `inspector-${process.pid}-${++n}`;
      const res = await fetch(`http://127.0.0.1:${port}/v1/_scripts/${id}`, {
        method: "PUT",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ steps }),
      });
      if (!res.ok) throw new Error(`scripting the fake model failed: ${res.status} ${await res.text()}`);
      return `openai-compatible:${id}`;
    },
    async requests(model) {
      const id = model.slice("openai-compatible:".length);
      return (await fetch(`http://127.0.0.1:${port}/v1/_scripts/${id}/requests`)).json();
    },
    close: () => server.close(),
  };
}

/** `wrangler dev` for the runtime, which can be killed (SIGKILL, no goodbye) and started again on the same port and state. */
export class Runtime {
  readonly key = `inspector-test-${Math.random().toString(36).slice(2)}`;
  private child: ChildProcess | null = null;
  private readonly persistTo = mkdtempSync(join(tmpdir(), "inspector-runtime-"));
  private readonly log = createWriteStream(join(OUTPUT, "wrangler.log"), { flags: "a" });

  private constructor(
    readonly port: number,
    private readonly vars: Record<string, string>,
  ) {}

  /** `vars` adds to the runtime's environment (e.g. MODEL_PRICES). */
  static async create(fakeModelBaseUrl: string, vars: Record<string, string> = {}): Promise<Runtime> {
    mkdirSync(OUTPUT, { recursive: true });
    const port = await freePort();
    return new Runtime(port, { OPENAI_COMPATIBLE_BASE_URL: fakeModelBaseUrl, TOOL_URL_ALLOWLIST: `${fakeModelBaseUrl}/`, ...vars });
  }

  get base(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  client(): RuntimeClient {
    return new RuntimeClient({ url: this.base, key: this.key });
  }

  async start(): Promise<void> {
    const args = [join(ROOT, "node_modules", "wrangler", "bin", "wrangler.js"), "dev", "--ip", "127.0.0.1", "--port", String(this.port)];
    args.push("--inspector-port", String(await freePort()), "--persist-to", this.persistTo, "--show-interactive-dev-session=false", "--log-level", "warn");
    for (const [k, v] of Object.entries({ API_KEYS: this.key, ...this.vars })) args.push("--var", `${k}:${v}`);
    const child = spawn(process.execPath, args, {
      cwd: ROOT,
      // Offline: no metrics, and no download of request.cf data (miniflare's fallback values serve).
      env: { ...process.env, WRANGLER_SEND_METRICS: "false", CLOUDFLARE_CF_FETCH_ENABLED: "false", CI: "1", FORCE_COLOR: "0" },
      stdio: ["ignore", "pipe", "pipe"],
      detached: true, // its own process group: kill() ends wrangler and its workerd processes, nothing else
    });
    this.child = child;
    child.stdout?.pipe(this.log, { end: false });
    child.stderr?.pipe(this.log, { end: false });
    const deadline = Date.now() + 60_000;
    for (;;) {
      if (child.exitCode !== null) throw new Error(`wrangler dev exited with ${child.exitCode} (see ${OUTPUT}/wrangler.log)`);
      if (Date.now() > deadline) throw new Error("wrangler dev was not ready within 60 s");
      try {
        const res = await fetch(`${this.base}/healthz`);
        if (res.ok) return;
      } catch {
        // not listening yet
      }
      await new Promise((r) => setTimeout(r, 200));
    }
  }

  /** Kills the process group at once, as a crash would. */
  async kill(): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((r) => child.once("exit", r));
    try {
      process.kill(-child.pid!, "SIGKILL");
    } catch {
      return; // already gone
    }
    await exited;
    this.child = null;
  }

  async stop(): Promise<void> {
    await this.kill();
    this.log.end();
    rmSync(this.persistTo, { recursive: true, force: true });
  }
}

/** Chromium, headless, with a fresh profile that is removed afterwards. */
export async function launchBrowser(): Promise<{ context: BrowserContext; close(): Promise<void> }> {
  const profile = mkdtempSync(join(tmpdir(), "inspector-chromium-"));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: CHROMIUM_FLAGS,
    viewport: { width: 1280, height: 900 },
  });
  return {
    context,
    async close() {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

export async function screenshot(page: Page, name: string): Promise<void> {
  mkdirSync(OUTPUT, { recursive: true });
  await page.screenshot({ path: join(OUTPUT, `${name}.png`), fullPage: true });
}

export type { freePort };

/** A new tab of `context` at the given size; CSP reports and uncaught errors go to `problems`. */
export async function openPage(context: BrowserContext, problems: string[], width = 1280, height = 900): Promise<Page> {
  const page = await context.newPage();
  await page.setViewportSize({ width, height });
  page.on("console", (m) => {
    if (m.type() === "error" && /Content.Security.Policy|Refused to/i.test(m.text())) problems.push(m.text());
  });
  page.on("pageerror", (err) => problems.push(String(err)));
  return page;
}

/** Opens `path` and signs in with the runtime's key (each new tab signs in: the key lives in its sessionStorage). */
export async function signIn(page: Page, runtime: Runtime, path: string): Promise<void> {
  await page.goto(`${runtime.base}${path}`);
  await page.getByLabel("API key").fill(runtime.key);
  await page.getByRole("button", { name: "Sign in" }).click();
  // Signed in once the form is gone: a test that navigates at once would otherwise race the key being kept.
  await page.getByRole("button", { name: "Sign in" }).waitFor({ state: "detached", timeout: 30_000 });
}
