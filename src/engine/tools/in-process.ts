// In-process tools (docs/guides/typescript-tools.md): the AI SDK's `tool({ description, inputSchema, execute })`
// written in the Worker that imports the runtime (createRuntime), run in the session's own isolate. Each becomes a
// ToolDefinition like a built-in, so the loop gives it the same governance: permission classes, approvals and
// edits, budgets, events, spilling, idempotency after a restart, replay from the recording.
import { asSchema, type Tool } from "ai";
import { PERMISSION_CLASSES, type PermissionClass } from "../../protocol/tool-classes";
import { BUILTIN_TOOLS } from "./builtins";
import { HANDOFF_PREFIX } from "./handoff";
import { callTimeout } from "./http-io";
import { SPAWN_SUBAGENTS } from "./subagent-tools";
import { type JsonSchema, type ToolDefinition, ToolError } from "./types";

/** How the runtime governs an in-process tool; every field has a default. */
export interface InProcessToolOptions {
  /** The class a session's policy must enable for the tool to be exposed (default "network", like a webhook tool). */
  permission_class?: PermissionClass;
  /** May run concurrently with other parallel-safe calls of the same step (default true). */
  parallel_safe?: boolean;
  /** Safe to run again when a restart cut a call before its result was recorded (default false: such a call gets an error result). */
  idempotent?: boolean;
  /** Past this the call's abortSignal is aborted and the call gets an error result (default 30 000 ms). */
  timeout_ms?: number;
  /** Calls of tools holding the same lock never overlap. */
  lock?: string;
}

/** A tool as createRuntime takes it: an AI SDK tool, alone or with the runtime's options beside it. */
export type InProcessToolSpec = Tool | ({ tool: Tool } & InProcessToolOptions);

/** The in-process tools of a deployment, by name. */
export type InProcessTools = ReadonlyMap<string, ToolDefinition>;
export const NO_IN_PROCESS_TOOLS: InProcessTools = new Map();

/** What an in-process tool's execute receives as `experimental_context`. */
export interface InProcessToolContext {
  session_id: string;
  turn_id: string;
  tool_call_id: string;
}

const NAME = /^[A-Za-z0-9_-]{1,64}$/;
const LOCK = /^[A-Za-z0-9_.:-]{1,64}$/;
const DEFAULT_TIMEOUT_MS = 30_000;
const MAX_TIMEOUT_MS = 15 * 60_000;

/** The deployment's tools from createRuntime's `tools`; throws (at the Worker's start) on a name or option it cannot take. */
export function inProcessTools(specs: Record<string, InProcessToolSpec>): InProcessTools {
  return new Map(Object.entries(specs).map(([name, spec]) => [name, inProcessTool(name, spec)]));
}

function inProcessTool(name: string, spec: InProcessToolSpec): ToolDefinition {
  const fail = (reason: string) => new Error(`createRuntime: tool "${name}" ${reason}`);
  if (!NAME.test(name)) throw fail("must be named with 1-64 characters of A-Z a-z 0-9 _ -");
  if (BUILTIN_TOOLS.has(name) || name === SPAWN_SUBAGENTS || name.startsWith(HANDOFF_PREFIX)) throw fail("clashes with a built-in tool");
  const { tool, ...options }: { tool: Tool } & InProcessToolOptions = "tool" in spec && !("inputSchema" in spec) ? spec : { tool: spec as Tool };
  const { permission_class = "network", parallel_safe = true, idempotent = false, timeout_ms = DEFAULT_TIMEOUT_MS, lock } = options;
  if (!PERMISSION_CLASSES.includes(permission_class)) throw fail(`has an unknown permission_class "${permission_class}"`);
  if (!Number.isInteger(timeout_ms) || timeout_ms < 1 || timeout_ms > MAX_TIMEOUT_MS) throw fail(`needs a timeout_ms between 1 and ${MAX_TIMEOUT_MS}`);
  if (lock !== undefined && !LOCK.test(lock)) throw fail("needs a lock of 1-64 characters of A-Z a-z 0-9 _ . : -");
  const run = tool.execute;
  if (!run) throw fail("has no execute function");
  const schema = asSchema(tool.inputSchema);
  const json = schema.jsonSchema;
  if (typeof (json as PromiseLike<unknown>).then === "function") throw fail("needs an inputSchema whose JSON Schema is known at once (zod, or jsonSchema())");
  const { $schema: _, ...parameters } = json as JsonSchema;
  return {
    name,
    description: tool.description ?? "",
    parameters,
    permission_class,
    parallel_safe,
    idempotent,
    ...(lock ? { lock } : {}),
    async execute(args, ctx) {
      // The arguments may come from the model or from an approver's edit: both are checked against the schema.
      const valid = schema.validate ? await schema.validate(args) : { success: true as const, value: args };
      if (!valid.success) throw new ToolError(`Invalid arguments for tool "${name}": ${issuesOf(valid.error)}`);
      const timeout = callTimeout(timeout_ms, ctx.signal);
      const context: InProcessToolContext = { session_id: ctx.session_id, turn_id: ctx.turn_id, tool_call_id: ctx.tool_call_id };
      const timedOut = new Promise<never>((_, reject) => {
        const fail = () => reject(timeout.timedOut() ? new ToolError(`Tool "${name}" timed out after ${timeout_ms} ms`) : timeout.signal.reason);
        timeout.signal.addEventListener("abort", fail, { once: true });
      });
      try {
        const result = run(valid.value, { toolCallId: ctx.tool_call_id, messages: [], abortSignal: timeout.signal, experimental_context: context });
        return asJson(name, await Promise.race([lastOf(result), timedOut]));
      } finally {
        timeout.clear();
        timedOut.catch(() => {}); // settled or never: nobody waits on it any more
      }
    },
  };
}

/** A tool whose execute yields (an AsyncIterable) answers with its last value, as in the AI SDK. */
async function lastOf(result: unknown): Promise<unknown> {
  if (result && typeof result === "object" && Symbol.asyncIterator in result) {
    let last: unknown;
    for await (const value of result as AsyncIterable<unknown>) last = value;
    return last;
  }
  return result;
}

/** The result as the log keeps it: a string or a JSON value (undefined becomes null). */
function asJson(name: string, value: unknown): unknown {
  if (value === undefined) return null;
  if (typeof value === "string") return value;
  try {
    return JSON.parse(JSON.stringify(value)) as unknown;
  } catch (err) {
    throw new ToolError(`Tool "${name}" returned a value that is not JSON: ${(err as Error).message}`);
  }
}

/** A validation error as one line: zod's issues with their paths, or the error's message. */
function issuesOf(error: unknown): string {
  const issues = (error as { issues?: { path: PropertyKey[]; message: string }[] }).issues;
  if (Array.isArray(issues)) return issues.map((i) => (i.path.length ? `${i.path.map(String).join(".")}: ${i.message}` : i.message)).join("; ");
  return error instanceof Error ? error.message : String(error);
}
