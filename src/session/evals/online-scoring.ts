// Online scoring (docs/guides/evals.md): the agent's online_scorers score a sample of its ended turns, off
// the turn's path, each score recorded as eval.scored. Best effort: a score lost to a restart is not retried.
import type { CaseResult } from "../../engine/evals/case-result";
import { scorerCalls } from "../../engine/evals/scorer-calls";
import { scoreCase } from "../../engine/evals/scorers";
import { resolveModel } from "../../engine/models";
import { parsePriceOverrides } from "../../engine/pricing";
import { parseAllowlist } from "../../engine/url-allowlist";
import { evalsOf } from "../../objects/registry/evals-rpc";
import { registry } from "../../objects/registry/registry-object";
import { scorerId } from "../../protocol/evals";
import { providerEnv } from "../../providers";
import { turnSide } from "../../views/turn-side";
import type { Capability } from "../capability";
import type { LogHost, SettingsHost } from "../hosts";
import type { StoredEvent } from "../store/session-store";

type ScoringSession = LogHost & SettingsHost;

const ENDS = new Set(["turn.completed", "turn.failed"]);

/** Whether `key` falls in the sample: a hash of it against the rate, so the same turn and scorer decide alike. */
export function sampled(key: string, rate: number): boolean {
  let h = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) h = Math.imul(h ^ key.charCodeAt(i), 0x01000193) >>> 0;
  return h / 0x1_0000_0000 < rate;
}

async function scoreTurn(s: ScoringSession, turnId: string): Promise<void> {
  const picked = (s.agent().online_scorers ?? []).filter((o) => sampled(`${turnId}:${scorerId(o.scorer)}`, o.sample_rate));
  if (picked.length === 0) return;
  const events = s.store.eventsOfTurn(turnId);
  const side = turnSide(events);
  const from = events.find((e) => e.type === "turn.submitted");
  const result: CaseResult = {
    input: (from?.payload as { input?: string } | undefined)?.input ?? "",
    output: side.output,
    status: side.status,
    tool_calls: side.tool_calls,
    steps: side.steps,
    cost_usd: side.cost_usd,
    latency_ms: (events.at(-1)?.timestamp ?? 0) - (from?.timestamp ?? 0),
  };
  const env = s.bindings();
  const calls = scorerCalls({
    resolveModel: (m) => resolveModel(m, providerEnv(env)),
    prices: parsePriceOverrides(env.MODEL_PRICES),
    allowlist: parseAllowlist(env.TOOL_URL_ALLOWLIST),
    fetch: (input, init) => fetch(input, init),
  });
  const version = s.view().agent_version ?? null;
  for (const o of picked) {
    const { cost_usd, ...score } = await scoreCase(o.scorer, result, calls);
    const payload = { turn_id: turnId, ...score, sample_rate: o.sample_rate, version, ...(cost_usd === undefined ? {} : { cost_usd }) };
    s.commit([{ type: "eval.scored", payload }]);
    // Off the turn's path too: the version's aggregate (an inline agent has no version to aggregate under).
    if (version !== null)
      await evalsOf(registry(env)).recordScore({ agent: s.agent().name, version, scorer: score.scorer, score: score.score, pass: score.pass });
  }
}

export function onlineScoring(s: ScoringSession) {
  return {
    committed(events: StoredEvent[]) {
      for (const e of events) {
        if (!ENDS.has(e.type) || !s.agent().online_scorers?.length) continue;
        const { turn_id } = JSON.parse(e.body) as { turn_id: string };
        void scoreTurn(s, turn_id).catch((err: unknown) => console.error("online scoring failed", err));
      }
    },
  } satisfies Capability;
}
