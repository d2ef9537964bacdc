// Sub-agents (docs/guides/subagents-and-budgets.md): run_subtask and spawn_subagents start child loops inside the turn. A child has an
// isolated conversation (only its instructions), a subset of its parent's tools, the turn's shared budget,
// and its state inside its parent's tool call, so it is checkpointed and resumed with the turn.
import { errorMessage } from "../protocol/errors";
import { schemaPatternIssues } from "../protocol/safe-regex";
import type { TurnSetup } from "./ports";
import { FINISH_SUBTASK, finishSubtask, RUN_SUBTASK, SPAWN_SUBAGENTS } from "./tools/subagent-tools";
import type { ToolDefinition } from "./tools/types";
import { type Level, ModelCallError, type Turn, toModelTools } from "./turn-context";
import { type ChildRun, newTurnState, type ToolCallRecord } from "./turn-state";

const SUBAGENT_DIRECTIVE =
  "You are a sub-agent doing one task for a parent agent, which sees only your final result. Work with the tools you have and reply with the result.";
const FINISH_DIRECTIVE = `When you are done, call ${FINISH_SUBTASK} once with your result; it must match the required schema.`;

type SubagentResult = { output: unknown; is_error: boolean };

/** Runs (or, after a restart or an approval, resumes) the sub-agents of a run_subtask or spawn_subagents call. */
export async function runSubagents(call: ToolCallRecord, args: Record<string, unknown>, level: Level, turn: Turn): Promise<SubagentResult | "waiting"> {
  if (!call.children) {
    const spawned = spawn(call, args, level, turn);
    if ("error" in spawned) return { output: spawned.error, is_error: true };
    call.children = spawned.children;
    // One write for all of them: a checkpoint that holds the children also holds their spawned events.
    turn.emit(
      level,
      call.children.map((child) => ({
        type: "subagent.spawned" as const,
        turn_id: level.state.turn_id,
        parent_id: call.tool_call_id,
        depth: child.depth,
        subagent_id: child.subagent_id,
        payload: { title: child.title, depth: child.depth, index: child.index, tools: child.tools },
      })),
    );
  }
  const children = call.children;
  // Siblings run concurrently and never see each other's work.
  // All of them settle before anything is reported, so none is left writing after the turn has ended.
  const settled = await Promise.allSettled(children.map((child) => (child.result ? "done" : runChild(child, call, level, turn))));
  const failure = settled.find((r) => r.status === "rejected");
  if (failure) throw failure.reason;
  if (settled.some((r) => r.status === "fulfilled" && r.value === "waiting")) return "waiting";
  if (call.name === RUN_SUBTASK) {
    const result = children[0]!.result!;
    turn.ports.tool.memory.set(`task:${call.tool_call_id}`, JSON.stringify(result));
    return result.status === "success" ? { output: result.output, is_error: false } : { output: { error: result.error }, is_error: true };
  }
  const results = children.map((c) =>
    c.result!.status === "success"
      ? { index: c.index, status: "success", output: c.result!.output }
      : { index: c.index, status: "error", error: c.result!.error },
  );
  turn.ports.tool.memory.set(`task:${call.tool_call_id}`, JSON.stringify(results));
  return { output: results, is_error: false };
}

