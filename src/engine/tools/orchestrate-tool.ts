// agent_orchestrate (docs/guides/subagents-and-budgets.md): runs registered agents as sequential steps and parallel groups, each step a
// child session. The loop runs it (src/engine/orchestration/run.ts).
import { runByTheLoop, type ToolDefinition } from "./types";

export const AGENT_ORCHESTRATE = "agent_orchestrate";

export const agentOrchestrate: ToolDefinition = {
  name: AGENT_ORCHESTRATE,
  description:
    'Runs other registered agents: give a "plan" ({steps: [{id, type: "agent", agent, prompt?, with?, result_key?} | {id, type: "parallel", steps: [...], merge: "collect" | "first_success"}]}) or a "prompt" to have a plan written. Later prompts can use earlier outputs as {{ bindings.<result_key> }}. Returns {success, steps, bindings, errors?}.',
  parameters: {
    type: "object",
    properties: {
      plan: { type: "object", description: "The steps to run" },
      prompt: { type: "string", description: "What to achieve; a planner writes the plan" },
      bindings: { type: "object", description: "Initial values for {{ bindings.<key> }}" },
      timeout_ms: { type: "integer", minimum: 1000, description: "Per-step time limit" },
      max_parallel: { type: "integer", minimum: 1, description: "Most steps of a parallel group to run at once" },
    },
    additionalProperties: false,
  },
  permission_class: "subagent",
  parallel_safe: true,
  // Finished steps are recorded in the call and never re-run; unfinished ones reuse their child sessions.
  idempotent: true,
  loop_handled: "agent_orchestrate",
  execute: runByTheLoop,
};
