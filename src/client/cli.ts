// The command line (`agent-runtime`), with its I/O injected: bin/agent-runtime.mjs supplies the terminal
// (Node), the tests a scripted one. Nothing here touches process, files or the terminal directly.

import { type CliDeps, type CliIO, EXIT, errorLine, intFlag, type ParsedArgs, parseArgs, str, USAGE, UsageError } from "./cli-args";
import { chat } from "./cli-chat";
import { evalCommand } from "./cli-eval";
import { evalRunCommand } from "./cli-eval-run";
import { memoryCommand } from "./cli-memory";
import { RuntimeClient } from "./client";
import { type FormatOptions, formatTree } from "./format";
import { formatWaterfall } from "./format-timeline";
import type { RuntimeEvent } from "./types";

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
      case "memory":
        return await memoryCommand(client, io, rest, args.flags);
      case "eval":
        if (rest[0] === "run") {
          expectArgs(rest, 2, "eval run <agent> --dataset <name> --scorer <list>");
          return await evalRunCommand(client, io, rest[1]!, args.flags);
        }
        expectArgs(rest, 0, "eval --session <id> --agent <config.json>");
        return await evalCommand(client, io, args.flags);
      case "tree": {
        expectArgs(rest, 2, "tree <session> <turn>");
        const tree = await client.tree(rest[0]!, rest[1]!);
        io.stdout(args.flags.json ? `${JSON.stringify(tree, null, 2)}\n` : formatTree(tree, fmt));
        return EXIT.ok;
      }
      case "timeline": {
        expectArgs(rest, 2, "timeline <session> <turn>");
        const events: RuntimeEvent[] = [];
        for await (const e of client.readLog(rest[0]!)) if (e.turn_id === rest[1]) events.push(e);
        if (events.length === 0) throw new UsageError(`session ${rest[0]} has no turn ${rest[1]}`);
        io.stdout(formatWaterfall(events));
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
