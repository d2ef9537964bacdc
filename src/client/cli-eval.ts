// `agent-runtime eval`: a session's recorded turns replayed with a changed agent config (docs/guides/fork-and-replay.md), one row each:
// where the replay left the recording, whether the output changed, the tokens and cost it made. Exit 1 when a
// turn that completed before does not complete now, so a prompt or model change can be gated on real traffic.
import { type CliIO, EXIT, type ParsedArgs, str, UsageError } from "./cli-args";
import type { RuntimeClient } from "./client";
import type { Replay, ReplayComparison } from "./types";

/** How often a running replay is asked for its result. */
const POLL_MS = 100;

export async function evalCommand(client: RuntimeClient, io: CliIO, flags: ParsedArgs["flags"]): Promise<number> {
  const session = str(flags.session);
  if (!session) throw new UsageError("missing --session <id>");
  const file = str(flags.agent);
  if (!file) throw new UsageError("missing --agent <config.json> (the AgentConfig fields to change)");
  const overrides = JSON.parse(await io.readFile(file)) as unknown;
  if (!overrides || typeof overrides !== "object" || Array.isArray(overrides)) throw new UsageError(`${file} must hold a JSON object (AgentConfig fields)`);
  const tools = str(flags.tools) ?? "recorded";
  if (tools !== "recorded" && tools !== "live") throw new UsageError("--tools must be recorded or live");
  const turns =
    str(flags.turns)
      ?.split(",")
      .map((t) => t.trim())
      .filter(Boolean) ?? (await endedTurns(client, session));
  if (turns.length === 0) throw new UsageError(`session ${session} has no ended turn to replay`);

  const stop = new AbortController();
  const off = io.onInterrupt(() => stop.abort());
  const rows: ReplayComparison[] = [];
  try {
    for (const turn of turns) {
      const started = await client.replayTurn(session, turn, { agent: overrides, tools });
      const done = await settled(client, started.exec_id, stop.signal);
      if (!done) return EXIT.interrupted;
      rows.push(done.comparison!);
      io.stdout(`${row(done.comparison!, started.exec_id)}\n`);
    }
  } finally {
    off();
  }
  const regressions = rows.filter((r) => r.original.status === "completed" && r.replay.status !== "completed");
  io.stdout(
    `${rows.length} turns replayed: ${rows.filter((r) => r.diverged).length} left the recording, ${rows.filter((r) => r.output_changed).length} changed their output, ${regressions.length} completed before and do not now\n`,
  );
  return regressions.length > 0 ? EXIT.error : EXIT.ok;
}

/** The session's ended turns, oldest first (the last 100 its snapshot holds). */
async function endedTurns(client: RuntimeClient, session: string): Promise<string[]> {
  const { turns } = await client.getSession(session);
  return turns.filter((t) => t.status === "completed" || t.status === "failed").map((t) => t.turn_id);
}

async function settled(client: RuntimeClient, execId: string, signal: AbortSignal): Promise<Replay | null> {
  for (;;) {
    if (signal.aborted) return null;
    const replay = await client.getReplay(execId);
    if (replay.status === "completed") return replay;
    await new Promise((r) => setTimeout(r, POLL_MS));
  }
}

/** `<turn>  <status before> -> <now>  diverged at ...  output ...  tokens ...  cost ...  <replay session>` */
export function row(c: ReplayComparison, execId: string): string {
  const signed = (n: number, digits = 0) => `${n >= 0 ? "+" : ""}${n.toFixed(digits)}`;
  const diverged = c.diverged ? `diverged at call ${c.diverged.step}` : "no divergence";
  const status = c.original.status === c.replay.status ? c.replay.status : `${c.original.status} -> ${c.replay.status}`;
  const cost = c.cost_delta_usd === null ? "cost unknown" : `cost ${signed(c.cost_delta_usd, 6)} USD`;
  const output = c.output_changed ? "output changed" : "output same";
  return [c.source_turn_id, status, diverged, output, `tokens ${signed(c.tokens_delta)}`, cost, execId].join("  ");
}
