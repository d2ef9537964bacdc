// `agent-runtime eval run <agent>`: an eval run of a dataset (docs/guides/evals.md), followed to its end; a
// line per scorer (mean, pass rate). Exit 1 when a scorer's mean is under --fail-under, for CI.
import { type ScorerConfig, Scorers } from "../protocol/evals";
import { type CliIO, EXIT, intFlag, type ParsedArgs, str, UsageError } from "./cli-args";
import type { RuntimeClient } from "./client";

const POLL_MS = 250;
const SHORTHAND_VALUE: Record<string, string> = {
  contains: "value",
  regex: "pattern",
  tool_called: "name",
  no_tool_called: "name",
  max_steps: "max",
  max_cost_usd: "max",
  max_latency_ms: "max",
};

/** `--scorer`: a JSON array, or `type[:value]` items separated by commas (`contains:answer,exact,max_steps:3`), checked as the API checks scorers. */
export function parseScorers(raw: string): ScorerConfig[] {
  const parsed = Scorers.safeParse(raw.trim().startsWith("[") ? jsonArray(raw) : shorthand(raw));
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0]!;
  throw new UsageError(`--scorer: ${issue.path.length ? `${issue.path.join(".")}: ` : ""}${issue.message}`);
}

function jsonArray(raw: string): unknown {
  try {
    return JSON.parse(raw);
  } catch {
    throw new UsageError("--scorer: not a JSON array");
  }
}

function shorthand(raw: string): Record<string, unknown>[] {
  return raw.split(",").map((item) => {
    const [type, ...rest] = item.trim().split(":");
    const value = rest.join(":");
    if (!type) throw new UsageError(`--scorer: empty item in "${raw}"`);
    const field = SHORTHAND_VALUE[type];
    if (!value) return { type };
    if (!field) throw new UsageError(`--scorer: ${type} takes no value in the short form (give a JSON array)`);
    return { type, [field]: field === "max" ? Number(value) : value };
  });
}

export async function evalRunCommand(client: RuntimeClient, io: CliIO, agent: string, flags: ParsedArgs["flags"]): Promise<number> {
  const [name, version] = (str(flags.dataset) ?? "").split("@");
  if (!name) throw new UsageError("missing --dataset <name[@version]>");
  const scorers = str(flags.scorer);
  if (!scorers) throw new UsageError("missing --scorer <list>");
  const failUnder = flags["fail-under"] === undefined ? null : Number(flags["fail-under"]);
  if (failUnder !== null && !(failUnder >= 0 && failUnder <= 1)) throw new UsageError("--fail-under must be a number from 0 to 1");
  const v = intFlag(flags, "version", 0);
  const c = intFlag(flags, "concurrency", 0);
  const dataset = { name, ...(version ? { version: Number(version) } : {}) };
  const body = { agent, dataset, scorers: parseScorers(scorers), ...(v ? { version: v } : {}), ...(c ? { concurrency: c } : {}) };
  let run = await client.createEvalRun(body);
  io.stdout(
    `eval run ${run.id}: ${run.agent}@${run.version} on ${run.dataset ? `${run.dataset.name}@${run.dataset.version}` : "recorded turns"}, ${run.progress.total} cases\n`,
  );
  const stop = new AbortController();
  const off = io.onInterrupt(() => stop.abort());
  try {
    while (run.status === "running") {
      if (stop.signal.aborted) return EXIT.interrupted;
      await new Promise((r) => setTimeout(r, POLL_MS));
      run = await client.getEvalRun(run.id);
    }
  } finally {
    off();
  }
  if (run.status === "cancelled") {
    io.stderr(`eval run ${run.id} was cancelled (${run.progress.done} of ${run.progress.total} cases done)\n`);
    return EXIT.error;
  }
  const failing: string[] = [];
  for (const [scorer, a] of Object.entries(run.aggregates)) {
    const below = failUnder !== null && a.mean < failUnder;
    if (below) failing.push(scorer);
    io.stdout(`${scorer}  mean ${a.mean}  pass rate ${a.pass_rate}  (${a.count} cases)${below ? `  under ${failUnder}` : ""}\n`);
  }
  io.stdout(
    `cost ${run.cost_usd ?? "unknown"} USD, mean latency ${run.mean_latency_ms ?? "-"} ms${failing.length ? `; failing: ${failing.join(", ")}` : ""}\n`,
  );
  return failing.length > 0 ? EXIT.error : EXIT.ok;
}
