// The tool phase of a step: the runtime dispatches the model's tool calls itself, with approvals, locks,
// the turn's budget, and spilling of large payloads; sub-agent tools start child loops.
import { errorMessage } from "../protocol/errors";
import type { EventDraft } from "../protocol/events";
import { argsOf, argumentErrors, requestApproval, startApproval } from "./approval-requests";
import { runCode } from "./code-mode-run";
import { guardEditedCalls, guardToolCalls, guardToolResult } from "./guardrails/stages";
import { runOrchestration } from "./orchestration/run";
import { executeTool, recorded } from "./outliving-calls";
import type { TurnSetup } from "./ports";
import { runSubagents } from "./subagents";
import { keepToolFiles } from "./tool-files";
import { forLog, refsOf } from "./tool-spill";
import { unansweredResult } from "./tools/ask-user";
import { splitInjectedArgs } from "./tools/injected-args";
import { RUN_SUBTASK, SPAWN_SUBAGENTS } from "./tools/subagent-tools";
import type { McpProgress, WebhookReceipt } from "./tools/types";
import { type Level, type Turn, toModelTools } from "./turn-context";
import { applyDecisions, isRefusal, resultMetadata, type ToolCallRecord, toolResultPart } from "./turn-state";

/** At most this many tool calls of one step run at once (less when the turn's budget says so). */
export const MAX_PARALLEL_TOOL_CALLS = 8;

/**
 * Runs the step's tool calls: parallel-safe ones concurrently (calls sharing a lock one at a time), then the
 * others in order. Calls to hitl_tools first get an approval request and run only once approved; a call
 * whose sub-agent waits for a decision waits too. "waiting" while any decision is outstanding.
 */
export async function runToolCalls(level: Level, turn: Turn): Promise<"done" | "waiting"> {
  const { state } = level;
  const calls = state.calls!;
  // The step's calls run with the agent that asked for them, even if one of them hands the turn over.
  const setup = level.run.setup;
  const tools = setup.tools;
  // A call already "started" here began before a restart and has no result: re-run only what is idempotent.
  const lost = new Set(calls.filter((c) => c.status === "started" && !tools.get(c.name)?.idempotent));
  const waiting = new Set<ToolCallRecord>();
  const locks = new Map<string, Promise<unknown>>();
  const dispatch = (c: ToolCallRecord) => {
    const go = async () => {
      if ((await runToolCall(c, level, setup, turn, lost.has(c))) === "waiting") waiting.add(c);
    };
    const lock = tools.get(c.name)?.lock;
    if (!lock) return go();
    const next = (locks.get(lock) ?? Promise.resolve()).catch(() => {}).then(go);
    locks.set(lock, next);
    return next;
  };
  const parallelism = Math.min(MAX_PARALLEL_TOOL_CALLS, turn.budget.max_parallel_per_turn);
  await guardToolCalls(level, turn);
  for (;;) {
    for (const c of calls) await startApproval(c, level, turn);
    // Decisions can arrive while tools run: each round applies the ones recorded so far (at every level, since
    // a sub-agent's call may wait too) and picks up the calls that became runnable.
    applyDecisions(turn.root, turn.ports.decisions());
    await guardEditedCalls(level, turn);
    const runnable = calls.filter((c) => c.status !== "done" && c.approval?.status !== "pending" && !waiting.has(c));
    if (runnable.length === 0) break;
    const parallel = runnable.filter((c) => !lost.has(c) && (tools.get(c.name)?.parallel_safe ?? true));
    const serial = runnable.filter((c) => !parallel.includes(c));
    // The calls the pool starts at once (no lock to wait for) become started together: one commit.
    await startTogether(
      parallel.slice(0, parallelism).filter((c) => !tools.get(c.name)?.lock && startsNow(c)),
      level,
      setup,
      turn,
    );
    await runPool(parallel, parallelism, dispatch);
    for (const c of serial) await dispatch(c);
  }
  if (calls.some((c) => c.status !== "done")) return "waiting";
  // No checkpoint of its own: this follows from the results already checkpointed, and the next transition's
  // checkpoint records it (a restart here folds the results again).
  state.messages.push({ role: "tool", content: calls.map(toolResultPart) });
  state.calls = null;
  return "done";
}

/** Whether the call still has to start: not started before a restart, and not refused by a human. */
function startsNow(call: ToolCallRecord): boolean {
  return call.status !== "started" && refusal(call) === null;
}

function refusal(call: ToolCallRecord): ToolCallRecord["approval"] | null {
  return call.approval && isRefusal(call.approval.status) ? call.approval : null;
}

/** A call's arguments as its tool.started records them: large ones spilled to an artifact (I/O). */
type LoggedArgs = Awaited<ReturnType<typeof forLog>> & { injected: Record<string, unknown> };

async function loggedArgs(call: ToolCallRecord, level: Level, setup: TurnSetup, turn: Turn): Promise<LoggedArgs> {
  const { executable, injected } = callArgs(call, setup);
  return { ...(await forLog(executable, call, level.state, setup, turn)), injected };
}

