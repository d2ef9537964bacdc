// The fenced code blocks of a Markdown text, for tests that run or type-check what the docs show.
import { readFileSync } from "node:fs";
import { join } from "node:path";

export const ROOT = join(import.meta.dirname, "..", "..", "..");

/** The bodies of the ```<lang> blocks of `text`, in order. */
export function codeBlocks(text: string, lang: string): string[] {
  return [...text.matchAll(new RegExp(`^\`\`\`${lang}\\n([\\s\\S]*?)^\`\`\``, "gm"))].map((m) => m[1]!);
}

/** The part of README.md from the heading `from` to the next heading `to`. */
export function readmeSection(from: string, to: string): string {
  const readme = readFileSync(join(ROOT, "README.md"), "utf8");
  const start = readme.indexOf(from);
  if (start < 0) throw new Error(`README.md has no "${from}"`);
  return readme.slice(start, readme.indexOf(to, start));
}
