// `agent-runtime memory get|set|search`: a resource's memory from the command line (docs/guides/memory.md).
import { type CliIO, EXIT, intFlag, type ParsedArgs, str, UsageError } from "./cli-args";
import type { RuntimeClient } from "./client";

const SUBCOMMANDS = "memory get <resource> | memory set <resource> <file.json> | memory search <resource> <words...>";

export async function memoryCommand(client: RuntimeClient, io: CliIO, rest: string[], flags: ParsedArgs["flags"]): Promise<number> {
  const [sub, resource, ...more] = rest;
  const print = (v: unknown) => io.stdout(`${JSON.stringify(v, null, 2)}\n`);
  const agent = str(flags.agent);
  if (sub !== undefined && resource === undefined) throw new UsageError(`missing arguments: ${SUBCOMMANDS}`);
  switch (sub) {
    case "get":
      if (more.length > 0) throw new UsageError(`unexpected argument "${more[0]}": memory get <resource>`);
      print(await client.getMemory(resource!, agent));
      return EXIT.ok;
    case "set": {
      if (more.length !== 1) throw new UsageError("memory set <resource> <file.json>: one file holding the whole document");
      const document = JSON.parse(await io.readFile(more[0]!)) as unknown;
      if (!document || typeof document !== "object" || Array.isArray(document)) throw new UsageError(`${more[0]} must hold a JSON object (the document)`);
      print(await client.putMemory(resource!, document as Record<string, unknown>, agent));
      return EXIT.ok;
    }
    case "search": {
      if (more.length === 0) throw new UsageError("missing arguments: memory search <resource> <words...>");
      const { hits } = await client.searchMemory(resource!, more.join(" "), intFlag(flags, "limit", 10));
      for (const h of hits) io.stdout(`${new Date(h.at).toISOString()}  ${h.session_id} ${h.turn_id} ${h.role}: ${h.snippet}\n`);
      return EXIT.ok;
    }
    default:
      throw new UsageError(sub === undefined ? `missing subcommand: ${SUBCOMMANDS}` : `unknown subcommand "memory ${sub}"`);
  }
}
