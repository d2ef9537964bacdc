// The command line's contract: its injected I/O, exit codes, usage text and argument parsing.
import type { BackoffOptions, FetchLike } from "./client";
import { RuntimeError } from "./errors";
import type { WebSocketConstructorLike, WebSocketFactory } from "./socket";

export interface CliIO {
  stdout(text: string): void;
  stderr(text: string): void;
  /**
   * Writes `prompt` and reads one line; null at the end of input, or when `signal` aborts the question. An aborted
   * question ends its prompt's line at once (as readline does), so the next output starts on a new line.
   */
  question(prompt: string, signal?: AbortSignal): Promise<string | null>;
  readFile(path: string): Promise<string>;
  /** Writes the pending question's prompt again (after a message was printed below it); optional. */
  redrawPrompt?(): void;
  /** Calls `handler` on each Ctrl-C; returns the unsubscribe. */
  onInterrupt(handler: () => void): () => void;
  env: Record<string, string | undefined>;
  /** ANSI colors on stdout. */
  color?: boolean;
}

export interface CliDeps {
  fetch?: FetchLike;
  WebSocket?: WebSocketConstructorLike | WebSocketFactory;
  backoff?: BackoffOptions;
}

export const EXIT = { ok: 0, error: 1, usage: 2, interrupted: 130 } as const;

export const USAGE = `usage: agent-runtime <command> [options]

commands:
  chat --agent <name> | --session <id>   interactive chat (Ctrl-C interrupts the turn, twice exits; Ctrl-D exits)
       [--on-busy <strategy>] [--debounce-ms N]
                                         what a message does while a turn of the session runs: enqueue,
                                         reject, interrupt, rollback or inject (docs/guides/busy-sessions.md)
  events <session> [--after N] [--follow] [--channel <id>]
                                         the session's events as JSON lines (--follow: live, until Ctrl-C)
  agents put <file.json> [--name <name>] create or replace an agent from a JSON file
  agents get <name> | agents list | agents delete <name>
  tree <session> <turn> [--json]         a turn's tool calls, nested by sub-agent
  timeline <session> <turn>              a turn's waterfall: model calls, tool calls, sub-agents, waits
  memory get <resource> | memory set <resource> <file.json> [--agent <name>]
                                         a resource's working memory (set replaces the document)
  memory search <resource> <words...> [--limit N]
                                         the resource's earlier turns matching the words
  eval --session <id> --agent <config.json> [--turns a,b] [--tools recorded|live]
                                         replay the session's ended turns (or --turns) with the AgentConfig
                                         fields in the file; a row per turn; exit 1 when a turn that
                                         completed before does not complete now
  eval run <agent> --dataset <name[@version]> --scorer <list> [--version N] [--concurrency N] [--fail-under X]
                                         an eval run (docs/guides/evals.md): --scorer is a JSON array of scorers or
                                         a comma list of type[:value] (contains:answer,exact,max_steps:3); a line
                                         per scorer; exit 1 when a scorer's mean is under --fail-under

options:
  --url <url>   the deployment (default $AGENT_RUNTIME_URL, else http://127.0.0.1:8787)
  --key <key>   an API key (default $AGENT_RUNTIME_KEY, else $KEY)
  --help
`;

const VALUE_FLAGS = new Set([
  "url",
  "key",
  "agent",
  "session",
  "after",
  "channel",
  "name",
  "turns",
  "tools",
  "limit",
  "on-busy",
  "debounce-ms",
  "dataset",
  "scorer",
  "fail-under",
  "version",
  "concurrency",
]);
const BOOLEAN_FLAGS = new Set(["follow", "json", "help", "no-color"]);

export class UsageError extends Error {
  override readonly name = "UsageError";
}

export interface ParsedArgs {
  positionals: string[];
  flags: Record<string, string | true>;
}

/** `--flag value`, `--flag=value`, boolean `--flag`; `--` ends the options. Unknown flags are a UsageError. */
export function parseArgs(argv: readonly string[]): ParsedArgs {
  const positionals: string[] = [];
  const flags: Record<string, string | true> = {};
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === "--") {
      positionals.push(...argv.slice(i + 1));
      break;
    }
    if (arg === "-h") {
      flags.help = true;
      continue;
    }
    if (!arg.startsWith("--") || arg === "--") {
      positionals.push(arg);
      continue;
    }
    const eq = arg.indexOf("=");
    const name = arg.slice(2, eq === -1 ? undefined : eq);
    if (BOOLEAN_FLAGS.has(name)) {
      if (eq !== -1) throw new UsageError(`--${name} takes no value`);
      flags[name] = true;
    } else if (VALUE_FLAGS.has(name)) {
      const value = eq === -1 ? argv[++i] : arg.slice(eq + 1);
      if (value === undefined || (eq === -1 && value.startsWith("--"))) throw new UsageError(`--${name} needs a value`);
      flags[name] = value;
    } else {
      throw new UsageError(`unknown option --${name}`);
    }
  }
  return { positionals, flags };
}

/** A non-negative integer flag, or the default. */
export function intFlag(flags: ParsedArgs["flags"], name: string, fallback: number): number {
  const v = flags[name];
  if (v === undefined) return fallback;
  const n = Number(v);
  if (typeof v !== "string" || !/^\d+$/.test(v) || !Number.isSafeInteger(n)) throw new UsageError(`--${name} must be a non-negative integer`);
  return n;
}

/** The one line an error prints: `error: <message> (<status> <code>)`. */
export function errorLine(err: unknown, url?: string): string {
  if (err instanceof UsageError) return `agent-runtime: ${err.message} (see --help)`;
  if (err instanceof RuntimeError) {
    if (err.status === 0 && err.code === "network_error") return `agent-runtime: error: cannot reach ${url ?? "the runtime"}: ${err.message}`;
    return `agent-runtime: error: ${err.message} (${err.status ? `${err.status} ` : ""}${err.code})`;
  }
  if (err instanceof SyntaxError) return `agent-runtime: error: invalid JSON: ${err.message}`;
  return `agent-runtime: error: ${err instanceof Error ? err.message : String(err)}`;
}

export function str(v: string | true | undefined): string | undefined {
  return typeof v === "string" ? v : undefined;
}

/** Combines abort signals (AbortSignal.any is missing in older runtimes). */
export function anySignal(...signals: AbortSignal[]): AbortSignal {
  const c = new AbortController();
  for (const s of signals) {
    if (s.aborted) {
      c.abort(s.reason);
      break;
    }
    s.addEventListener("abort", () => c.abort(s.reason), { once: true });
  }
  return c.signal;
}
