// Quotas on the model-call path (docs/guides/quotas.md). Before each model call (executor, planner, compaction,
// a sub-agent's, a guardrail judge's) the turn reserves the most the call can cost (call-estimate.ts) against
// every quota that applies. A call the reservation does not fit is not made: a refuse quota fails the turn
// (quota_exceeded), a pause quota makes it wait (turn.paused) and look again. After the call the reservation is
// settled to what the provider reports.
import type { LanguageModelV3CallOptions } from "@ai-sdk/provider";
import type { QuotaVerdict } from "../protocol/quotas";
import { type CallEstimate, dearestCost } from "./call-estimate";
import type { QuotaPort, QuotaSpend } from "./ports";
import type { Level, Turn } from "./turn-context";
import type { OpenModelStep, Usage } from "./turn-state";

/** A reservation made: settle it once with the call's usage, `"reserved"` when the call was cut after it had begun answering. */
export interface HeldReservation {
  /** The reservation's id, recorded with the call (OpenModelStep.quota_reservation). */
  id: string;
  settle(usage: Usage | "reserved" | null, model: string): void;
}

/**
 * Settles the quota reservation of a call a restart cut: as spent at its amount when the call is lost (it may
 * have been billed, as usage.lost says), given back when the call made again re-attaches to its response (that
 * call's own reservation is then the one bill).
 */
export function settleCut(port: QuotaPort | undefined, cut: OpenModelStep, lost: boolean): void {
  const id = cut.quota_reservation;
  const r = cut.reservation;
  if (!port || !id || !r) return;
  port.settleCut(id, lost ? { usd: r.cost_usd, input_tokens: r.input_tokens, output_tokens: r.max_output_tokens } : null);
}

/** Turns whose start is not counted yet: their first reservation counts it (or countStart, when they make none). */
const uncounted = new WeakSet<Turn>();

/**
 * Counts the turn's start against turns and concurrent_turns, waiting while a pause quota has no room. When
 * spend quotas apply too, the start is counted with the turn's first reservation instead, in the same request
 * to each quota object (one round trip, not two, before the first call); countStart counts a turn that ends
 * without a model call.
 */
export async function admitTurn(level: Level, turn: Turn): Promise<void> {
  const port = turn.ports.quota;
  const applies = port && (await port.applies());
  if (!port || !applies?.turns) return;
  if (applies.spend) uncounted.add(turn);
  else await admitted(level, turn, port, (over) => port.begin(over));
}

/** Counts the start of a turn that made no reservation (it ends, or waits for a person, before any model call). */
export async function countStart(level: Level, turn: Turn): Promise<void> {
  const port = turn.ports.quota;
  if (!port || !uncounted.delete(turn)) return;
  await admitted(level, turn, port, (over) => port.begin(over));
}

/**
 * Reserves the call `options` before it is made, at its `estimate` (call-estimate.ts: the figure model.requested
 * records); null when no quota limits spend. Sets the call's max_output_tokens when it had none, so the
 * reservation bounds it.
 */
export async function reserveCall(level: Level, turn: Turn, estimate: CallEstimate, options: LanguageModelV3CallOptions): Promise<HeldReservation | null> {
  const port = turn.ports.quota;
  if (!port || !(await port.applies())?.spend) return null;
  options.maxOutputTokens ??= estimate.max_output_tokens;
  const most: QuotaSpend = { usd: estimate.cost_usd, input_tokens: estimate.input_tokens, output_tokens: estimate.max_output_tokens };
  const id = turn.ports.newId("rsv");
  const start = uncounted.delete(turn);
  await admitted(level, turn, port, (over) => port.reserve(id, most, { over, start }));
  let settled = false;
  return {
    id,
    settle(usage, model) {
      if (settled) return;
      settled = true;
      if (usage === null) return port.settle(id, null);
      if (usage === "reserved") return port.settle(id, most);
      const { input_tokens, output_tokens } = usage;
      port.settle(id, { usd: dearestCost([model], usage, level.run.setup.prices), input_tokens, output_tokens });
    },
  };
}

/**
 * Asks until there is room: a refusal ends the turn; a pause records turn.paused, waits and asks again. A turn a
 * principal continued (turn.continued) asks again with that quota in `over`: this one call goes over it. Another
 * quota that still holds the call pauses the turn again, naming it, for a continue of its own.
 */
async function admitted(level: Level, turn: Turn, port: QuotaPort, ask: (over: readonly string[]) => Promise<QuotaVerdict>): Promise<void> {
  const { turn_id } = level.state;
  const over: string[] = [];
  let verdict = await ask(over);
  /** The quota the log's newest turn.paused names while nothing answered it (null: none, or it was continued). */
  let waitingOn: string | null = null;
  let pausedBy: string | null = null;
  let continued_by: string | null = null;
  while (!verdict.ok) {
    if (verdict.action === "refuse") turn.refuse(verdict);
    if (waitingOn !== verdict.quota_id) {
      waitingOn = pausedBy = verdict.quota_id;
      continued_by = null; // an earlier continue let another quota's check go; this pause is its own
      const { quota_id, message, retry_at } = verdict;
      turn.emit(level, [{ type: "turn.paused", turn_id, payload: { reason: "quota", quota_id, message, retry_at } }]);
    }
    await turn.outside(port.sleep(verdict.retry_at, turn.signal));
    turn.signal.throwIfAborted();
    const continued = port.continued();
    if (continued) {
      over.push(continued.quota_id);
      continued_by = continued.by;
      waitingOn = null;
    }
    verdict = await ask(over);
  }
  if (pausedBy !== null)
    turn.emit(level, [{ type: "turn.resumed", turn_id, payload: { reason: "quota", quota_id: pausedBy, ...(continued_by ? { continued_by } : {}) } }]);
}
