// A turn's budget in a deployment: the agent's own limits over the defaults, the raisable ones (model calls,
// tool calls, wall clock) held to the deployment's maxima, read from its BUDGET_MAX_* vars. A var that is not
// a whole number within its ceiling is an error naming it, never a silent default.
import { type AgentConfig, BUDGET_CAPS, type TurnBudget } from "../protocol/agent-config";
import { BUDGET_MAXIMA, type BudgetMaxima, DEFAULT_BUDGET_MAXIMA, RAISABLE_LIMITS } from "../protocol/budget-maxima";
import { ApiError, type FieldIssue } from "../protocol/errors";

export type BudgetSettings = Partial<Record<(typeof BUDGET_MAXIMA)[keyof typeof BUDGET_MAXIMA]["setting"], string>>;

/** The deployment's maxima from its vars (unset: the default); throws on a value that is not 1..ceiling. */
export function budgetMaxima(env: BudgetSettings): BudgetMaxima {
  const maxima = { ...DEFAULT_BUDGET_MAXIMA };
  for (const limit of RAISABLE_LIMITS) {
    const { setting, ceiling } = BUDGET_MAXIMA[limit];
    const raw = env[setting];
    if (raw === undefined || raw === "") continue;
    const n = Number(raw);
    if (!/^\d+$/.test(raw.trim()) || n < 1 || n > ceiling) {
      throw new ApiError("internal_error", `The deployment setting ${setting} must be a whole number from 1 to ${ceiling} (got "${raw}")`);
    }
    maxima[limit] = n;
  }
  return maxima;
}

/** The limits a turn of the agent runs with: its budget over the defaults, the raisable ones at most the deployment's maxima. */
export function turnBudget(budget: AgentConfig["budget"], maxima: BudgetMaxima = DEFAULT_BUDGET_MAXIMA): TurnBudget {
  const limits: TurnBudget = { ...BUDGET_CAPS, ...budget };
  for (const limit of RAISABLE_LIMITS) limits[limit] = Math.min(limits[limit], maxima[limit]);
  return limits;
}

/** An agent's budget values over the deployment's maxima, each named with the maximum and its var. */
export function budgetIssues(budget: AgentConfig["budget"], maxima: BudgetMaxima): FieldIssue[] {
  return RAISABLE_LIMITS.filter((limit) => (budget[limit] ?? 0) > maxima[limit]).map((limit) => ({
    path: `budget.${limit}`,
    reason: `must be at most the deployment's maximum ${maxima[limit]} (${BUDGET_MAXIMA[limit].setting})`,
  }));
}
