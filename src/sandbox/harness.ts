// The modules a code tool's Dynamic Worker runs besides its own source (tool.js): `lockdown.js`, evaluated
// first, makes the built-in prototypes non-extensible (a script adding `Object.prototype.x` gets a TypeError
// instead of changing every object of the isolate, which later calls of the same tool share), and `main.js`,
// the entrypoint the runtime calls over RPC: it runs the default export, turns what it returns into JSON text
// within the output cap, and what it throws (an Error or anything else) into a message naming the source's line.

/** The most a code tool call may return (JSON text); the loop spills what exceeds max_tool_result_bytes. */
export const MAX_OUTPUT_BYTES = 1_000_000;

export const LOCKDOWN = `
const intrinsics = [Object, Array, Function, String, Number, Boolean, Symbol, BigInt, Promise, RegExp, Date, Map, Set,
  WeakMap, WeakSet, Error, TypeError, RangeError, SyntaxError, ArrayBuffer, Uint8Array, Object.getPrototypeOf(Uint8Array)];
for (const c of intrinsics) Object.preventExtensions(c.prototype);
for (const o of [JSON, Math, Reflect, Object, Array, Function]) Object.preventExtensions(o);
`;

/** Names an error as the model reads it: an Error with the source's line, or what else was thrown (scripts share it). */
export const describeThrown = (what: "tool" | "script") => `
function where(stack) {
  const m = /tool\\.js:(\\d+):(\\d+)/.exec(stack);
  return m ? " (line " + m[1] + ", column " + m[2] + " of the ${what === "tool" ? "tool's source" : "script"})" : "";
}

function describe(err) {
  try {
    if (err instanceof Error) return String(err.name) + ": " + String(err.message) + where(String(err.stack ?? ""));
    const kind = err === null ? "null" : Array.isArray(err) ? "array" : typeof err;
    let shown;
    try { shown = JSON.stringify(err); } catch { shown = undefined; }
    if (shown === undefined && (kind === "symbol" || kind === "bigint")) shown = String(err);
    return "the ${what} threw a non-Error value (" + kind + ")" + (shown === undefined ? "" : ": " + shown.slice(0, 500));
  } catch {
    return "the ${what} threw a value that could not be described";
  }
}

`;

const MAIN = `
import "./lockdown.js";
import { WorkerEntrypoint } from "cloudflare:workers";
import * as source from "./tool.js";
const MAX = ${MAX_OUTPUT_BYTES};

${describeThrown("tool")}
function tooLarge(size) {
  return { ok: false, error: "the result is " + size + " characters long, more than the " + MAX + " a code tool may return" };
}

export default class extends WorkerEntrypoint {
  /** Whether the source has a default export to call (the check at registration). */
  check() {
    return typeof source.default === "function" ? null : "the source's default export is " + (source.default === undefined ? "missing" : "not a function");
  }

  async run(args, meta) {
    let value;
    try {
      const ctx = Object.freeze({ ...meta, secrets: Object.freeze({ ...(this.env.SECRETS ?? {}) }) });
      value = await source.default(args, ctx);
    } catch (err) {
      return { ok: false, error: describe(err) };
    }
    if (typeof value === "string") {
      if (value.length > MAX) return tooLarge(value.length);
      return { ok: true, text: value };
    }
    let json;
    try {
      json = JSON.stringify(value === undefined ? null : value);
    } catch (err) {
      return { ok: false, error: "the result is not JSON: " + describe(err) };
    }
    if (json.length > MAX) return tooLarge(json.length);
    return { ok: true, json };
  }
}
`;

/** The modules of a code tool's worker: the harness around `source`. */
export function harnessModules(source: string): Record<string, string> {
  return { "main.js": MAIN, "lockdown.js": LOCKDOWN, "tool.js": source };
}

/** What `run` answers: the result as text or JSON text, or the error the model is to see. */
export type HarnessAnswer = { ok: true; text: string } | { ok: true; json: string } | { ok: false; error: string };

/** The harness's RPC surface, as the runtime calls it. */
export interface Harness {
  check(): Promise<string | null>;
  run(args: Record<string, unknown>, meta: Record<string, string>): Promise<HarnessAnswer>;
}
