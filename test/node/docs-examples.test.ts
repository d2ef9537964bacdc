// Every example of README.md and docs/guides/ runs as written: one `wrangler dev` on the demo model, and
// per page one bash session that runs its ```sh and ```ts blocks in order (KEY and AGENT_RUNTIME_URL set,
// as a reader would have them) and compares each with the ```text block after it. Every ```ts block also
// type-checks under strict. The convention is in support/doc-blocks.ts.
import { execFile } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join, relative } from "node:path";
import { afterAll, beforeAll, describe, type ExpectStatic, expect, it } from "vitest";
import { type DocBlock, docBlocks, matchesOutput, RUNNABLE } from "./support/doc-blocks";
import { ShellSession } from "./support/shell-session";
import { type DevRuntime, startRuntime } from "./support/wrangler-dev";

const ROOT = join(import.meta.dirname, "..", "..");
const GUIDES = join(ROOT, "docs", "guides");
const PAGES = [
  join(ROOT, "README.md"),
  ...readdirSync(GUIDES)
    .filter((f) => f.endsWith(".md"))
    .sort()
    .map((f) => join(GUIDES, f)),
];
/**
 * The pages run in lanes, at once, as most of their time is waiting (on the `demo:slow` model above all): the
 * pages that use the agent `demo` (README.md puts it on the slow model, guides put it on the fast one) one after
 * another, each other page on the slow model in a lane of its own, and the rest one after another. Pages of
 * different lanes share no agent, session, quota or /tmp file (CONTRIBUTING.md, "The docs").
 */
const USES_DEMO = /(?<![a-z0-9-])demo(?![\w:-])/;
const LANES = new Map<string, string[]>();
for (const page of PAGES) {
  const code = docBlocks(page)
    .filter((b) => RUNNABLE.has(b.lang) && b.notRun === null)
    .map((b) => b.code)
    .join("\n");
  const lane = USES_DEMO.test(code) ? "the agent demo" : code.includes("demo:slow") ? relative(ROOT, page) : "the other pages";
  LANES.set(lane, [...(LANES.get(lane) ?? []), page]);
}
/** Languages that are data or output, never run. */
const DATA = new Set(["text", "json", "toml"]);
const TS_DIR = join(ROOT, "test-output", "docs-examples");
const KEY = `docs_${Math.random().toString(16).slice(2)}`;
const BLOCK_TIMEOUT_MS = 90_000;

const where = (page: string, b: DocBlock) => `${relative(ROOT, page)}:${b.line}`;
const tsFile = (page: string, b: DocBlock) => join(TS_DIR, `${basename(page, ".md")}-L${b.line}.ts`);

let runtime: DevRuntime;
/** The type-check's errors (empty when none), started before the pages run: it takes the CPU while they mostly wait on the slow demo model. */
let typeErrors: Promise<string>;

beforeAll(async () => {
  rmSync(TS_DIR, { recursive: true, force: true });
  mkdirSync(TS_DIR, { recursive: true });
  for (const page of PAGES) for (const b of docBlocks(page)) if (b.lang === "ts") writeFileSync(tsFile(page, b), `${b.code}\nexport {};\n`);
  writeFileSync(
    join(TS_DIR, "tsconfig.json"),
    JSON.stringify({ extends: "../../tsconfig.json", compilerOptions: { types: ["node"], lib: ["ES2023", "DOM"] }, include: ["*.ts"], exclude: [] }),
  );
  typeErrors = new Promise((resolve) =>
    execFile(join(ROOT, "node_modules", ".bin", "tsc"), ["--noEmit", "-p", TS_DIR], { cwd: ROOT, encoding: "utf8" }, (err, stdout) =>
      resolve(err ? stdout || String(err) : ""),
    ),
  );
  // The settings `npm start` writes into a new .dev.vars (scripts/dev.mjs), with this test's key.
  runtime = await startRuntime({
    API_KEYS: KEY,
    TOKEN_SIGNING_SECRET: "docs-test-token-signing-secret",
    TOOL_URL_ALLOWLIST: "http://127.0.0.1:9000/",
    CORS_ORIGINS: "*",
  });
}, 120_000);

