// Tokens and cost per turn as a small bar chart (from cost.recorded, sub-agents and judge calls included):
// each turn's input (cached part apart) and output tokens as one stacked bar on a shared scale, its cost as
// a second bar on the scale of the costliest turn. The numbers are in the rows, so the chart reads without
// the colours too.
import { count, usd } from "../format";
import { Section } from "../ui";
import type { Turn } from "./items";

const LEGEND = [
  ["cached", "cached input"],
  ["input", "input"],
  ["output", "output"],
  ["cost", "cost"],
] as const;

const pct = (part: number, whole: number) => `${whole > 0 ? ((100 * part) / whole).toFixed(2) : 0}%`;

export function UsageChart({ turns }: { turns: Turn[] }) {
  const rows = turns.map((turn, i) => ({ turn, n: i + 1 })).filter(({ turn }) => turn.input_tokens + turn.output_tokens > 0);
  if (rows.length === 0) return null;
  const maxTokens = Math.max(...rows.map(({ turn }) => turn.input_tokens + turn.output_tokens));
  const maxCost = Math.max(0, ...rows.map(({ turn }) => turn.cost_usd ?? 0));
  return (
    <Section title="Tokens and cost per turn" id="usage-chart-title" class="usage-chart">
      <p class="legend" aria-hidden="true">
        {LEGEND.map(([key, label]) => (
          <span key={key} class="legend-item">
            <span class={`key key-${key}`} /> {label}
          </span>
        ))}
      </p>
      <ol>
        {rows.map(({ turn, n }) => {
          const fresh = turn.input_tokens - turn.cached_input_tokens;
          return (
            <li key={turn.id} data-turn-id={turn.id}>
              <p class="usage-row">
                <strong>Turn {n}</strong>{" "}
                <span class="usage-numbers">
                  {count(turn.input_tokens)} in{turn.cached_input_tokens > 0 && ` (${count(turn.cached_input_tokens)} cached)`} · {count(turn.output_tokens)}{" "}
                  out · {usd(turn.cost_usd)}
                </span>
              </p>
              <span class="stack" aria-hidden="true">
                <span class="seg seg-cached" style={{ width: pct(turn.cached_input_tokens, maxTokens) }} />
                <span class="seg seg-input" style={{ width: pct(fresh, maxTokens) }} />
                <span class="seg seg-output" style={{ width: pct(turn.output_tokens, maxTokens) }} />
              </span>
              {maxCost > 0 && (
                <span class="stack cost" aria-hidden="true">
                  <span class="seg seg-cost" style={{ width: pct(turn.cost_usd ?? 0, maxCost) }} />
                </span>
              )}
            </li>
          );
        })}
      </ol>
    </Section>
  );
}
