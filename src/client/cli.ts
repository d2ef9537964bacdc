// The command line (`agent-runtime`), with its I/O injected: bin/agent-runtime.mjs supplies the terminal
// (Node), the tests a scripted one. Nothing here touches process, files or the terminal directly.
import { type BackoffOptions, type FetchLike, RuntimeClient, type StreamStatus } from "./client";
import { RuntimeError } from "./errors";
import { approvalPrompt, ChatRenderer, type FormatOptions, formatTree, parseApproval } from "./format";
import type { WebSocketConstructorLike, WebSocketFactory } from "./socket";
import type { RuntimeEvent, TerminalEvent } from "./types";

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
  events <session> [--after N] [--follow] [--channel <id>]
                                         the session's events as JSON lines (--follow: live, until Ctrl-C)
  agents put <file.json> [--name <name>] create or replace an agent from a JSON file
  agents get <name> | agents list | agents delete <name>
  tree <session> <turn> [--json]         a turn's tool calls, nested by sub-agent

options:
  --url <url>   the deployment (default $AGENT_RUNTIME_URL, else http://127.0.0.1:8787)
  --key <key>   an API key (default $AGENT_RUNTIME_KEY, else $KEY)
  --help
`;

const VALUE_FLAGS = new Set(["url", "key", "agent", "session", "after", "channel", "name"]);
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

/** Runs one command; resolves with the process exit code. */
export async function runCli(argv: readonly string[], io: CliIO, deps: CliDeps = {}): Promise<number> {
  let url: string | undefined;
  try {
    const args = parseArgs(argv);
    const [command, ...rest] = args.positionals;
    if (args.flags.help || command === undefined || command === "help") {
      io.stdout(USAGE);
      return command === undefined && !args.flags.help ? EXIT.usage : EXIT.ok;
    }
    url = str(args.flags.url) ?? io.env.AGENT_RUNTIME_URL ?? "http://127.0.0.1:8787";
    const key = str(args.flags.key) ?? io.env.AGENT_RUNTIME_KEY ?? io.env.KEY;
    if (!key) throw new UsageError("missing --key (or set AGENT_RUNTIME_KEY)");
    if (!/^https?:\/\//i.test(url)) throw new UsageError(`--url must start with http:// or https:// (got ${url})`);
    const client = new RuntimeClient({ url, key, fetch: deps.fetch, WebSocket: deps.WebSocket, backoff: deps.backoff });
    const fmt: FormatOptions = { color: !!io.color && !args.flags["no-color"] };
    switch (command) {
      case "chat":
        expectArgs(rest, 0, "chat");
        return await chat(client, io, args.flags, fmt);
      case "events": {
        expectArgs(rest, 1, "events <session>");
        return await eventsCommand(client, io, rest[0]!, args.flags);
      }
      case "agents":
        return await agentsCommand(client, io, rest, args.flags);
      case "tree": {
        expectArgs(rest, 2, "tree <session> <turn>");
        const tree = await client.tree(rest[0]!, rest[1]!);
        io.stdout(args.flags.json ? `${JSON.stringify(tree, null, 2)}\n` : formatTree(tree, fmt));
        return EXIT.ok;
      }
      default:
        throw new UsageError(`unknown command "${command}"`);
    }
  } catch (err) {
    io.stderr(`${errorLine(err, url)}\n`);
    return err instanceof UsageError ? EXIT.usage : EXIT.error;
  }
}

function str(v: string | true | undefined): string | undefined {
  return typeof v === "string" ? v : undefined;
}

function expectArgs(rest: string[], n: number, usage: string): void {
  if (rest.length !== n) throw new UsageError(`${rest.length < n ? "missing arguments" : `unexpected argument "${rest[n]}"`}: ${usage}`);
}

