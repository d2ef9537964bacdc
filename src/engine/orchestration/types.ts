// What an agent_orchestrate call keeps in its turn's checkpoint, and the session's orchestration limits.
import type { Plan } from "./plan";

export type OrchestrationPhase =
  | "plan_init"
  | "planner_active"
  | "plan_validated"
  | "dispatching_step"
  | "awaiting_results"
  | "merging_results"
  | "completed"
  | "failed";

export interface StepResult {
  id: string;
  type: "agent" | "parallel";
  status: "success" | "failed" | "partial" | "skipped";
  exec_id: string | null;
  output: unknown;
  error: string | null;
  elapsed_ms: number;
  children?: StepResult[];
}

/** What a call keeps between restarts. */
export interface OrchestrationRecord {
  plan?: Plan;
  bindings: Record<string, unknown>;
  /** The child session of each agent step, chosen before it is dispatched (a resumed step reuses it). */
  exec_ids: Record<string, string>;
  results: Record<string, StepResult>;
}

export interface OrchestrationLimits {
  /** This session's orchestration depth (0 unless it is itself a step of an orchestration). */
  depth: number;
  max_depth: number;
  max_steps: number;
  max_parallel: number;
}

export const DEFAULT_ORCHESTRATION_LIMITS: OrchestrationLimits = { depth: 0, max_depth: 3, max_steps: 12, max_parallel: 4 };
