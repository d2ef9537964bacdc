// Runs an agent_orchestrate call: compile (a given plan, or one a planner model call writes from a prompt),
// validate, then dispatch each agent step as its own child session (through the ports) — sequential steps
// in order, parallel groups concurrently — binding outputs for later steps. Its progress lives in the tool
// call's record, so a restart resumes it without running a finished step again.
import { errorMessage } from "../../protocol/errors";
import { plannerCall } from "../model-calls";
import type { Level, Turn } from "../turn-context";
import type { ToolCallRecord } from "../turn-state";
import { type AgentStep, type ParallelStep, render, renderDeep, TemplateError, validatePlan } from "./plan";
import { DEFAULT_ORCHESTRATION_LIMITS, type OrchestrationPhase, type StepResult } from "./types";

const DEFAULT_STEP_TIMEOUT_MS = 120_000;

const PLANNER_SYSTEM = `You turn a request into a multi-agent plan. Reply with only a JSON object, no prose, of this form:
{"steps": [ {"id": "s1", "type": "agent", "agent": "<agent name>", "prompt": "<what to ask it>", "result_key": "<name>"},
            {"id": "g1", "type": "parallel", "merge": "collect", "steps": [ <agent steps> ]} ]}
A later prompt may use an earlier output as {{ bindings.<result_key> }}. Use only these agents:`;