async function agentsCommand(client: RuntimeClient, io: CliIO, rest: string[], flags: ParsedArgs["flags"]): Promise<number> {
  const [sub, ...more] = rest;
  const print = (v: unknown) => io.stdout(`${JSON.stringify(v, null, 2)}\n`);
  switch (sub) {
    case "put": {
      expectArgs(more, 1, "agents put <file.json>");
      const config = JSON.parse(await io.readFile(more[0]!)) as Record<string, unknown>;
      if (!config || typeof config !== "object" || Array.isArray(config)) throw new UsageError(`${more[0]} must hold a JSON object (an agent config)`);
      const name = str(flags.name) ?? (typeof config.name === "string" ? config.name : undefined);
      if (!name) throw new UsageError(`${more[0]} has no "name"; pass --name`);
      print(await client.putAgent(name, config as Parameters<RuntimeClient["putAgent"]>[1]));
      return EXIT.ok;
    }
    case "get":
      expectArgs(more, 1, "agents get <name>");
      print(await client.getAgent(more[0]!));
      return EXIT.ok;
    case "list":
      expectArgs(more, 0, "agents list");
      print(await client.listAgents());
      return EXIT.ok;
    case "delete":
      expectArgs(more, 1, "agents delete <name>");
      print(await client.deleteAgent(more[0]!));
      return EXIT.ok;
    default:
      throw new UsageError(sub === undefined ? "missing subcommand: agents put|get|list|delete" : `unknown subcommand "agents ${sub}"`);
  }
}

async function eventsCommand(client: RuntimeClient, io: CliIO, sessionId: string, flags: ParsedArgs["flags"]): Promise<number> {
  const after = intFlag(flags, "after", 0);
  const channel = str(flags.channel);
  if (channel && !flags.follow) throw new UsageError("--channel needs --follow");
  if (!flags.follow) {
    for await (const e of client.readLog(sessionId, { after })) io.stdout(`${JSON.stringify(e)}\n`);
    return EXIT.ok;
  }
  const stop = new AbortController();
  const off = io.onInterrupt(() => stop.abort());
  try {
    const opts = { signal: stop.signal, ...(channel ? { channel } : {}), ...(flags.after !== undefined || !channel ? { after } : {}) };
    for await (const e of client.events(sessionId, opts)) io.stdout(`${JSON.stringify(e)}\n`);
    return stop.signal.aborted ? EXIT.interrupted : EXIT.ok;
  } finally {
    off();
  }
}

