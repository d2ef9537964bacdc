// Code mode (docs/guides/code-mode.md): an agent with `code_mode: true` also gets run_code, whose `code` is the
// body of an async function calling the agent's other tools as `await tools.name(args)`. Its description
// declares those tools in TypeScript, generated from their JSON Schemas; the loop runs the script
// (code-mode-run.ts) in a sandbox the host provides (TurnSetup.runScript).
import { type CodeModeLimits, SCRIPT_LIMITS } from "../../protocol/agent-config";
import type { TurnState } from "../turn-state";
import { type JsonSchema, runByTheLoop, type ToolDefinition } from "./types";

export const RUN_CODE = "run_code";

/** Values of each source a script's run records (later ones are not replayed). */
export const MAX_RECORDED_VALUES = 1_000;

/**
 * What a script saw that a rerun would not see again unless given it, by source: Date.now() and new Date()
 * (`clock`), Math.random(), performance.now() (`perf`), crypto.randomUUID() (`uuid`) and each
 * crypto.getRandomValues() fill (`bytes`, as hex).
 */
export interface ScriptSeen {
  clock: number[];
  random: number[];
  perf: number[];
  uuid: string[];
  bytes: string[];
}

export const SEEN_SOURCES = ["clock", "random", "perf", "uuid", "bytes"] as const;

/** `seen` with every source, empty where it has none (recorded before that source was). */
export function seenOf(seen: Partial<ScriptSeen> | null | undefined): ScriptSeen {
  return {
    clock: [...(seen?.clock ?? [])],
    random: [...(seen?.random ?? [])],
    perf: [...(seen?.perf ?? [])],
    uuid: [...(seen?.uuid ?? [])],
    bytes: [...(seen?.bytes ?? [])],
  };
}

/**
 * A code-mode script (run_code): its inner tool calls in the order it made them (state.calls), and the values
 * clock, random and crypto sources gave it, so a rerun from its start is answered the same way.
 */
export interface CodeRun {
  state: TurnState;
  /** Each inner call's name and arguments as the script made them (canonical JSON): what a rerun is matched by. */
  keys: string[];
  seen: ScriptSeen;
}

/** What a script's runs saw so far; a checkpoint written before `seen` kept the clock and random values on the run itself. */
export function codeSeen(code: CodeRun): ScriptSeen {
  return seenOf(code.seen ?? (code as unknown as Partial<ScriptSeen>));
}

/** An inner call's answer as the script gets it: the result as JSON text, or the error it throws. */
export type ScriptCallAnswer = { ok: true; json: string } | { ok: false; error: string };

/** How a script's inner calls reach the session. */
export interface ScriptBridge {
  call(name: string, argsJson: string, seen: ScriptSeen): Promise<ScriptCallAnswer>;
}

/** What a script ended with: its return value as JSON text or its error, with its console lines. */
export type ScriptAnswer = ({ ok: true; json: string } | { ok: false; error: string }) & { logs: string[]; seen: ScriptSeen };

/** One run of a script in a sandbox: `recorded` holds what an earlier run saw (ScriptSeen), replayed in order. */
export interface ScriptRun {
  id: string;
  code: string;
  tools: string[];
  recorded: ScriptSeen;
  limits: CodeModeLimits;
}

/** The limits of one run of a script of an agent in code mode (`code_mode: true`: the defaults). */
export const scriptLimits = (mode: boolean | CodeModeLimits | undefined): CodeModeLimits => (typeof mode === "object" ? mode : SCRIPT_LIMITS);

/** Runs a script in the host's sandbox; throws ToolError when a limit stopped it. */
export type ScriptRunner = (run: ScriptRun, bridge: ScriptBridge, signal: AbortSignal) => Promise<ScriptAnswer>;

/** The tools a script may call: the agent's own, not the ones the loop performs (ask_user aside) nor run_code itself. */
export function scriptableTools(tools: ReadonlyMap<string, ToolDefinition>): ToolDefinition[] {
  return [...tools.values()].filter((t) => t.name !== RUN_CODE && !t.handoff_target && (!t.loop_handled || t.loop_handled === "ask_user"));
}

