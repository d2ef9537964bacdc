// Automatic recall (memory.recall.auto): the best matches from the resource's earlier conversations,
// kept within the agent's token budget, and the system prompt section that shows them to the model.
import type { RecallHit } from "../../protocol/memory";

const HEADER = "Earlier conversations with this user that may be relevant (found by search; they may be out of date):";

/** The same estimate as the context budget's: about 4 characters a token. */
const tokensOf = (text: string) => Math.ceil(text.length / 4);

function line(hit: RecallHit): string {
  return `- ${new Date(hit.at).toISOString().slice(0, 10)}, ${hit.role === "user" ? "the user" : "you"}: ${hit.snippet}`;
}

/** The best `topK` hits whose section fits in `maxTokens`, best first, and the tokens that section takes. */
export function withinBudget(hits: readonly RecallHit[], topK: number, maxTokens: number): { hits: RecallHit[]; tokens: number } {
  const kept: RecallHit[] = [];
  let tokens = tokensOf(HEADER);
  for (const hit of hits.slice(0, topK)) {
    const cost = tokensOf(`\n${line(hit)}`);
    if (tokens + cost > maxTokens) break;
    kept.push(hit);
    tokens += cost;
  }
  return kept.length > 0 ? { hits: kept, tokens } : { hits: [], tokens: 0 };
}

/** The system prompt's section for the recalled hits; null when there are none. */
export function recalledPrompt(hits: readonly RecallHit[]): string | null {
  return hits.length > 0 ? [HEADER, ...hits.map(line)].join("\n") : null;
}
