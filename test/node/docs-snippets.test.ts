// The docs outside README.md and docs/guides/ (which docs-examples.test.ts runs): every ```ts block of
// docs/*.md type-checks as written (strict, Node and DOM types), each block a module of its own in a folder
// inside the package, so `agent-runtime/client` resolves as it does for a consumer; the names fragments take
// as given are declared in docs-snippets/prelude.ts. And every relative link of every page leads to a file
// that exists and, with an anchor, to a heading it has.
import { execFile } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { docBlocks } from "./support/doc-blocks";

const ROOT = join(import.meta.dirname, "..", "..");
const OUT = join(ROOT, "test-output", `docs-snippets-${process.pid}`);
const mdIn = (dir: string) =>
  readdirSync(join(ROOT, dir))
    .filter((f) => f.endsWith(".md"))
    .map((f) => join(ROOT, dir, f));
const LOOSE_DOCS = mdIn("docs");
const ALL_PAGES = [join(ROOT, "README.md"), join(ROOT, "CONTRIBUTING.md"), ...LOOSE_DOCS, ...mdIn("docs/guides"), ...mdIn("docs/reference")];

afterAll(() => rmSync(OUT, { recursive: true, force: true }));

/** GitHub's anchor of a heading. */
const slug = (heading: string) =>
  heading
    .toLowerCase()
    .replace(/[^\w\- ]/g, "")
    .replace(/ /g, "-");

describe("the docs' TypeScript snippets", () => {
  it("type-check with tsc --strict", async () => {
    mkdirSync(OUT, { recursive: true });
    const files = LOOSE_DOCS.flatMap((doc) =>
      docBlocks(doc)
        .filter((b) => b.lang === "ts")
        .map((b) => {
          const file = `${relative(ROOT, doc).replace(/\W/g, "_")}-L${b.line}.ts`;
          writeFileSync(join(OUT, file), `${b.code}\nexport {};\n`);
          return file;
        }),
    );
    expect(files.length).toBeGreaterThanOrEqual(1);
    const tsconfig = {
      compilerOptions: {
        target: "ES2022",
        module: "ESNext",
        moduleResolution: "Bundler",
        lib: ["ES2023", "DOM"],
        types: ["node"],
        strict: true,
        noEmit: true,
        skipLibCheck: true,
      },
      files: [join(ROOT, "test", "node", "docs-snippets", "prelude.ts"), ...files],
    };
    writeFileSync(join(OUT, "tsconfig.json"), JSON.stringify(tsconfig));
    const result = await promisify(execFile)("npx", ["tsc", "-p", OUT], { cwd: ROOT }).catch((err: { stdout: string }) => err);
    expect(result.stdout).toBe("");
  }, 60_000);
});

describe("the docs' links", () => {
  it("lead to files that exist and to headings they have", () => {
    const broken: string[] = [];
    let count = 0;
    for (const page of ALL_PAGES) {
      for (const [, target] of readFileSync(page, "utf8").matchAll(/\]\(((?!https?:|mailto:|<)[^)\s]+)\)/g)) {
        count++;
        const [path, anchor] = target!.split("#") as [string, string | undefined];
        const file = path === "" ? page : join(dirname(page), path);
        if (!existsSync(file)) broken.push(`${relative(ROOT, page)} -> ${target}`);
        else if (anchor && file.endsWith(".md")) {
          const headings = new Set([...readFileSync(file, "utf8").matchAll(/^#+ (.+)$/gm)].map((m) => slug(m[1]!)));
          if (!headings.has(anchor)) broken.push(`${relative(ROOT, page)} -> ${target}`);
        }
      }
    }
    expect(count).toBeGreaterThan(20);
    expect(broken).toEqual([]);
  });
});
