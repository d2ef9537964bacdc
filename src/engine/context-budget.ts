// Budget awareness (`budget_awareness`, docs/guides/subagents-and-budgets.md): how much of the model's context window a prompt uses, the
// per-message advisory, and the limit:N threshold.
import type { ModelMessage } from "ai";
import { type AgentConfig, BUDGET_CAPS } from "../protocol/agent-config";
import { ApiError } from "../protocol/errors";
import { parseModelSpec } from "../protocol/model-spec";

/** Known context windows by model id prefix (tokens); the first match wins. */
const CONTEXT_WINDOWS: [prefix: string, tokens: number][] = [
  ["gpt-4.1", 1_047_576],
  ["gpt-5", 400_000],
  ["gpt-4o", 128_000],
  ["gpt-4-turbo", 128_000],
  ["gpt-3.5-turbo", 16_385],
  ["o1", 200_000],
  ["o3", 200_000],
  ["o4", 200_000],
  ["claude", 200_000],
  ["@cf/meta/llama-3.1", 128_000],
  ["@cf/meta/llama-3.3", 128_000],
];
const DEFAULT_CONTEXT_WINDOW = 128_000;
/** The demo model's window is small on purpose, so budget awareness can be tried locally. */
const DEMO_CONTEXT_WINDOW = 8_192;

export const BUDGET_LIMIT_MESSAGE =
  "I have to stop here: this conversation no longer fits within the context budget configured for this agent, even after compacting earlier turns. Start a new session to continue.";

export function contextWindow(config: Pick<AgentConfig, "model" | "context_window">): number {
  if (config.context_window) return config.context_window;
  const spec = parseModelSpec(config.model);
  if (spec?.provider === "demo") return DEMO_CONTEXT_WINDOW;
  const id = spec?.model ?? config.model;
  return CONTEXT_WINDOWS.find(([prefix]) => id.startsWith(prefix))?.[1] ?? DEFAULT_CONTEXT_WINDOW;
}

/** A provider-independent estimate: about four characters per token of the serialized prompt. */
export function estimateTokens(system: string | undefined, messages: ModelMessage[]): number {
  // The length of JSON.stringify(messages), from each message's own length: brackets plus commas.
  let chars = 2 + Math.max(0, messages.length - 1);
  for (const m of messages) chars += serializedLength(m);
  return Math.ceil(((system?.length ?? 0) + chars) / 4);
}

/** Messages are not changed once made, so each is serialized once, not on every step of every later turn. */
const lengths = new WeakMap<ModelMessage, number>();

function serializedLength(m: ModelMessage): number {
  let n = lengths.get(m);
  if (n === undefined) {
    n = JSON.stringify(m).length;
    lengths.set(m, n);
  }
  return n;
}

export type BudgetMode = { kind: "per-message" } | { kind: "limit"; percent: number } | null;

export function budgetMode(config: Pick<AgentConfig, "budget_awareness">): BudgetMode {
  const v = config.budget_awareness;
  if (!v) return null;
  if (v === "per-message") return { kind: "per-message" };
  return { kind: "limit", percent: Number(v.slice("limit:".length)) };
}

export function advisory(used: number, window: number): string {
  const pct = Math.min(100, Math.round((used / window) * 100));
  return `[Context budget: about ${used} of ${window} tokens used (${pct}%), about ${Math.max(0, window - used)} remaining.]`;
}

/** Appends the advisory to every assistant message and tool result of a prompt (a copy; the originals stay as they are). */
export function withAdvisories(messages: ModelMessage[], note: string): ModelMessage[] {
  return messages.map((m): ModelMessage => {
    if (m.role === "assistant") {
      const parts = typeof m.content === "string" ? [{ type: "text" as const, text: m.content }] : m.content;
      return { ...m, content: [...parts, { type: "text", text: note }] };
    }
    if (m.role === "tool") {
      return {
        ...m,
        content: m.content.map((p) => {
          if (p.type !== "tool-result") return p;
          const o = p.output;
          const value = o.type === "text" || o.type === "error-text" ? o.value : JSON.stringify("value" in o ? o.value : o);
          const type = o.type === "error-text" || o.type === "error-json" ? ("error-text" as const) : ("text" as const);
          return { ...p, output: { type, value: `${value}\n${note}` } };
        }),
      };
    }
    return m;
  });
}

/**
 * Splits the history into what compaction summarizes and what it keeps: the last earlier turn (from its
 * user message on) stays verbatim when there is more than one.
 */
export function splitForCompaction(history: ModelMessage[]): { older: ModelMessage[]; recent: ModelMessage[] } {
  let lastUser = -1;
  history.forEach((m, i) => {
    if (m.role === "user") lastUser = i;
  });
  if (lastUser <= 0) return { older: history, recent: [] };
  return { older: history.slice(0, lastUser), recent: history.slice(lastUser) };
}

/**
 * The history without its oldest earlier turns (each dropped whole, from its user message on), as little
 * dropped as makes `measure` fit `limit`; empty when even the newest earlier turn does not fit.
 */
export function trimHistory(history: ModelMessage[], measure: (history: ModelMessage[]) => number, limit: number): ModelMessage[] {
  const starts = history.flatMap((m, i) => (m.role === "user" && i > 0 ? [i] : []));
  for (const start of starts) {
    const kept = history.slice(start);
    if (measure(kept) <= limit) return kept;
  }
  return [];
}

/**
 * Refuses (422 at `path`) an input that alone, with the agent's instructions, is over the agent's history
 * budget: no trimming could make it fit. Callers that open a session check it before creating it.
 */
export function checkInputFits(agent: AgentConfig, input: string, path: string, reason = "is too long for this agent"): void {
  const limit = { ...BUDGET_CAPS, ...agent.budget }.max_history_tokens;
  if (estimateTokens(agent.instructions, [{ role: "user", content: input }]) > limit) {
    throw ApiError.validation([{ path, reason: `${reason}: it alone is over max_history_tokens (${limit}) with the instructions` }]);
  }
}

export function summaryMessages(summary: string): ModelMessage[] {
  return [
    { role: "user", content: `Summary of the earlier conversation (older turns were compacted):\n${summary}` },
    { role: "assistant", content: "Understood; I will continue from this summary." },
  ];
}