/**
 * Charges a call to the budget, marks it started and returns its tool.started event, with no I/O between: the
 * arguments were spilled before, so a checkpoint written meanwhile (another call's result, or the step's answer
 * held to go with these starts) holds no started call whose tool.started is not in the log yet.
 */
function markStarted(call: ToolCallRecord, args: LoggedArgs, level: Level, turn: Turn): EventDraft {
  const { state } = level;
  turn.signal.throwIfAborted(); // a stopped turn starts nothing new, at any level
  turn.checkWallClock();
  turn.charge("tool_calls");
  call.status = "started";
  call.started_at = turn.ports.now();
  return {
    type: "tool.started",
    turn_id: state.turn_id,
    step_id: state.step_id ?? undefined,
    tool_call_id: call.tool_call_id,
    payload: { name: call.name, args: args.value, injected_args: args.injected },
    ...refsOf(args.artifact),
  };
}

/** Starts calls that begin at the same moment with one commit and one checkpoint for all their tool.started events. */
async function startTogether(calls: ToolCallRecord[], level: Level, setup: TurnSetup, turn: Turn): Promise<void> {
  turn.signal.throwIfAborted(); // a stopped turn spills nothing for calls it will not start
  const logged: LoggedArgs[] = [];
  for (const c of calls) logged.push(await loggedArgs(c, level, setup, turn));
  const started: EventDraft[] = [];
  try {
    for (const [i, c] of calls.entries()) started.push(markStarted(c, logged[i]!, level, turn));
  } finally {
    // Those started before a failure (the budget ran out) are in the state, so their events go in the log too.
    if (started.length > 0) turn.emit(level, started);
  }
}

/** The arguments a call runs with: the model's, or an approver's edit of them (the injected ones stay the model's). */
function callArgs(call: ToolCallRecord, setup: TurnSetup): { executable: Record<string, unknown>; injected: Record<string, unknown> } {
  const own = splitInjectedArgs(argsOf(call), setup.config.injected_tool_args);
  return call.approval?.edited ? { executable: call.approval.edited.args, injected: own.injected } : own;
}

