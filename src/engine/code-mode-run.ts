// A run_code call (docs/guides/code-mode.md): the script runs in the host's sandbox and each of its inner tool
// calls comes back here to be a real tool call of the turn, parented to the run_code call (approvals, budget,
// events, spilling). An inner call that waits for a decision suspends the script: the run_code call waits like
// any other, and once it may go on the script runs again from its start, each inner call it made before
// answered from the call's recorded state (matched by position, name and arguments), so nothing runs twice.
// The clock, Math.random() and crypto's random sources give a rerun what they gave before.
import { errorMessage } from "../protocol/errors";
import { startApproval } from "./approval-requests";
import { guardEditedCalls, guardToolCalls } from "./guardrails/stages";
import { canonicalJson } from "./request-fingerprint";
import { runToolCall } from "./tool-calls";
import {
  type CodeRun,
  codeSeen,
  MAX_RECORDED_VALUES,
  type ScriptAnswer,
  type ScriptCallAnswer,
  type ScriptSeen,
  SEEN_SOURCES,
  scriptableTools,
  scriptLimits,
  seenOf,
} from "./tools/code-mode";
import { ToolError } from "./tools/types";
import type { Level, Turn } from "./turn-context";
import { applyDecisions, newTurnState, type ToolCallRecord } from "./turn-state";

const SUSPENDED = "the script is suspended: a call waits for a decision, and the script will run again from its start";

type Halt = { kind: "waiting" } | { kind: "diverged"; message: string } | { kind: "failed"; error: unknown };

/** Runs (or reruns) the script of a run_code call: its {result, logs}, an error, or "waiting" for a decision. */
export async function runCode(
  call: ToolCallRecord,
  args: Record<string, unknown>,
  level: Level,
  turn: Turn,
): Promise<{ output: unknown; is_error: boolean } | "waiting"> {
  const setup = level.run.setup;
  if (!setup.runScript) throw new ToolError("This deployment has no sandbox for scripts (a LOADER binding): run_code cannot run");
  // A replay's first run sees what the recorded script saw.
  const replayed = call.code ? null : setup.recordedScript?.(args);
  const code = (call.code ??= {
    state: { ...newTurnState(level.state.turn_id, "", turn.ports.now()), messages: [], calls: [], step_id: level.state.step_id },
    keys: [],
    seen: seenOf(replayed),
  });
  const inner: Level = { ...level, state: code.state, depth: level.depth + 1, parent_id: call.tool_call_id, child: undefined };
  const names = new Set(scriptableTools(setup.tools).map((t) => t.name));
  const stop = new AbortController();
  let halt!: (h: Halt) => void;
  const halted = new Promise<Halt>((resolve) => {
    // Settled before the abort, which also rejects the run: the race sees why it stopped.
    halt = (h) => {
      resolve(h);
      stop.abort();
    };
  });
  let cursor = 0;
  let queue: Promise<unknown> = Promise.resolve();
  const answer = async (name: string, argsJson: string, seen: ScriptSeen): Promise<ScriptCallAnswer> => {
    if (stop.signal.aborted) return { ok: false, error: SUSPENDED };
    remember(code, seen);
    if (!names.has(name)) return { ok: false, error: `tools.${name} is not a tool of this script` };
    let innerArgs: unknown;
    try {
      innerArgs = JSON.parse(argsJson);
    } catch {
      return { ok: false, error: `tools.${name} was called with arguments that are not JSON` };
    }
    const index = cursor++;
    // Matched on the arguments as the script made them (a tool_input guardrail may have redacted the call's since).
    const key = `${name}\u0000${canonicalJson(innerArgs)}`;
    const earlier = code.state.calls![index];
    if (earlier && code.keys[index] !== key) {
      const message = `The script made call ${index + 1} as ${name}(${argsJson.slice(0, 200)}) on its rerun, but ${earlier.name}(${JSON.stringify(earlier.args).slice(0, 200)}) before: a script must make the same calls each time it runs`;
      halt({ kind: "diverged", message });
      return { ok: false, error: message };
    }
    const c: ToolCallRecord = earlier ?? { tool_call_id: turn.ports.newId("call"), name, args: innerArgs, status: "pending" };
    if (!earlier) {
      code.state.calls!.push(c);
      code.keys.push(key);
    }
    try {
      if (c.status !== "done") {
        await guardToolCalls(inner, turn);
        await startApproval(c, inner, turn);
        applyDecisions(turn.root, turn.ports.decisions());
        await guardEditedCalls(inner, turn);
        if (c.approval?.status === "pending") {
          halt({ kind: "waiting" });
          return { ok: false, error: SUSPENDED };
        }
        const lost = c.status === "started" && !setup.tools.get(name)?.idempotent;
        await runToolCall(c, inner, setup, turn, lost);
      }
    } catch (err) {
      halt({ kind: "failed", error: err });
      return { ok: false, error: errorMessage(err) };
    }
    const { output, is_error } = c.result!;
    if (is_error) return { ok: false, error: typeof output === "string" ? output : JSON.stringify(output) };
    return { ok: true, json: JSON.stringify(output ?? null) };
  };
  // One inner call at a time, in the order the script made them: the order a rerun is matched by.
  const bridge = {
    call: (name: string, argsJson: string, seen: ScriptSeen) => {
      const next = queue.then(() => answer(name, argsJson, seen));
      queue = next.catch(() => {});
      return next;
    },
  };
  const run = setup.runScript(
    {
      id: `script:${call.tool_call_id}:${turn.ports.newId("run")}`,
      code: String(args.code),
      tools: [...names],
      recorded: codeSeen(code),
      limits: scriptLimits(setup.config.code_mode),
    },
    bridge,
    AbortSignal.any([turn.signal, stop.signal]),
  );
  run.catch(() => {}); // a suspended script is left to end on its own
  // Once the script is over (returned, failed or past its limits), no call starts, and the call it left under
  // way ends before run_code does: its result belongs inside the script's call.
  const over = async () => {
    stop.abort();
    await queue;
  };
  const ended = await Promise.race([run.then((a): { answer: ScriptAnswer } => ({ answer: a })), halted]).catch(async (err: unknown) => {
    await over();
    throw err;
  });
  if ("kind" in ended && ended.kind === "waiting") return "waiting";
  await over();
  if ("kind" in ended) {
    if (ended.kind === "failed") throw ended.error;
    return { output: { error: ended.message, logs: [] }, is_error: true };
  }
  const { answer: done } = ended;
  remember(code, done.seen);
  if (!done.ok) return { output: { error: `The script failed: ${done.error}`, logs: done.logs }, is_error: true };
  return { output: { result: JSON.parse(done.json) as unknown, logs: done.logs }, is_error: false };
}

/** Keeps what a run saw beyond the recorded values, for the next rerun. */
function remember(code: CodeRun, seen: ScriptSeen): void {
  const kept = (code.seen = codeSeen(code)) as Record<(typeof SEEN_SOURCES)[number], unknown[]>;
  for (const source of SEEN_SOURCES) kept[source].push(...seen[source].slice(0, Math.max(0, MAX_RECORDED_VALUES - kept[source].length)));
}
