// Regular expressions that are not the runtime's own (guardrail patterns, the JSON Schema `pattern`s of tool
// arguments, answers and final outputs) run on RE2 (re2js): matching is linear in the text whatever the
// pattern, where V8's backtracking can take exponential time. RE2 has no backreferences and no lookaround, so a
// pattern needing them is refused where it is given, with the parser's reason. Each search is linear, but a
// find-all is not: a pattern like `\w+@x|\w` reads ahead to the end of a run for every one-character match
// (quadratic), so replaceAll counts the characters the engine reads and stops at a bound.
import { MatcherInputBase, RE2JS } from "re2js";
import type { z } from "zod";

/** A pattern RE2 cannot compile; `message` says why. */
export class UnsafePatternError extends Error {}

const FLAGS: Record<string, number> = { i: RE2JS.CASE_INSENSITIVE, m: RE2JS.MULTILINE, s: RE2JS.DOTALL, u: 0 };

/** JavaScript escapes RE2 spells otherwise (\u00e9, (?<name>, [^]) are translated; `\k<name>` is a backreference. */
function hasNamedBackreference(pattern: string): boolean {
  for (let i = 0; i < pattern.length; i++) if (pattern[i] === "\\" && pattern[++i] === "k") return true;
  return false;
}

/** A find-all that read more characters than its bound allows (BoundedText). */
export class RegexBoundError extends Error {
  constructor(
    readonly bound: number,
    readonly length: number,
  ) {
    super(`the pattern's matches took more than ${bound.toLocaleString("en-US")} reads of a text of ${length.toLocaleString("en-US")} characters`);
  }
}

// What a find-all may read: ordinary patterns read each character 1-5 times and each match costs ~10 reads more
// (bench/guardrails.mjs); the base is one full search of RE2's backtracker (2^18 steps), which small texts take.
const READS_PER_CHAR = 6;
const READS_PER_MATCH = 16;
const READS_BASE = 2 ** 18;

/** The text as RE2's matcher reads it, every character read counted: past the bound, the read throws. */
class BoundedText extends MatcherInputBase {
  private readonly boxed: string;
  private reads = 0;
  private bound: number;
  constructor(private readonly text: string) {
    super();
    this.bound = READS_PER_CHAR * text.length + READS_BASE;
    // The engine reads a UTF-16 input only through its charCodeAt (a String object is a string to re2js).
    const boxed = new String(text);
    Object.defineProperty(boxed, "charCodeAt", {
      value: (i: number) => {
        if (++this.reads > this.bound) throw new RegexBoundError(this.bound, text.length);
        return text.charCodeAt(i);
      },
    });
    this.boxed = boxed as string;
  }
  /** A match was found: the next search may read a little more. */
  matched(): void {
    this.bound += READS_PER_MATCH;
  }
  override getEncoding() {
    return MatcherInputBase.Encoding.UTF_16;
  }
  override asCharSequence(): string {
    return this.boxed;
  }
  override asBytes(): null {
    return null;
  }
  override length(): number {
    return this.text.length;
  }
}

export interface SafeRegex {
  /** Whether the pattern matches somewhere in `text`. */
  test(text: string): boolean;
  /** `text` with every match replaced by `replacement` (taken literally); throws RegexBoundError past its bound. */
  replaceAll(text: string, replacement: string): string;
}

/** Every match of `re` in `text` replaced; throws RegexBoundError when the search reads past its bound. */
function boundedReplaceAll(re: RE2JS, text: string, replacement: string): string {
  const input = new BoundedText(text);
  const m = re.matcher(input);
  let out = "";
  let last = 0;
  // start() and end() of the whole match only: a group would run another search from each match.
  while (m.find()) {
    out += text.slice(last, m.start()) + replacement;
    last = m.end();
    input.matched();
  }
  return out + text.slice(last);
}

/** Compiles a JavaScript-style pattern with flags among i, m, s, u (g is implied); throws UnsafePatternError. */
export function compileSafeRegex(pattern: string, flags = ""): SafeRegex {
  let re: RE2JS;
  try {
    if (hasNamedBackreference(pattern)) throw new Error("backreferences (\\k<name>) are not supported");
    const bits = [...flags].reduce((all, f) => all | (FLAGS[f] ?? 0), 0);
    re = RE2JS.compile(RE2JS.translateRegExp(pattern), bits);
  } catch (err) {
    const reason = (err as Error).message.replace(/^error parsing regexp: /, "");
    throw new UnsafePatternError(`is not a valid regular expression in RE2 syntax (no backreferences or lookaround): ${reason}`);
  }
  return {
    test: (text) => re.test(text),
    // The test first: it runs on RE2's DFA, much faster than the search that finds where matches are.
    replaceAll: (text, replacement) => (re.test(text) ? boundedReplaceAll(re, text, replacement) : text),
  };
}

/** Why a pattern cannot be used, or null when it can. */
export function regexProblem(pattern: string, flags = ""): string | null {
  try {
    compileSafeRegex(pattern, flags);
    return null;
  } catch (err) {
    if (err instanceof UnsafePatternError) return err.message;
    throw err;
  }
}

/** The keywords whose value is a schema, a list of schemas, or a map of names to schemas (draft 2020-12 and 7). */
const ONE = [
  "not",
  "if",
  "then",
  "else",
  "items",
  "additionalItems",
  "unevaluatedItems",
  "contains",
  "additionalProperties",
  "unevaluatedProperties",
  "propertyNames",
];
const LIST = ["allOf", "anyOf", "oneOf", "prefixItems", "items"];
const MAP = ["properties", "patternProperties", "$defs", "definitions", "dependentSchemas"];

/**
 * Every `pattern` and `patternProperties` key of a JSON Schema that RE2 cannot compile, each with the path of
 * the keyword (e.g. ["properties", "code", "pattern"]) and the reason. Values (const, enum, default) are not read.
 */
export function schemaPatternIssues(schema: unknown, path: (string | number)[] = []): { path: (string | number)[]; reason: string }[] {
  if (!schema || typeof schema !== "object" || Array.isArray(schema)) return [];
  const s = schema as Record<string, unknown>;
  const issues: { path: (string | number)[]; reason: string }[] = [];
  if (typeof s.pattern === "string") {
    const reason = regexProblem(s.pattern, "u");
    if (reason) issues.push({ path: [...path, "pattern"], reason });
  }
  if (s.patternProperties && typeof s.patternProperties === "object") {
    for (const key of Object.keys(s.patternProperties)) {
      const reason = regexProblem(key, "u");
      if (reason) issues.push({ path: [...path, "patternProperties", key], reason: `the key ${reason}` });
    }
  }
  for (const k of ONE) issues.push(...schemaPatternIssues(s[k], [...path, k]));
  for (const k of LIST) {
    const list = s[k];
    if (Array.isArray(list)) for (const [i, sub] of list.entries()) issues.push(...schemaPatternIssues(sub, [...path, k, i]));
  }
  for (const k of MAP) {
    const map = s[k];
    if (map && typeof map === "object" && !Array.isArray(map))
      for (const [name, sub] of Object.entries(map)) issues.push(...schemaPatternIssues(sub, [...path, k, name]));
  }
  return issues;
}

/** For a zod superRefine on a field holding a JSON Schema: an issue at each pattern RE2 cannot compile. */
export function refineSchemaPatterns(schema: unknown, ctx: z.RefinementCtx): void {
  for (const issue of schemaPatternIssues(schema)) ctx.addIssue({ code: "custom", path: issue.path, message: issue.reason });
}