export async function runOrchestration(
  call: ToolCallRecord,
  args: Record<string, unknown>,
  level: Level,
  turn: Turn,
): Promise<{ output: unknown; is_error: boolean }> {
  const limits = level.run.setup.orchestration ?? DEFAULT_ORCHESTRATION_LIMITS;
  const record = (call.orchestration ??= { bindings: { ...((args.bindings as Record<string, unknown> | undefined) ?? {}) }, exec_ids: {}, results: {} });
  const status = (phase: OrchestrationPhase, extra: Record<string, unknown> = {}, subagent_id?: string) =>
    turn.emit(level, [
      {
        type: "run.status",
        turn_id: level.state.turn_id,
        tool_call_id: call.tool_call_id,
        parent_id: call.tool_call_id,
        depth: level.depth + 1,
        ...(subagent_id ? { subagent_id } : {}),
        payload: { phase, scope: "agent_orchestrate", ...extra },
      },
    ]);
  const fail = (errors: string[]) => {
    status("failed", { errors });
    return { output: { success: false, steps: [], bindings: record.bindings, errors }, is_error: true };
  };
  if (limits.depth >= limits.max_depth) return fail([`orchestration depth limit reached (${limits.max_depth})`]);

  if (!record.plan) {
    status("plan_init");
    let candidate: unknown = args.plan;
    const agents = await turn.ports.listAgents();
    if (candidate === undefined) {
      if (typeof args.prompt !== "string" || !args.prompt.trim()) return fail(["give either a plan or a prompt"]);
      status("planner_active");
      let text: string;
      try {
        text = await plannerCall(level, turn, `${PLANNER_SYSTEM}\n${agents.map((a) => `- ${a.name}: ${a.description}`).join("\n")}`, args.prompt);
      } catch (err) {
        if (turn.signal.aborted) throw err; // interrupted, or the turn's budget ran out
        return fail([`the planner failed: ${errorMessage(err)}`]);
      }
      try {
        candidate = JSON.parse(text.trim().replace(/^```(?:json)?\s*([\s\S]*?)\s*```$/i, "$1"));
      } catch {
        return fail(["the planner did not return a JSON plan"]);
      }
    }
    // The call's max_parallel limits how many steps run at once, not how many a group may hold.
    const checked = validatePlan(candidate, new Set(agents.map((a) => a.name)), { max_steps: limits.max_steps, max_parallel: limits.max_parallel });
    if ("errors" in checked) return fail(checked.errors);
    record.plan = checked.plan;
    status("plan_validated", { steps: checked.plan.steps.length });
  }

  const concurrencyCap = Math.min(limits.max_parallel, typeof args.max_parallel === "number" ? args.max_parallel : limits.max_parallel);
  const stepTimeout = (step: AgentStep) => {
    const wanted = step.timeout_ms ?? (typeof args.timeout_ms === "number" ? args.timeout_ms : DEFAULT_STEP_TIMEOUT_MS);
    return Math.max(1, Math.min(wanted, turn.budget.max_wall_clock_ms - turn.elapsed()));
  };

  const runAgentStep = async (step: AgentStep, signal: AbortSignal): Promise<StepResult> => {
    const done = record.results[step.id];
    if (done) return done;
    const started = turn.ports.now();
    let input: string;
    try {
      const prompt = step.prompt ? render(step.prompt, record.bindings) : "";
      const inputs = step.with ? `\n\nInputs:\n${JSON.stringify(renderDeep(step.with, record.bindings), null, 2)}` : "";
      input = `${prompt}${inputs}`.trim() || "Go ahead.";
    } catch (err) {
      if (!(err instanceof TemplateError)) throw err;
      return { id: step.id, type: "agent", status: "failed", exec_id: null, output: null, error: err.message, elapsed_ms: 0 };
    }
    if (!record.exec_ids[step.id]) {
      record.exec_ids[step.id] = turn.ports.newId("ses");
      turn.emit(level, []); // the child session's id is durable before it exists
    }
    const exec_id = record.exec_ids[step.id]!;
    status("dispatching_step", { step_id: step.id, agent: step.agent, exec_id }, exec_id);
    const outcome = await turn.ports.runAgent({ exec_id, agent: step.agent, input, timeout_ms: stepTimeout(step), signal, depth: limits.depth + 1 });
    return {
      id: step.id,
      type: "agent",
      status: outcome.status,
      exec_id,
      output: outcome.output ?? null,
      error: outcome.error ?? null,
      elapsed_ms: turn.ports.now() - started,
    };
  };

  const runGroup = async (group: ParallelStep): Promise<StepResult> => {
    const started = turn.ports.now();
    status("awaiting_results", { step_id: group.id, steps: group.steps.map((s) => s.id) });
    const stop = new AbortController(); // first_success cancels the rest
    const signal = AbortSignal.any([turn.signal, stop.signal]);
    const results: StepResult[] = new Array(group.steps.length);
    let next = 0;
    const worker = async () => {
      while (next < group.steps.length) {
        const i = next++;
        const step = group.steps[i]!;
        if (stop.signal.aborted) {
          results[i] = { id: step.id, type: "agent", status: "skipped", exec_id: record.exec_ids[step.id] ?? null, output: null, error: null, elapsed_ms: 0 };
          continue;
        }
        try {
          results[i] = await runAgentStep(step, signal);
        } catch (err) {
          // A step cut short because another one already won is skipped, not a failure.
          if (!stop.signal.aborted || turn.signal.aborted) throw err;
          results[i] = { id: step.id, type: "agent", status: "skipped", exec_id: record.exec_ids[step.id] ?? null, output: null, error: null, elapsed_ms: 0 };
        }
        if (group.merge === "first_success" && results[i]!.status === "success") stop.abort(new Error("another step of the group already succeeded"));
      }
    };
    const width = Math.min(group.max_concurrency ?? concurrencyCap, concurrencyCap, group.steps.length);
    const settled = await Promise.allSettled(Array.from({ length: width }, worker));
    const failure = settled.find((r) => r.status === "rejected");
    if (failure) throw failure.reason;
    status("merging_results", { step_id: group.id });
    const ok = results.filter((r) => r.status === "success");
    const output =
      group.merge === "first_success" ? (ok[0]?.output ?? null) : Object.fromEntries(results.map((r, i) => [group.steps[i]!.result_key ?? r.id, r.output]));
    const statusOf =
      group.merge === "first_success"
        ? ok.length > 0
          ? "success"
          : "failed"
        : ok.length === results.length
          ? "success"
          : ok.length > 0
            ? "partial"
            : "failed";
    return {
      id: group.id,
      type: "parallel",
      status: statusOf,
      exec_id: null,
      output,
      error:
        statusOf === "success"
          ? null
          : results
              .filter((r) => r.error)
              .map((r) => `${r.id}: ${r.error}`)
              .join("; ") || "no step succeeded",
      elapsed_ms: turn.ports.now() - started,
      children: results,
    };
  };

  let failed = false;
  const steps: StepResult[] = [];
  for (const step of record.plan.steps) {
    let result = record.results[step.id];
    if (!result) {
      if (failed) {
        result = { id: step.id, type: step.type, status: "skipped", exec_id: null, output: null, error: null, elapsed_ms: 0 };
      } else {
        try {
          result = step.type === "agent" ? await runAgentStep(step, turn.signal) : await runGroup(step);
        } catch (err) {
          if (turn.signal.aborted) throw err;
          result = {
            id: step.id,
            type: step.type,
            status: "failed",
            exec_id: record.exec_ids[step.id] ?? null,
            output: null,
            error: errorMessage(err),
            elapsed_ms: 0,
          };
        }
        record.results[step.id] = result;
        if (result.status === "success") record.bindings[step.result_key ?? step.id] = result.output;
        turn.emit(level, []); // a finished step is never run again
      }
    }
    if (result.status !== "success") failed = true;
    steps.push(result);
  }
  const errors = steps.filter((s) => s.error).map((s) => `${s.id}: ${s.error}`);
  status(failed ? "failed" : "completed");
  return { output: { success: !failed, steps, bindings: record.bindings, ...(errors.length ? { errors } : {}) }, is_error: failed };
}
