// Regular expressions that are not the runtime's own (guardrail patterns, the JSON Schema `pattern`s of tool
// arguments, answers and final outputs) run on RE2 (re2js): matching is linear in the text whatever the
// pattern, where V8's backtracking can take exponential time. RE2 has no backreferences and no lookaround, so a
// pattern needing them is refused where it is given, with the parser's reason.
import { RE2JS } from "re2js";
import type { z } from "zod";

/** A pattern RE2 cannot compile; `message` says why. */
export class UnsafePatternError extends Error {}

const FLAGS: Record<string, number> = { i: RE2JS.CASE_INSENSITIVE, m: RE2JS.MULTILINE, s: RE2JS.DOTALL, u: 0 };

/** JavaScript escapes RE2 spells otherwise (\u00e9, (?<name>, [^]) are translated; `\k<name>` is a backreference. */
function hasNamedBackreference(pattern: string): boolean {
  for (let i = 0; i < pattern.length; i++) if (pattern[i] === "\\" && pattern[++i] === "k") return true;
  return false;
}

export interface SafeRegex {
  /** Whether the pattern matches somewhere in `text`. */
  test(text: string): boolean;
  /** `text` with every match replaced by `replacement` (taken literally). */
  replaceAll(text: string, replacement: string): string;
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
    replaceAll: (text, replacement) => (re.test(text) ? re.matcher(text).replaceAll(() => replacement) : text),
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
