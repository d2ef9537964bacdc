// The turn budget: what the running turn (or the last one) has used against the agent's limits, from the
// thread read model.
import type { ThreadView } from "../../../../src/client/index";
import { count } from "../format";
import { Section } from "../ui";

const METERS = [
  ["llm_calls", "max_total_llm_calls", "Model calls"],
  ["tool_calls", "max_total_tool_calls", "Tool calls"],
  ["subtasks", "max_total_subtasks", "Sub-tasks"],
] as const;

export function Budget({ thread }: { thread: ThreadView | null }) {
  if (!thread) return null;
  const { used, limits } = thread.budget;
  return (
    <Section title="Budget" id="budget-title" class="budget">
      <p class="hint">Used by the running turn, or the last one.</p>
      {METERS.map(([key, limitKey, label]) => {
        const limit = limits[limitKey] ?? 0;
        return (
          <div class="meter" key={key}>
            <label for={`meter-${key}`}>
              {label}{" "}
              <span class="meta">
                {count(used[key])} of {count(limit)}
              </span>
            </label>
            <meter id={`meter-${key}`} min={0} max={Math.max(limit, 1)} value={used[key]} high={limit * 0.8} optimum={0} />
          </div>
        );
      })}
      <p class="meta">
        {count(used.input_tokens)} input · {count(used.output_tokens)} output tokens
      </p>
    </Section>
  );
}