/** Runs a page's runnable blocks in order in one bash session, each compared with the output the page shows. */
async function runPage(page: string, expect: ExpectStatic): Promise<void> {
  const blocks = docBlocks(page).filter((b) => RUNNABLE.has(b.lang) && b.notRun === null);
  const scratch = mkdtempSync(join(tmpdir(), "docs-examples-"));
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? "",
    HOME: process.env.HOME ?? scratch,
    NO_COLOR: "1",
    KEY,
    AGENT_RUNTIME_URL: runtime.base,
  };
  const shell = new ShellSession(ROOT, env, scratch);
  try {
    for (const b of blocks) {
      const script = b.lang === "ts" ? `node --experimental-websocket --no-warnings --import tsx '${tsFile(page, b)}'` : b.code;
      const { status, output } = await shell.run(script, BLOCK_TIMEOUT_MS);
      expect(status, `${where(page, b)} exited ${status}:\n${output}`).toBe(0);
      if (b.expected !== null) expect(matchesOutput(b.expected, output), `${where(page, b)} printed:\n${output}\nbut the page says:\n${b.expected}`).toBe(true);
    }
  } finally {
    shell.close();
    rmSync(scratch, { recursive: true, force: true });
  }
}

afterAll(async () => {
  await runtime?.stop();
});

describe("the docs' convention", () => {
  it("reads a text block after a runnable one as its output, and a not-run marker before a block", () => {
    const dir = mkdtempSync(join(tmpdir(), "docs-convention-"));
    const page = join(dir, "page.md");
    writeFileSync(
      page,
      ["```sh", "echo a", "```", "", "```text", "a", "```", "<!-- not run: needs an account -->", "```sh", "deploy", "```", "```js", "x", "```"].join("\n"),
    );
    const blocks = docBlocks(page);
    rmSync(dir, { recursive: true });
    expect(blocks.map((b) => [b.lang, b.expected, b.notRun])).toEqual([
      ["sh", "a", null],
      ["sh", null, "needs an account"],
      ["js", null, null],
    ]);
  });

  it("matches output by shape: `...` lines and inline, <placeholders> as one token", () => {
    expect(matchesOutput('{"id":"ses_<id>",...,"n":<n>}', '{"id":"ses_1a2b","x":[1,2],"n":42}')).toBe(true);
    expect(matchesOutput("first\n...\nlast", "first\nmiddle\nmore\nlast")).toBe(true);
    expect(matchesOutput("first\n...\nlast", "first\nlast")).toBe(true);
    expect(matchesOutput('{"id":"<id>"}', '{"id":"two words"}')).toBe(false);
    expect(matchesOutput("The answer is 14.", "The answer is 15.")).toBe(false);
    expect(matchesOutput("a\nb", "a\nb\nc")).toBe(false);
  });
});

describe("the docs' examples", () => {
  it("are blocks the test knows: runnable (sh, ts), data (text, json, toml), or marked not run with a reason", () => {
    const unknown = PAGES.flatMap((page) =>
      docBlocks(page)
        .filter((b) => !RUNNABLE.has(b.lang) && !DATA.has(b.lang) && b.notRun === null)
        .map((b) => `${where(page, b)} (\`\`\`${b.lang || "(no language)"})`),
    );
    expect(unknown, "blocks neither runnable nor marked <!-- not run: reason -->").toEqual([]);
  });

  describe.concurrent("in lanes that run at once", () => {
    for (const [lane, pages] of LANES)
      describe(lane, () => {
        for (const page of pages)
          it.sequential(`${relative(ROOT, page)}: every runnable block runs and prints what the page says`, ({ expect }) => runPage(page, expect));
      });
  });

  // Last: the check ran beside the pages.
  it("type-check under strict (every ```ts block, run or not)", async () => {
    expect(await typeErrors, "type errors in the docs' TypeScript").toBe("");
  });
});
