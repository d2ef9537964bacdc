// agent_orchestrate plans (docs/guides/subagents-and-budgets.md): sequential agent steps and parallel groups, validated with errors that
// name the step, and a small template renderer for {{ bindings.<key> }} (no code runs).
import { z } from "zod";

const ID = /^[A-Za-z0-9_-]{1,64}$/;
const KEY = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;

export const AgentStepSchema = z.strictObject({
  id: z.string().regex(ID, "must be 1-64 characters of A-Z a-z 0-9 _ -"),
  type: z.literal("agent"),
  agent: z.string().min(1),
  prompt: z.string().max(100_000).optional(),
  with: z.record(z.string(), z.unknown()).optional(),
  result_key: z.string().regex(KEY, "must be an identifier (letters, digits, _)").optional(),
  timeout_ms: z.int().min(1_000).max(600_000).optional(),
});

export const ParallelStepSchema = z.strictObject({
  id: z.string().regex(ID, "must be 1-64 characters of A-Z a-z 0-9 _ -"),
  type: z.literal("parallel"),
  steps: z.array(AgentStepSchema).min(1, "a parallel group needs at least one step"),
  max_concurrency: z.int().min(1).optional(),
  merge: z.enum(["collect", "first_success"]).default("collect"),
  result_key: z.string().regex(KEY, "must be an identifier (letters, digits, _)").optional(),
});

export const PlanSchema = z.strictObject({
  steps: z.array(z.discriminatedUnion("type", [AgentStepSchema, ParallelStepSchema])).min(1, "a plan needs at least one step"),
});

export type AgentStep = z.infer<typeof AgentStepSchema>;
export type ParallelStep = z.infer<typeof ParallelStepSchema>;
export type Plan = z.infer<typeof PlanSchema>;

export interface PlanLimits {
  /** Agent steps in a plan, counting those inside parallel groups. */
  max_steps: number;
  /** Steps in one parallel group. */
  max_parallel: number;
}

/** Parses and checks a plan; the errors name the step (or field) at fault. */
export function validatePlan(input: unknown, agents: ReadonlySet<string>, limits: PlanLimits): { plan: Plan } | { errors: string[] } {
  const parsed = PlanSchema.safeParse(input);
  if (!parsed.success) return { errors: parsed.error.issues.map((i) => `${where(input, i.path)}: ${i.message}`) };
  const plan = parsed.data;
  const errors: string[] = [];
  const ids = new Set<string>();
  const keys = new Set<string>();
  let agentSteps = 0;
  const check = (step: AgentStep | ParallelStep) => {
    if (ids.has(step.id)) errors.push(`step "${step.id}": the id is used twice`);
    ids.add(step.id);
    if (step.result_key) {
      if (keys.has(step.result_key)) errors.push(`step "${step.id}": result_key "${step.result_key}" is used twice`);
      keys.add(step.result_key);
    }
    if (step.type === "agent") {
      agentSteps += 1;
      if (!agents.has(step.agent)) errors.push(`step "${step.id}": unknown agent "${step.agent}"`);
    } else {
      if (step.steps.length > limits.max_parallel)
        errors.push(`step "${step.id}": ${step.steps.length} steps in a parallel group (at most ${limits.max_parallel})`);
      step.steps.forEach(check);
    }
  };
  plan.steps.forEach(check);
  if (agentSteps > limits.max_steps) errors.push(`plan: ${agentSteps} agent steps (at most ${limits.max_steps})`);
  return errors.length > 0 ? { errors } : { plan };
}

/** Names the place of a schema error by step id where the input has one: `step "g1" steps`, else `plan.steps.0`. */
function where(input: unknown, path: readonly PropertyKey[]): string {
  let node: unknown = input;
  let named = "plan";
  let rest: string[] = [];
  for (const key of path) {
    node = node && typeof node === "object" ? (node as Record<PropertyKey, unknown>)[key] : undefined;
    const id = node && typeof node === "object" ? (node as { id?: unknown }).id : undefined;
    if (typeof key === "number" && typeof id === "string") {
      named = `step "${id}"`;
      rest = [];
    } else rest.push(String(key));
  }
  if (rest.length === 0) return named;
  return named === "plan" ? `plan.${rest.join(".")}` : `${named} ${rest.join(".")}`;
}

export class TemplateError extends Error {}

const TEMPLATE = /\{\{\s*bindings\.([A-Za-z0-9_-]+(?:\.[A-Za-z0-9_-]+)*)\s*\}\}/g;

/** Replaces {{ bindings.a.b }} with the bound value (JSON for non-strings); an unknown binding is an error. */
export function render(text: string, bindings: Record<string, unknown>): string {
  return text.replace(TEMPLATE, (_, path: string) => {
    let value: unknown = bindings;
    for (const part of path.split(".")) {
      if (value === null || typeof value !== "object" || !Object.hasOwn(value, part)) throw new TemplateError(`unknown binding "${path}"`);
      value = (value as Record<string, unknown>)[part];
    }
    return typeof value === "string" ? value : JSON.stringify(value);
  });
}

/** Renders every string inside `value` (the `with` inputs of a step). */
export function renderDeep(value: unknown, bindings: Record<string, unknown>): unknown {
  if (typeof value === "string") return render(value, bindings);
  if (Array.isArray(value)) return value.map((v) => renderDeep(v, bindings));
  if (value && typeof value === "object") return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, renderDeep(v, bindings)]));
  return value;
}