/** Validates the call and creates its children; an error message when it cannot. */
function spawn(call: ToolCallRecord, args: Record<string, unknown>, level: Level, turn: Turn): { children: ChildRun[] } | { error: string } {
  const depth = level.depth + 1;
  if (depth > turn.budget.max_depth) return { error: `depth limit: sub-agents may nest at most ${turn.budget.max_depth} levels` };
  const delegable = delegableTools(level.run.setup);
  const jobs =
    call.name === SPAWN_SUBAGENTS
      ? (args.jobs as Record<string, unknown>[]).map((j) => ({
          title: String(j.task).slice(0, 80),
          instructions: [String(j.task), typeof j.additional_context === "string" ? j.additional_context : ""].filter(Boolean).join("\n\n"),
          tools: j.tool_names as string[] | undefined,
          output_schema: (j.output_schema as Record<string, unknown> | undefined) ?? null,
          system: typeof j.system_prompt === "string" ? j.system_prompt : "",
        }))
      : [
          {
            title: String(args.title),
            instructions: String(args.instructions),
            tools: args.tools as string[] | undefined,
            output_schema: (args.output_schema as Record<string, unknown> | undefined) ?? null,
            system: "",
          },
        ];
  const max = level.run.setup.config.max_parallel_subagents;
  if (call.name === SPAWN_SUBAGENTS && jobs.length > max) return { error: `too many jobs: ${jobs.length} (at most ${max} per call)` };
  for (const [i, job] of jobs.entries()) {
    const unknown = (job.tools ?? []).filter((t) => !delegable.has(t));
    if (unknown.length > 0)
      return { error: `${call.name === SPAWN_SUBAGENTS ? `jobs[${i}].tool_names` : "tools"} must be a subset of your tools; not yours: ${unknown.join(", ")}` };
    if (job.output_schema && job.output_schema.type !== "object") return { error: 'output_schema must be a JSON Schema whose root has type "object"' };
    const unsafe = schemaPatternIssues(job.output_schema)[0];
    if (unsafe) return { error: `output_schema/${unsafe.path.join("/")} ${unsafe.reason}` };
  }
  turn.charge("subtasks", jobs.length);
  const now = turn.ports.now();
  return {
    children: jobs.map((job, index) => ({
      subagent_id: turn.ports.newId("sub"),
      index,
      title: job.title,
      depth,
      tools: job.tools ?? [...delegable.keys()],
      output_schema: job.output_schema,
      system: [SUBAGENT_DIRECTIVE, job.system, job.output_schema ? FINISH_DIRECTIVE : ""].filter(Boolean).join("\n\n"),
      state: newTurnState(level.state.turn_id, `Task: ${job.title}\n\n${job.instructions}`, now),
      finish_rejections: 0,
    })),
  };
}

/** The parent's tools a child may be given: not its handoffs (only the session's agent hands over), not finish_subtask. */
function delegableTools(setup: TurnSetup): Map<string, ToolDefinition> {
  return new Map([...setup.tools].filter(([name, t]) => !t.handoff_target && name !== FINISH_SUBTASK));
}

/** Runs one child to its end (or until it waits for a decision), recording subagent.completed / failed. */
async function runChild(child: ChildRun, call: ToolCallRecord, parent: Level, turn: Turn): Promise<"done" | "waiting"> {
  const parentSetup = parent.run.setup;
  const tools = new Map([...delegableTools(parentSetup)].filter(([name]) => child.tools.includes(name)));
  // At the deepest level the sub-agent tools are absent.
  if (child.depth >= turn.budget.max_depth) for (const name of [RUN_SUBTASK, SPAWN_SUBAGENTS]) tools.delete(name);
  if (child.output_schema) tools.set(FINISH_SUBTASK, finishSubtask(child.output_schema));
  const setup: TurnSetup = {
    ...parentSetup,
    config: { ...parentSetup.config, instructions: child.system, output_schema: null, planning_enabled: false, handoffs: [], budget_awareness: null },
    tools,
    history: [],
  };
  const level: Level = {
    state: child.state,
    run: { setup, modelTools: toModelTools(setup) },
    depth: child.depth,
    parent_id: call.tool_call_id,
    subagent_id: child.subagent_id,
    maxSteps: turn.budget.max_iterations_per_level,
    child,
  };
  let result: ChildRun["result"];
  try {
    const outcome = await turn.runLevel(level, turn);
    if (outcome.kind === "waiting") return "waiting";
    result =
      outcome.kind === "answer"
        ? { status: "success", output: outcome.output }
        : outcome.kind === "failed"
          ? { status: "error", error: outcome.code }
          : { status: "error", error: "iteration_limit" };
  } catch (err) {
    // A model failure ends this sub-agent only; an interrupt or an exhausted budget ends the turn.
    if (!(err instanceof ModelCallError) || turn.signal.aborted) throw err;
    result = { status: "error", error: `model_error: ${errorMessage(err)}` };
  }
  child.result = result;
  const envelope = { turn_id: child.state.turn_id, parent_id: call.tool_call_id, depth: child.depth, subagent_id: child.subagent_id };
  turn.emit(parent, [
    result.status === "success"
      ? { type: "subagent.completed", ...envelope, payload: { result: result.output } }
      : { type: "subagent.failed", ...envelope, payload: { error: result.error } },
  ]);
  return "done";
}
