// JSON Schema validation (draft 2020-12) for tool arguments and structured output, without code generation
// (Workers forbid eval), via @cfworker/json-schema.
import { Validator } from "@cfworker/json-schema";
import { compileSafeRegex, type SafeRegex, UnsafePatternError } from "../protocol/safe-regex";
import type { JsonSchema } from "./tools/types";

const validators = new WeakMap<object, Validator>();

/** Patterns compiled for the validator, by source (schemas repeat theirs on every call). */
const compiled = new Map<string, SafeRegex>();

/**
 * What the validator gets for `RegExp` while it runs: it builds `new RegExp(p, "u")` for `pattern`,
 * `patternProperties` and `format: "regex"` and only calls `test`, which this runs on RE2, linear in the text.
 * Schemas are not the runtime's own (a model chooses an ask_user response_schema), so their patterns must not
 * run on V8's backtracking engine.
 */
function LinearRegExp(pattern: string): Pick<SafeRegex, "test"> {
  let re = compiled.get(pattern);
  if (!re) {
    if (compiled.size >= 1000) compiled.clear();
    re = compileSafeRegex(pattern, "u");
    compiled.set(pattern, re);
  }
  return re;
}

/** Runs `fn` (synchronous, so nothing else runs meanwhile) with the global RegExp being LinearRegExp. */
function withLinearRegExp<T>(fn: () => T): T {
  const global = globalThis as { RegExp: unknown };
  const native = global.RegExp;
  global.RegExp = LinearRegExp;
  try {
    return fn();
  } finally {
    global.RegExp = native;
  }
}

/** Returns the problems of `value` against `schema`, one readable line each; empty when valid. */
export function schemaErrors(schema: JsonSchema, value: unknown): string[] {
  return [...new Set(schemaIssues(schema, value).map((i) => `${i.pointer || "/"}: ${i.reason}`))];
}

/** The problems of `value` against `schema`, each with the JSON Pointer of the value at fault ("" for the whole). */
export function schemaIssues(schema: JsonSchema, value: unknown): { pointer: string; reason: string }[] {
  let validator = validators.get(schema);
  if (!validator) {
    validator = new Validator(schema as ConstructorParameters<typeof Validator>[0], "2020-12", false);
    validators.set(schema, validator);
  }
  let result: ReturnType<Validator["validate"]>;
  try {
    result = withLinearRegExp(() => validator.validate(value));
  } catch (err) {
    // A schema nobody checked when it was given (an MCP server's): its pattern cannot be matched safely.
    if (err instanceof UnsafePatternError) return [{ pointer: "", reason: `the schema has a pattern that ${err.message}` }];
    throw err;
  }
  if (result.valid) return [];
  // The deepest errors say the most; drop the summary lines that only repeat "properties do not match".
  const specific = result.errors.filter((e) => !["properties", "allOf", "anyOf", "oneOf", "items", "$ref"].includes(e.keyword));
  const errors = specific.length > 0 ? specific : result.errors;
  return errors.map((e) => ({ pointer: e.instanceLocation.replace(/^#/, ""), reason: e.error }));
}

/** The keys of a JSON Pointer as schemaIssues gives it (its instance locations are URI-encoded). */
export function pointerKeys(pointer: string): string[] {
  return pointer
    .split("/")
    .slice(1)
    .map((p) => decodeURIComponent(p).replace(/~1/g, "/").replace(/~0/g, "~"));
}

/** A pointer into the body field `root` as a field path ("response" and /address/city: response.address.city; no root: address.city). */
export function fieldPath(root: string, pointer: string): string {
  return (root ? [root, ...pointerKeys(pointer)] : pointerKeys(pointer)).join(".");
}
