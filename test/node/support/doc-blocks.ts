// The code blocks of a Markdown page, and the convention the docs test reads them by:
// - a ```sh block runs; a ```ts block is type-checked and runs (with tsx);
// - a ```text block right after one (blank lines between only) is what it prints: a line `...` stands for any
//   lines (or none), `...` inside a line for any characters, and a `<placeholder>` for one token (no spaces,
//   quotes or commas);
// - `<!-- not run: <reason> -->` on the line before a block (blank lines between only) keeps it from running
//   (a ts block is still type-checked).
import { readFileSync } from "node:fs";

export interface DocBlock {
  lang: string;
  code: string;
  /** 1-based line of the opening fence. */
  line: number;
  /** The reason from a `<!-- not run: ... -->` marker, or null when the block runs. */
  notRun: string | null;
  /** The ```text block that follows, or null. */
  expected: string | null;
}

const FENCE = /^```(\S*)\s*$/;
const NOT_RUN = /^<!-- not run: (.+) -->$/;
export const RUNNABLE = new Set(["sh", "ts"]);

export function docBlocks(path: string): DocBlock[] {
  const lines = readFileSync(path, "utf8").split("\n");
  const blank = (from: number, to: number) => lines.slice(from, to).every((l) => l.trim() === "");
  const blocks: DocBlock[] = [];
  let previousEnd = -1;
  for (let i = 0; i < lines.length; i++) {
    const open = lines[i]!.match(FENCE);
    if (!open) continue;
    const start = i;
    while (++i < lines.length && lines[i] !== "```");
    const lang = open[1] ?? "";
    const code = lines.slice(start + 1, i).join("\n");
    const previous = blocks[blocks.length - 1];
    if (lang === "text" && previous && RUNNABLE.has(previous.lang) && blank(previousEnd + 1, start)) {
      previous.expected = code;
    } else {
      let before = start - 1;
      while (before >= 0 && lines[before]!.trim() === "") before--;
      const notRun = before >= 0 ? (lines[before]!.trim().match(NOT_RUN)?.[1] ?? null) : null;
      blocks.push({ lang, code, line: start + 1, notRun, expected: null });
    }
    previousEnd = i;
  }
  return blocks;
}

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
const PLACEHOLDER = /^<[a-z][a-z0-9_-]*>$/;

/** One expected line as a regular expression: `...` any characters, `<placeholder>` one token. */
function linePattern(line: string): RegExp {
  const parts = line.split(/(\.\.\.|<[a-z][a-z0-9_-]*>)/).map((p) => (p === "..." ? ".*?" : PLACEHOLDER.test(p) ? '[^\\s",]+' : escapeRegExp(p)));
  return new RegExp(`^${parts.join("")}$`);
}

/** Whether the output has the expected shape, line by line; a line `...` matches any number of lines. */
export function matchesOutput(expected: string, actual: string): boolean {
  const want = normalizeOutput(expected).split("\n");
  const got = normalizeOutput(actual).split("\n");
  const match = (w: number, g: number): boolean => {
    if (w === want.length) return g === got.length || (got.length === 1 && got[0] === "");
    if (want[w]!.trim() === "...") {
      for (let k = g; k <= got.length; k++) if (match(w + 1, k)) return true;
      return false;
    }
    return g < got.length && linePattern(want[w]!).test(got[g]!) && match(w + 1, g + 1);
  };
  return match(0, 0);
}

const COLOURS = new RegExp(`${String.fromCharCode(27)}\\[[0-9;]*m`, "g");

/** Output as compared: no colour codes, no trailing spaces, no trailing blank lines. */
export function normalizeOutput(out: string): string {
  return out
    .replace(COLOURS, "")
    .split("\n")
    .map((l) => l.trimEnd())
    .join("\n")
    .replace(/\s+$/, "");
}
