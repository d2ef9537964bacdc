// Every ```ts block of README.md and docs/*.md type-checks as written (strict, Node and DOM types), each
// block a module of its own in a folder inside the package, so `agent-runtime/client` resolves as it does
// for a consumer. The names fragments take as given are declared in docs-snippets/prelude.ts. And the
// docs' links into README.md name sections it has.
import { execFile } from "node:child_process";
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { codeBlocks, ROOT } from "./support/markdown";

const OUT = join(ROOT, "test-output", `docs-snippets-${process.pid}`);
const DOCS = ["README.md", ...readdirSync(join(ROOT, "docs")).map((f) => `docs/${f}`)].filter((f) => f.endsWith(".md"));

afterAll(() => rmSync(OUT, { recursive: true, force: true }));

describe("the docs' TypeScript snippets", () => {
  it("type-check with tsc --strict", async () => {
    mkdirSync(OUT, { recursive: true });
    const files: string[] = [];
    for (const doc of DOCS) {
      codeBlocks(readFileSync(join(ROOT, doc), "utf8"), "ts").forEach((block, i) => {
        const file = `${doc.replace(/\W/g, "_")}-${i + 1}.ts`;
        writeFileSync(join(OUT, file), `${block}\nexport {};\n`);
        files.push(file);
      });
    }
    expect(files.length).toBeGreaterThanOrEqual(4);
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

  it("link to README sections that exist", () => {
    const slug = (heading: string) =>
      heading
        .toLowerCase()
        .replace(/[^\w\- ]/g, "")
        .replace(/ /g, "-");
    const readme = readFileSync(join(ROOT, "README.md"), "utf8");
    const anchors = new Set([...readme.matchAll(/^#+ (.+)$/gm)].map((m) => slug(m[1]!)));
    const links = DOCS.filter((d) => d !== "README.md").flatMap((doc) =>
      [...readFileSync(join(ROOT, doc), "utf8").matchAll(/\]\(\.\.\/README\.md#([^)]+)\)/g)].map((m) => `${doc} -> #${m[1]}`),
    );
    expect(links.length).toBeGreaterThan(0);
    expect(links.filter((l) => !anchors.has(l.split("#")[1]!))).toEqual([]);
  });
});
