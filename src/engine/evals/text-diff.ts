// A line diff of an answer against the expected one (LCS), as unified-style lines: " " kept, "-" expected
// only, "+" output only. Bounded: past MAX_LINES a side, the rest is summarized.
const MAX_LINES = 400;

export function lineDiff(expected: string, output: string): string {
  if (expected === output) return "";
  const a = expected.split("\n").slice(0, MAX_LINES);
  const b = output.split("\n").slice(0, MAX_LINES);
  // lcs[i][j]: the longest common subsequence of a[i..] and b[j..].
  const lcs = Array.from({ length: a.length + 1 }, () => new Array<number>(b.length + 1).fill(0));
  for (let i = a.length - 1; i >= 0; i--)
    for (let j = b.length - 1; j >= 0; j--) lcs[i]![j] = a[i] === b[j] ? lcs[i + 1]![j + 1]! + 1 : Math.max(lcs[i + 1]![j]!, lcs[i]![j + 1]!);
  const out: string[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    if (i < a.length && j < b.length && a[i] === b[j]) {
      out.push(` ${a[i++]}`);
      j++;
    } else if (i < a.length && (j >= b.length || lcs[i + 1]![j]! >= lcs[i]![j + 1]!)) out.push(`-${a[i++]}`);
    else out.push(`+${b[j++]}`);
  }
  const cut = expected.split("\n").length > MAX_LINES || output.split("\n").length > MAX_LINES;
  return `--- expected\n+++ output\n${out.join("\n")}${cut ? `\n… (only the first ${MAX_LINES} lines of each compared)` : ""}`;
}
