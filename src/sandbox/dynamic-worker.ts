// Code tools in Dynamic Workers (the Worker Loader binding, LOADER): one isolate per tool version, kept warm
// and reused by its id (the version and the source's hash); a fresh isolate has no network (globalOutbound
// null) unless the tool declares allowed_hosts, and no binding of the runtime's: its env holds only the
// tool's own secrets. Each call has a CPU limit (enforced by the platform; workerd run locally enforces none),
// a wall-clock timeout and an output cap (harness.ts).
// A namespace import: a workerd without `exports` (older local ones) still links the Worker.
import * as workers from "cloudflare:workers";
import { ToolError } from "../engine/tools/types";
import type { Env } from "../env";
import { type CodeToolVersion, sha256Hex } from "../protocol/code-tools";
import { redactCredentials } from "../protocol/redact";
import { type Harness, type HarnessAnswer, harnessModules } from "./harness";
import type { OutboundProps } from "./outbound";

export const COMPATIBILITY_DATE = "2026-04-01";

/** The loopback entrypoint a tool with allowed_hosts fetches through (outbound.ts, exported by the Worker). */
type Loopback = { CodeToolOutbound(options: { props: OutboundProps }): Fetcher };

function harness(env: Pick<Env, "LOADER">, id: string, source: string, tool: CodeToolVersion | null, cpuMs: number): Harness {
  if (!env.LOADER) throw new Error("This deployment has no LOADER binding ([[worker_loaders]] in wrangler.toml): code tools cannot run");
  const worker = env.LOADER.get(id, () => ({
    compatibilityDate: COMPATIBILITY_DATE,
    mainModule: "main.js",
    modules: harnessModules(source),
    env: { SECRETS: tool?.secrets ?? {} },
    globalOutbound:
      tool && tool.allowed_hosts.length > 0
        ? ((workers as { exports?: unknown }).exports as Loopback).CodeToolOutbound({ props: { tool: tool.name, hosts: tool.allowed_hosts } })
        : null,
  }));
  return worker.getEntrypoint(undefined, { limits: { cpuMs } }) as unknown as Harness;
}

/** Where a source fails to load ("Uncaught SyntaxError: ... at tool.js:2:10"), or why it has nothing to call; null when it is fine. */
export async function sourceProblem(env: Pick<Env, "LOADER">, source: string): Promise<string | null> {
  try {
    return await harness(env, `check:${await sha256Hex(source)}`, source, null, 1_000).check();
  } catch (err) {
    return loadError(err);
  }
}

function loadError(err: unknown): string {
  const text = err instanceof Error ? err.message : String(err);
  const uncaught = /Uncaught ([^\n]*)/.exec(text);
  const at = /at tool\.js:(\d+):(\d+)/.exec(text);
  const what = uncaught?.[1] ?? text.split("\n")[0] ?? text;
  return at ? `${what} at line ${at[1]}, column ${at[2]}` : what;
}

/** Waits for `p` at most `ms`, and not past `signal`; the isolate is left to finish on its own. */
export function within<T>(p: Promise<T>, ms: number, signal: AbortSignal, name: string): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const stop = (err: Error) => {
      clearTimeout(timer);
      signal.removeEventListener("abort", aborted);
      reject(err);
    };
    const aborted = () => stop(new ToolError(`Code tool "${name}" was cancelled`));
    const timer = setTimeout(() => stop(new ToolError(`Code tool "${name}" timed out after ${ms} ms`)), ms);
    if (signal.aborted) return aborted();
    signal.addEventListener("abort", aborted, { once: true });
    p.then(
      (v) => {
        clearTimeout(timer);
        signal.removeEventListener("abort", aborted);
        resolve(v);
      },
      (err: unknown) => stop(failure(name, err)),
    );
  });
}

/** What the platform throws for a call it stopped (a limit, a crash of the isolate) as the model reads it. */
function failure(name: string, err: unknown): ToolError {
  const text = err instanceof Error ? err.message : String(err);
  if (/CPU time limit/i.test(text)) return new ToolError(`Code tool "${name}" exceeded its CPU time limit`);
  if (/memory limit/i.test(text)) return new ToolError(`Code tool "${name}" exceeded its memory limit`);
  if (/had hung and would never generate a response/.test(text))
    return new ToolError(`Code tool "${name}" never settled: it awaits something that can never happen`);
  if (/Failed to start Worker/.test(text)) return new ToolError(`Code tool "${name}" could not start: ${loadError(err)}`);
  return new ToolError(`Code tool "${name}" failed: ${text}`);
}

export interface CallMeta {
  session_id: string;
  turn_id: string;
  tool_call_id: string;
}

/** Runs one call of `tool`: its result (text or JSON), or a ToolError saying what stopped it. */
export async function runCodeTool(
  env: Pick<Env, "LOADER">,
  tool: CodeToolVersion,
  args: Record<string, unknown>,
  meta: CallMeta,
  signal: AbortSignal,
): Promise<unknown> {
  const id = `tool:${tool.name}@${tool.version}:${tool.source_hash}`;
  const answer: HarnessAnswer = await within(harness(env, id, tool.source, tool, tool.cpu_ms).run(args, { ...meta }), tool.timeout_ms, signal, tool.name);
  // An error may quote what the tool sent (a failed request with its key): the tool's own secrets never reach the log.
  if (!answer.ok) throw new ToolError(redactCredentials(`Code tool "${tool.name}" failed: ${answer.error}`, Object.values(tool.secrets)));
  return "text" in answer ? answer.text : JSON.parse(answer.json);
}
