// The limits of a turn that long-running agents need raised (docs/guides/subagents-and-budgets.md): model calls, tool calls and wall-clock
// time. A turn whose agent sets nothing gets the default of BUDGET_CAPS; an agent's budget may go up to the
// deployment's maximum, a wrangler var (its default allows long runs), which itself may not pass its ceiling.
export const BUDGET_MAXIMA = {
  max_total_llm_calls: { setting: "BUDGET_MAX_LLM_CALLS", default: 1_000, ceiling: 100_000 },
  max_total_tool_calls: { setting: "BUDGET_MAX_TOOL_CALLS", default: 5_000, ceiling: 500_000 },
  max_wall_clock_ms: { setting: "BUDGET_MAX_WALL_CLOCK_MS", default: 3_600_000, ceiling: 86_400_000 },
} as const;

export type RaisableLimit = keyof typeof BUDGET_MAXIMA;
/** The deployment's maximum of each raisable limit. */
export type BudgetMaxima = Record<RaisableLimit, number>;

export const RAISABLE_LIMITS = Object.keys(BUDGET_MAXIMA) as RaisableLimit[];

export const DEFAULT_BUDGET_MAXIMA: BudgetMaxima = {
  max_total_llm_calls: BUDGET_MAXIMA.max_total_llm_calls.default,
  max_total_tool_calls: BUDGET_MAXIMA.max_total_tool_calls.default,
  max_wall_clock_ms: BUDGET_MAXIMA.max_wall_clock_ms.default,
};
