// The session's side of quotas besides the model-call path (quota-port.ts): a turn's end gives back its place
// among the running turns of every quota object that counted it, and soft thresholds crossed become
// quota.warning events (which subscriptions deliver like any other).
import { quotaObject } from "../../objects/quota/quota-object";
import { quotaDefinitions } from "../../objects/registry/quota-cache";
import type { QuotaWarning } from "../../protocol/quotas";
import type { Capability } from "../capability";
import type { StoredEvent } from "../store/session-store";
import { type QuotaSession, quotaGroups, turnSubjects } from "./quota-subjects";

const ENDS = new Set(["turn.completed", "turn.failed", "turn.cancelled"]);

/** Records the thresholds a settlement crossed: session-level events, so they may follow the turn's end. */
export function recordWarnings(s: Pick<QuotaSession, "commit">, turnId: string, warnings: QuotaWarning[]): void {
  try {
    s.commit(warnings.map((w) => ({ type: "quota.warning" as const, payload: { ...w, turn_id: turnId } })));
  } catch (err) {
    console.error("recording a quota warning failed", err);
  }
}

/** Ends turn `turnId` in the objects counting its quotas' running turns (a lease that is never ended expires). */
async function endTurn(s: QuotaSession, turnId: string): Promise<void> {
  const definitions = await quotaDefinitions(s.bindings());
  const counting = definitions.filter((q) => q.limits.turns !== undefined || q.limits.concurrent_turns !== undefined);
  if (counting.length === 0) return;
  const groups = quotaGroups(turnSubjects(s, turnId), counting);
  await Promise.all(groups.map((g) => quotaObject(s.bindings(), g.name).end(turnId, g.rules)));
}

export function quotaTurns(s: QuotaSession) {
  return {
    committed(events: StoredEvent[]) {
      for (const e of events) {
        if (!ENDS.has(e.type)) continue;
        const { turn_id } = JSON.parse(e.body) as { turn_id: string };
        void endTurn(s, turn_id).catch((err: unknown) => console.error("ending a turn in its quota objects failed", err));
      }
    },
  } satisfies Capability;
}
