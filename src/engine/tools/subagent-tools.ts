// The sub-agent tools (docs/guides/subagents-and-budgets.md). The loop runs them itself: each call starts child loops inside the turn.
import { type JsonSchema, runByTheLoop, type ToolDefinition } from "./types";

export const RUN_SUBTASK = "run_subtask";
export const SPAWN_SUBAGENTS = "spawn_subagents";
export const FINISH_SUBTASK = "finish_subtask";

export const runSubtask: ToolDefinition = {
  name: RUN_SUBTASK,
  description:
    "Delegates a self-contained task to a sub-agent with its own fresh conversation (it sees only your instructions) and returns its result. Several calls in one step run in parallel.",
  parameters: {
    type: "object",
    properties: {
      title: { type: "string", description: "A short name for the task" },
      instructions: { type: "string", description: "Everything the sub-agent needs to know to do the task" },
      tools: { type: "array", items: { type: "string" }, description: "Names of your tools it may use (default: all of them)" },
      output_schema: { type: "object", description: "A JSON Schema its result must satisfy (it then finishes by calling finish_subtask)" },
    },
    required: ["title", "instructions"],
    additionalProperties: false,
  },
  permission_class: "subagent",
  parallel_safe: true,
  // A sub-agent resumes from its own checkpointed state after a restart.
  idempotent: true,
  loop_handled: "run_subtask",
  execute: runByTheLoop,
};

export function spawnSubagents(maxJobs: number): ToolDefinition {
  return {
    name: SPAWN_SUBAGENTS,
    description: `Runs up to ${maxJobs} sub-agents in parallel, one per job, and returns each job's result.`,
    parameters: {
      type: "object",
      properties: {
        jobs: {
          type: "array",
          minItems: 1,
          items: {
            type: "object",
            properties: {
              task: { type: "string" },
              additional_context: { type: "string" },
              tool_names: { type: "array", items: { type: "string" } },
              output_schema: { type: "object" },
              system_prompt: { type: "string" },
            },
            required: ["task"],
            additionalProperties: false,
          },
        },
      },
      required: ["jobs"],
      additionalProperties: false,
    },
    permission_class: "subagent",
    parallel_safe: true,
    idempotent: true,
    loop_handled: "spawn_subagents",
    execute: runByTheLoop,
  };
}

/** Given to a sub-agent that has an output schema: its input schema is that schema. */
export function finishSubtask(schema: JsonSchema): ToolDefinition {
  return {
    name: FINISH_SUBTASK,
    description: "Finishes your task: call it once with your result, which must match the required schema.",
    parameters: schema,
    permission_class: "subagent",
    parallel_safe: false,
    idempotent: true,
    loop_handled: "finish_subtask",
    execute: runByTheLoop,
  };
}
