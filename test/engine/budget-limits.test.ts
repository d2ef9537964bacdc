// The deployment's budget maxima read from its vars (src/engine/budget-limits.ts): a value that is not a whole
// number within the setting's ceiling is an error naming the setting, never a silent default.
import { describe, expect, it } from "vitest";
import { budgetMaxima, turnBudget } from "../../src/engine/budget-limits";

describe("budget maxima", () => {
  it("reads the vars, defaulting those unset, and refuses bad values by name", () => {
    expect(budgetMaxima({})).toEqual({ max_total_llm_calls: 1000, max_total_tool_calls: 5000, max_wall_clock_ms: 3_600_000 });
    expect(budgetMaxima({ BUDGET_MAX_LLM_CALLS: "300", BUDGET_MAX_WALL_CLOCK_MS: "" })).toMatchObject({
      max_total_llm_calls: 300,
      max_wall_clock_ms: 3_600_000,
    });
    for (const raw of ["lots", "0", "-5", "1.5", "100001", "1e3"]) {
      expect(() => budgetMaxima({ BUDGET_MAX_LLM_CALLS: raw })).toThrow(
        `The deployment setting BUDGET_MAX_LLM_CALLS must be a whole number from 1 to 100000 (got "${raw}")`,
      );
    }
    expect(() => budgetMaxima({ BUDGET_MAX_TOOL_CALLS: "500001" })).toThrow(/BUDGET_MAX_TOOL_CALLS must be a whole number from 1 to 500000/);
  });

  it("holds an agent's limits, set or default, to the maxima", () => {
    const maxima = { max_total_llm_calls: 30, max_total_tool_calls: 5000, max_wall_clock_ms: 3_600_000 };
    expect(turnBudget({}, maxima)).toMatchObject({ max_total_llm_calls: 30, max_total_tool_calls: 200, max_wall_clock_ms: 180_000 });
    expect(turnBudget({ max_total_tool_calls: 400, max_depth: 1 }, maxima)).toMatchObject({ max_total_tool_calls: 400, max_depth: 1 });
  });
});