export async function runToolCall(call: ToolCallRecord, level: Level, setup: TurnSetup, turn: Turn, lost: boolean): Promise<"done" | "waiting"> {
  const { state } = level;
  const { turn_id } = state;
  const ids = { turn_id, step_id: state.step_id ?? undefined, tool_call_id: call.tool_call_id };
  const tool = setup.tools.get(call.name);
  const { executable, injected } = callArgs(call, setup);
  const refused = refusal(call);
  let output: unknown;
  let is_error = true;
  let checked: EventDraft[] = [];
  turn.signal.throwIfAborted(); // a stopped turn starts nothing new, at any level
  if (lost) {
    output = { error: "The runtime restarted while this tool was running; its outcome is unknown.", category: "lost" };
  } else {
    // A call started with its step's others, or resumed after a restart (an idempotent tool, or sub-agents
    // picking up), has started already; a call a human refused never starts (action.resolved and tool.result say so).
    if (startsNow(call)) turn.emit(level, [markStarted(call, await loggedArgs(call, level, setup, turn), level, turn)]);
    const argErrors = tool ? argumentErrors(tool, executable) : [];
    if (refused && call.follow_up && tool?.unanswered) {
      // The remote side still waits for the answer nobody gave: the tool ends that (cancels its task).
      const ctx = { ...turn.ports.tool, tool_call_id: call.tool_call_id, signal: turn.signal };
      output = await tool.unanswered(call.follow_up, refused.status as "timed_out" | "rejected", ctx).catch(errorMessage);
    } else if (refused && (tool?.loop_handled === "ask_user" || call.follow_up)) {
      output = unansweredResult(refused.status as "timed_out" | "rejected", refused.reason);
      is_error = false;
    } else if (refused) {
      const why = refused.status === "rejected" ? "The user rejected this tool call" : "Nobody approved this tool call in time";
      output = refused.reason ? `${why}: ${refused.reason}` : why;
    } else if (call.blocked) {
      output = call.blocked;
    } else if (!tool) {
      // The sub-agent tools are withheld at the deepest level: say why.
      output =
        (call.name === RUN_SUBTASK || call.name === SPAWN_SUBAGENTS) && level.depth >= turn.budget.max_depth
          ? `depth limit: sub-agents may nest at most ${turn.budget.max_depth} levels`
          : `Tool "${call.name}" is not available in this session`;
    } else if (call.invalid || argErrors.length > 0) {
      output = call.invalid ? `Invalid tool call: ${call.invalid}` : `Invalid arguments for "${call.name}": ${argErrors.join("; ")}`;
      if (tool.loop_handled === "finish_subtask" && level.child) level.child.finish_rejections += 1;
    } else {
      try {
        if (tool.loop_handled === "ask_user") {
          output = call.approval?.response ?? null;
        } else if (tool.loop_handled === "finish_subtask" && level.child) {
          level.child.finished = { value: executable };
          output = "Result accepted.";
        } else if (tool.loop_handled === "agent_orchestrate") {
          ({ output, is_error } = await runOrchestration(call, executable, level, turn));
        } else if (tool.loop_handled === "run_code") {
          const result = await runCode(call, executable, level, turn);
          if (result === "waiting") return "waiting";
          ({ output, is_error } = result);
        } else if (tool.loop_handled === "run_subtask" || tool.loop_handled === "spawn_subagents") {
          const result = await runSubagents(call, executable, level, turn);
          if (result === "waiting") return "waiting";
          output = result.output;
          is_error = result.is_error;
        } else if (tool.handoff_target) {
          const reason = typeof executable.reason === "string" ? executable.reason : undefined;
          level.run.setup = await turn.ports.handoff(tool.handoff_target, reason);
          level.run.modelTools = toModelTools(level.run.setup);
          output = `The conversation now continues with agent "${tool.handoff_target}".`;
        } else {
          const p = turn.ports;
          // Progress reported while the call runs becomes mcp.progress, live; emit_mcp_progress: false only
          // silences the events. Nothing is emitted once the call has settled.
          let settled = false;
          const progress = (update: McpProgress) => {
            if (settled || !setup.config.emit_mcp_progress) return;
            try {
              turn.emit(level, [{ type: "mcp.progress", ...ids, payload: { ...update } }], false);
            } catch {
              // the turn was taken away meanwhile; its outcome is recorded elsewhere
            }
          };
          try {
            const receipt = (r: WebhookReceipt) => {
              call.receipt = r;
            };
            const scope = level.subagent_id ? { subagent_id: level.subagent_id } : {};
            const ctx = { ...p.tool, turn_id, tool_call_id: call.tool_call_id, ...scope, signal: turn.signal, now: p.now, progress, receipt };
            output = await executeTool(tool, answerArgs(call) ?? executable, ctx, call, level, turn, injected);
          } finally {
            settled = true;
          }
          // The result is a question for the user: the call waits for the answer, then sends it (and may ask again).
          const asked = tool.asks_user?.(output);
          if (asked) {
            call.follow_up = asked.answer_args;
            call.asked_by = { agent: setup.config.name, version: setup.agent_version ?? null };
            await requestApproval(call, level, setup, turn, asked.question);
            return "waiting";
          }
          turn.signal.throwIfAborted(); // a tool that ignored the abort: its result is not recorded
        }
        if (!tool.loop_handled || tool.loop_handled === "finish_subtask" || tool.loop_handled === "ask_user") is_error = false;
      } catch (err) {
        if (turn.signal.aborted) throw err;
        output = errorMessage(err);
      }
      ({ output, is_error, events: checked } = await guardToolResult(level, turn, call, output, is_error));
    }
  }
  // Files the tool returned become session files; the log and the model get their references.
  const files = await keepToolFiles(output, ids, turn.ports.saveFile);
  output = files.output;
  const started_at = call.started_at ?? turn.ports.now();
  const completed_at = turn.ports.now();
  // A result over max_tool_result_bytes goes to R2 whole; the log and the model get a preview and its id.
  const spilled = await forLog(output ?? null, call, state, setup, turn);
  output = spilled.value;
  call.status = "done";
  call.result = { output, is_error };
  const metadata = resultMetadata(call, is_error, started_at, completed_at, injected, spilled.artifact?.id ?? null);
  recorded(call);
  turn.emit(
    level,
    [
      ...checked,
      ...files.events,
      ...(spilled.artifact
        ? [{ type: "output.spilled" as const, ...ids, payload: { artifact_id: spilled.artifact.id, bytes: spilled.artifact.bytes, name: call.name } }]
        : []),
      { type: "tool.result", ...ids, payload: { name: call.name, output, is_error, metadata }, ...refsOf(spilled.artifact) },
    ],
    true,
    // A result may wait a moment to be written with what follows: the results of the step's other calls, or the
    // next model call's start, which the loop records in the same task once the step's last result is in.
    "step",
  );
  return "done";
}

/** The arguments of the call that sends the user's answer to what the call's result asked; null otherwise. */
function answerArgs(call: ToolCallRecord): Record<string, unknown> | null {
  if (!call.follow_up || !call.approval || call.approval.status === "pending" || isRefusal(call.approval.status)) return null;
  const answer = call.approval.response;
  return { ...call.follow_up, message: typeof answer === "string" ? answer : JSON.stringify(answer ?? ""), answer_id: call.approval.action_id };
}

async function runPool<T>(items: T[], limit: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await fn(items[next++]!);
  };
  // Every worker settles before a failure is reported, so no call is left running behind the loop's back.
  const settled = await Promise.allSettled(Array.from({ length: Math.min(limit, items.length) }, worker));
  const failure = settled.find((r) => r.status === "rejected");
  if (failure) throw failure.reason;
}
