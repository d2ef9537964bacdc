// The modules of a code-mode script's Dynamic Worker (docs/guides/code-mode.md): `tool.js` wraps the script as
// the body of an async function of (tools, console); `main.js` gives it `tools` (each call goes to the session
// through the bridge it is handed over RPC), a console whose lines are kept, and Date.now() / new Date(),
// Math.random(), performance.now(), crypto.randomUUID() and crypto.getRandomValues() that answer a rerun with
// the values the first run saw (and report new ones with each call).
import { MAX_RECORDED_VALUES } from "../engine/tools/code-mode";
import { describeThrown, LOCKDOWN, MAX_OUTPUT_BYTES } from "./harness";

/** Console lines a script keeps, and the characters of each. */
const MAX_LOG_LINES = 200;
const MAX_LOG_LINE = 2_000;

const MAIN = `
import "./lockdown.js";
import { WorkerEntrypoint } from "cloudflare:workers";
import script from "./tool.js";
const MAX = ${MAX_OUTPUT_BYTES};
// Taken before any run replaces them.
const RealDate = Date;
const realRandom = Math.random.bind(Math);
const realPerf = performance.now.bind(performance);
const realUUID = crypto.randomUUID.bind(crypto);
const realFill = crypto.getRandomValues.bind(crypto);
const SOURCES = ["clock", "random", "perf", "uuid", "bytes"];
const hex = (bytes) => Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
${describeThrown("script")}
function text(value) {
  if (typeof value === "string") return value;
  try { const json = JSON.stringify(value); return json === undefined ? String(value) : json; } catch { return String(value); }
}

export default class extends WorkerEntrypoint {
  async run(names, recorded, bridge) {
    // No built-in method is called once the script runs: it may replace them (its own isolate's).
    const fresh = { clock: [], random: [], perf: [], uuid: [], bytes: [] };
    const take = () => {
      const seen = {};
      for (let i = 0; i < SOURCES.length; i++) {
        seen[SOURCES[i]] = fresh[SOURCES[i]];
        fresh[SOURCES[i]] = [];
      }
      return seen;
    };
    const keep = (kind, value) => { const list = fresh[kind]; list[list.length] = value; };
    // The first ${MAX_RECORDED_VALUES} values of each are recorded; later ones are fresh in every run.
    const replayed = (kind, real) => {
      let i = 0;
      return () => {
        const at = i++;
        if (at < recorded[kind].length) return recorded[kind][at];
        const value = real();
        if (at < ${MAX_RECORDED_VALUES}) keep(kind, value);
        return value;
      };
    };
    const now = replayed("clock", () => RealDate.now());
    Math.random = replayed("random", realRandom);
    performance.now = replayed("perf", realPerf);
    crypto.randomUUID = replayed("uuid", realUUID);
    // Each fill is recorded as hex. The real fill runs first, so its checks (integer arrays, 65,536 bytes) apply
    // to a rerun too; a rerun's fill of another length keeps its fresh bytes (the script changed course).
    let fills = 0;
    crypto.getRandomValues = (array) => {
      const at = fills++;
      realFill(array);
      const view = new Uint8Array(array.buffer, array.byteOffset, array.byteLength);
      const given = recorded.bytes[at];
      if (given === undefined) {
        if (at < ${MAX_RECORDED_VALUES}) keep("bytes", hex(view));
      } else if (given.length === view.length * 2) {
        for (let i = 0; i < view.length; i++) view[i] = parseInt(given.slice(2 * i, 2 * i + 2), 16);
      }
      return array;
    };
    globalThis.Date = class extends RealDate {
      constructor(...a) { if (a.length === 0) super(now()); else super(...a); }
      static now() { return now(); }
    };
    const logs = [];
    const line = (prefix) => (...args) => {
      if (logs.length < ${MAX_LOG_LINES}) logs.push((prefix + args.map(text).join(" ")).slice(0, ${MAX_LOG_LINE}));
    };
    const console = Object.freeze({ log: line(""), info: line(""), debug: line(""), warn: line("warn: "), error: line("error: ") });
    const call = (name) => async (args) => {
      const json = JSON.stringify(args === undefined ? {} : args);
      if (json === undefined || json[0] !== "{") throw new TypeError("tools." + name + " takes one object of arguments");
      const answer = await bridge.call(name, json, take());
      if (!answer.ok) throw new Error(answer.error);
      return JSON.parse(answer.json);
    };
    const tools = Object.freeze(Object.fromEntries(names.map((n) => [n, call(n)])));
    const end = (answer) => ({ ...answer, logs, seen: take() });
    let value;
    try {
      value = await script(tools, console);
    } catch (err) {
      return end({ ok: false, error: describe(err) });
    }
    let json;
    try {
      json = JSON.stringify(value === undefined ? null : value);
    } catch (err) {
      return end({ ok: false, error: "the result is not JSON: " + describe(err) });
    }
    if (json.length > MAX) return end({ ok: false, error: "the result is " + json.length + " characters long, more than the " + MAX + " a script may return" });
    return end({ ok: true, json });
  }
}
`;

/** The modules of a script's worker; the script's first line is line 1 of tool.js. */
export function scriptModules(code: string): Record<string, string> {
  return { "main.js": MAIN, "lockdown.js": LOCKDOWN, "tool.js": `export default async function (tools, console) { ${code}\n}\n` };
}