/** `tools` with run_code added, its description declaring the others. */
export function withRunCode(tools: Map<string, ToolDefinition>): Map<string, ToolDefinition> {
  const out = new Map(tools);
  out.set(RUN_CODE, runCodeTool(scriptableTools(tools)));
  return out;
}

function runCodeTool(tools: ToolDefinition[]): ToolDefinition {
  return {
    name: RUN_CODE,
    description: [
      "Runs a JavaScript script that calls your other tools, instead of calling them one model step at a time.",
      "`code` is the body of an async function: call tools with `await tools.name(args)` (a failed call throws an Error),",
      "and `return` the result. You get back {result, logs}: the returned value and the lines written with console.log.",
      "The script has no network (fetch fails) and no other globals of interest. The tools:",
      "",
      declarations(tools),
    ].join("\n"),
    parameters: {
      type: "object",
      properties: { code: { type: "string", description: "The body of an async function; `return` its result." } },
      required: ["code"],
      additionalProperties: false,
    },
    // The script itself reaches nothing: each inner call is checked against the policy on its own.
    permission_class: "safe",
    parallel_safe: false,
    // A rerun is answered from the log for every inner call it made before: running it again repeats nothing.
    idempotent: true,
    loop_handled: "run_code",
    execute: runByTheLoop,
  };
}

/** `declare const tools: {...}` for `tools`, each with its description as a comment. */
export function declarations(tools: ToolDefinition[]): string {
  const lines = tools.map((t) => {
    const doc = t.description ? `  /** ${t.description.replace(/\*\//g, "* /").replace(/\s+/g, " ").slice(0, 300)} */\n` : "";
    return `${doc}  ${propertyName(t.name)}(args: ${tsType(t.parameters, 1)}): Promise<unknown>;`;
  });
  return `declare const tools: {\n${lines.join("\n")}\n};`;
}

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;
const propertyName = (name: string) => (IDENTIFIER.test(name) ? name : JSON.stringify(name));

/** A JSON Schema as a TypeScript type (what it cannot say becomes `unknown`). */
export function tsType(schema: unknown, depth = 0): string {
  if (!schema || typeof schema !== "object" || depth > 6) return "unknown";
  const s = schema as JsonSchema;
  if (Array.isArray(s.enum)) return s.enum.map((v) => JSON.stringify(v)).join(" | ") || "never";
  if ("const" in s) return JSON.stringify(s.const);
  const union = (s.anyOf ?? s.oneOf) as unknown[] | undefined;
  if (Array.isArray(union)) return union.map((u) => tsType(u, depth + 1)).join(" | ") || "unknown";
  if (Array.isArray(s.type)) return s.type.map((t) => tsType({ ...s, type: t }, depth + 1)).join(" | ");
  switch (s.type) {
    case "string":
      return "string";
    case "number":
    case "integer":
      return "number";
    case "boolean":
      return "boolean";
    case "null":
      return "null";
    case "array": {
      const item = tsType(s.items, depth + 1);
      return /[|&]/.test(item) ? `(${item})[]` : `${item}[]`;
    }
    case "object":
    case undefined:
      return objectType(s, depth);
    default:
      return "unknown";
  }
}

function objectType(s: JsonSchema, depth: number): string {
  const props = s.properties && typeof s.properties === "object" ? Object.entries(s.properties as Record<string, unknown>) : [];
  if (props.length === 0) return s.type === "object" || s.properties ? "Record<string, unknown>" : "unknown";
  const required = new Set(Array.isArray(s.required) ? (s.required as string[]) : []);
  const fields = props.map(([k, v]) => `${propertyName(k)}${required.has(k) ? "" : "?"}: ${tsType(v, depth + 1)}`);
  return `{ ${fields.join("; ")} }`;
}