/** Combines abort signals (AbortSignal.any is missing in older runtimes). */
function anySignal(...signals: AbortSignal[]): AbortSignal {
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

async function chat(client: RuntimeClient, io: CliIO, flags: ParsedArgs["flags"], fmt: FormatOptions): Promise<number> {
  const agent = str(flags.agent);
  let sessionId = str(flags.session);
  if (!agent && !sessionId) throw new UsageError("chat needs --agent <name> (a new session) or --session <id> (resume one)");
  const renderer = new ChatRenderer(fmt);
  const out = (text: string) => text && io.stdout(text);
  // While a question waits, the cursor is after its prompt: a message goes on the next line.
  let promptOpen = false;
  const note = (text: string) => {
    io.stdout(`${promptOpen ? "\n" : renderer.lineStart()}${text}\n`);
    promptOpen = false;
  };
  const askLine = async (prompt: string, signal: AbortSignal): Promise<string | null> => {
    promptOpen = true;
    const closed = () => (promptOpen = false); // the IO ends the line of an aborted question
    signal.addEventListener("abort", closed, { once: true });
    try {
      return await io.question(prompt, signal);
    } finally {
      signal.removeEventListener("abort", closed);
      promptOpen = false;
    }
  };

  // Ctrl-C: during a turn the first interrupts it and the second exits; at the prompt, two in a row exit.
  const exit = new AbortController();
  let turn: { abort: AbortController; interrupted: boolean } | null = null;
  let armed = false;
  const off = io.onInterrupt(() => {
    if (turn && !turn.interrupted) {
      turn.interrupted = true;
      turn.abort.abort();
      note("^C interrupting the turn… (Ctrl-C again to exit)");
      client.interrupt(sessionId!, "interrupted from the command line").catch((err) => io.stderr(`${errorLine(err)}\n`));
    } else if (turn || armed) {
      exit.abort();
    } else {
      armed = true;
      const reprompt = promptOpen;
      note("^C (Ctrl-C again or Ctrl-D to exit)");
      if (reprompt && io.redrawPrompt) {
        promptOpen = true;
        io.redrawPrompt();
      }
    }
  });

  const ask = async (toolName: string, args: unknown, depth: number, signal: AbortSignal): Promise<"approve" | "reject" | null> => {
    out(renderer.lineStart());
    for (;;) {
      const answer = await askLine(approvalPrompt(toolName, args, depth, fmt), signal);
      if (answer === null) return null;
      const decision = parseApproval(answer);
      if (decision) return decision;
    }
  };

  // A blip (the socket closed, the next connection works) is silent; failing reconnections are shown.
  let reconnecting = false;
  const onStatus = (s: StreamStatus) => {
    if (s.type === "retry" && s.error) {
      reconnecting = true;
      const reason = s.error instanceof RuntimeError && s.error.status === 0 ? s.error.message.replace(/^.* failed: /, "") : s.error.message;
      note(`… connection lost (${reason}); reconnecting in ${(s.delayMs / 1000).toFixed(1)} s`);
    } else if (s.type === "open" && reconnecting) {
      reconnecting = false;
      note(`… reconnected, resuming after event ${s.after}`);
    }
  };

  /** Runs one turn's wait; prints its failure, if the wait itself fails. Resolves false when the user asked to exit. */
  const follow = async (wait: (signal: AbortSignal, onApproval: (e: RuntimeEvent) => Promise<"approve" | "reject" | null>) => Promise<TerminalEvent>) => {
    const current = { abort: new AbortController(), interrupted: false };
    turn = current;
    const onApproval = async (e: RuntimeEvent) => {
      const [name, args] = e.type === "action.required" ? [e.payload.tool_name, e.payload.args] : ["tool", undefined];
      return ask(name, args, e.depth ?? 0, anySignal(current.abort.signal, exit.signal));
    };
    try {
      await wait(exit.signal, onApproval);
    } catch (err) {
      if (exit.signal.aborted) return false;
      io.stderr(`${renderer.lineStart()}${errorLine(err)}\n`);
    } finally {
      turn = null;
    }
    out(renderer.lineStart());
    return !exit.signal.aborted;
  };

  try {
    if (sessionId) {
      const snap = await client.getSession(sessionId);
      note(`session ${sessionId} (agent ${snap.agent.name}, ${snap.turn_count} turn${snap.turn_count === 1 ? "" : "s"} so far)`);
      const thread = await client.getThread(sessionId);
      if (thread.active_turn_id) {
        const turnId = thread.active_turn_id;
        note(`attaching to the running turn ${turnId}`);
        const ok = await follow(async (signal, onApproval) => {
          // Decisions already pending (their action.required is before the cursor) are asked first.
          for (const a of thread.pending_actions) {
            // The approval as its action.required said it (the read model keeps what the prompt needs).
            const payload = {
              kind: "tool_approval" as const,
              tool_name: a.tool_name ?? "tool",
              args: a.args,
              injected_args: {},
              expires_at: a.expires_at ?? 0,
            };
            const decision = await onApproval({ type: "action.required", payload, depth: 0 } as RuntimeEvent);
            if (decision) await client.respondAction(sessionId!, a.action_id, decision).catch(() => undefined);
          }
          return client.waitForTurn(sessionId!, turnId, {
            after: thread.last_sequence,
            signal,
            onApproval,
            onStatus,
            onEvent: (e) => void out(renderer.render(e)),
          });
        });
        if (!ok) return EXIT.interrupted;
      }
    } else {
      const created = await client.createSession({ agent: agent! });
      sessionId = created.session_id;
      note(`session ${sessionId} (agent ${agent}); resume it with --session ${sessionId}`);
    }
    const sid = sessionId;

    for (;;) {
      const line = await askLine("> ", exit.signal);
      if (line === null) {
        if (exit.signal.aborted) return EXIT.interrupted;
        out("\n"); // Ctrl-D: leave the prompt's line
        return EXIT.ok;
      }
      armed = false;
      const input = line.trim();
      if (!input) continue;
      if (input === "/exit" || input === "/quit") return EXIT.ok;
      if (input === "/session") {
        note(sid);
        continue;
      }
      if (input === "/help") {
        note("type a message and Enter to run a turn; /session prints the session id; /exit (or Ctrl-D) leaves");
        continue;
      }
      const ok = await follow((signal, onApproval) =>
        client.submitAndWait(sid, input, { signal, onApproval, onStatus, onEvent: (e) => void out(renderer.render(e)) }),
      );
      if (!ok) return EXIT.interrupted;
    }
  } finally {
    off();
    out(promptOpen ? "\n" : renderer.lineStart()); // leaving mid-line (a question, streamed text): end the line
    exit.abort();
  }
}
