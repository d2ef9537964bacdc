// The quota port of a running turn (src/engine/quota-reservation.ts uses it): the quotas that apply to the turn
// (from the isolate's cache of definitions), grouped by the object of each subject they count, asked in
// parallel. A quota object that does not answer fails closed for a refuse quota (quota_unavailable) and pauses
// a pause-only one until it answers again.
import type { QuotaPort, QuotaSpend } from "../../engine/ports";
import { quotaObject } from "../../objects/quota/quota-object";
import { quotaDefinitions } from "../../objects/registry/quota-cache";
import { errorMessage } from "../../protocol/errors";
import type { QuotaRule, QuotaVerdict, QuotaWarning } from "../../protocol/quotas";
import { continuedBy } from "./quota-continue";
import { type QuotaGroup, type QuotaSession, quotaGroups, turnSubjects } from "./quota-subjects";

const DEFAULT_RECHECK_MS = 10_000;
/** How often a paused turn looks whether it was continued (a read of its own log). */
const CONTINUE_LOOK_MS = 250;
const SPEND = ["usd", "input_tokens", "output_tokens"] as const;
const TURNS = ["turns", "concurrent_turns"] as const;

const limits = (rules: QuotaRule[], dims: readonly string[]) => rules.filter((r) => dims.some((d) => r.limits[d as keyof QuotaRule["limits"]] !== undefined));

export function quotaPort(s: QuotaSession, turnId: string, recordWarnings: (warnings: QuotaWarning[]) => void): QuotaPort {
  const env = s.bindings();
  /** The objects each reservation was made with, until it is settled. */
  const reserved = new Map<string, { name: string; subject: string; rules: QuotaRule[] }[]>();
  let subjects: ReturnType<typeof turnSubjects> | null = null;
  const groups = async (): Promise<QuotaGroup[]> => {
    const definitions = await quotaDefinitions(env);
    if (definitions.length === 0) return [];
    subjects ??= turnSubjects(s, turnId);
    return quotaGroups({ ...subjects, agent: s.agent().name }, definitions); // a handoff changes the agent
  };
  const recheckMs = Number(env.QUOTA_RECHECK_MS) > 0 ? Number(env.QUOTA_RECHECK_MS) : DEFAULT_RECHECK_MS;

  /**
   * Asks every group in parallel; a group that fails to answer gives a quota_unavailable verdict, except for a
   * call a principal continued (`over`), which is made anyway (its settlement counts it when the object answers).
   */
  const ask = async (of: QuotaGroup[], over: boolean, call: (g: QuotaGroup) => Promise<QuotaVerdict>) =>
    Promise.all(
      of.map(async (g) => ({
        group: g,
        verdict: await call(g).catch((err: unknown): QuotaVerdict => {
          if (!over) return unavailable(g.rules, err);
          logged(err);
          return { ok: true };
        }),
      })),
    );

  return {
    async applies() {
      const all = (await groups()).flatMap((g) => g.rules);
      if (all.length === 0) return null;
      return { spend: limits(all, SPEND).length > 0, turns: limits(all, TURNS).length > 0 };
    },
    async begin(over = false) {
      const of = (await groups()).map((g) => ({ ...g, rules: limits(g.rules, TURNS) })).filter((g) => g.rules.length > 0);
      const answers = await ask(of, over, (g) => quotaObject(env, g.name).begin(turnId, g.rules, over));
      const refusal = answers.find((a) => !a.verdict.ok)?.verdict;
      if (!refusal) return { ok: true };
      // Refused somewhere: the objects that counted the turn take it back.
      for (const a of answers.filter((x) => x.verdict.ok)) void quotaObject(env, a.group.name).end(turnId, a.group.rules, true).catch(logged);
      return refusal;
    },
    async reserve(id, most, over = false) {
      const of = (await groups()).map((g) => ({ ...g, rules: limits(g.rules, SPEND) })).filter((g) => g.rules.length > 0);
      const unpriced = most.usd === null ? of.flatMap((g) => g.rules).find((r) => r.limits.usd !== undefined) : undefined;
      if (unpriced) {
        const message = `Quota '${unpriced.id}' limits spend in USD, and a model of this call has no known price (set MODEL_PRICES): the call is not made`;
        return { ok: false, quota_id: unpriced.id, action: "refuse", code: "quota_exceeded", message, retry_at: null };
      }
      const spend = { ...most, usd: most.usd ?? 0 };
      const answers = await ask(of, over, (g) => quotaObject(env, g.name).reserve(id, turnId, g.rules, spend, over));
      const refusal = answers.find((a) => !a.verdict.ok)?.verdict;
      if (refusal) {
        for (const a of answers.filter((x) => x.verdict.ok)) void quotaObject(env, a.group.name).settle(id, a.group.rules, null, a.group.subject).catch(logged);
        return refusal;
      }
      reserved.set(id, of);
      return { ok: true };
    },
    settle(id, actual: QuotaSpend | null) {
      const of = reserved.get(id) ?? [];
      reserved.delete(id);
      const spend = actual && { ...actual, usd: actual.usd ?? 0 };
      for (const g of of) {
        // Not awaited: the turn goes on. A settlement that fails leaves the reservation to expire as spent.
        void quotaObject(env, g.name)
          .settle(id, g.rules, spend, g.subject)
          .then((warnings) => warnings.length > 0 && recordWarnings(warnings))
          .catch(logged);
      }
    },
    continued: () => continuedBy(s.sql, turnId),
    sleep(until, signal) {
      return new Promise<void>((resolve) => {
        const ms = Math.max(0, Math.min(until === null ? recheckMs : until - Date.now(), recheckMs));
        // Only this request's own timers and signal end the wait: a wake from another request (a PUT in this
        // isolate, a continue) would touch this one's I/O, which workerd refuses. So a continue is looked for.
        const done = () => {
          clearTimeout(timer);
          clearInterval(look);
          signal.removeEventListener("abort", done);
          resolve();
        };
        const timer = setTimeout(done, ms);
        const look = setInterval(() => continuedBy(s.sql, turnId) !== null && done(), CONTINUE_LOOK_MS);
        signal.addEventListener("abort", done, { once: true });
      });
    },
  };
}

function unavailable(rules: QuotaRule[], err: unknown): QuotaVerdict {
  const refuse = rules.find((r) => r.action === "refuse");
  const rule = refuse ?? rules[0]!;
  const message = `Quota '${rule.id}' could not be checked (its quota object did not answer: ${errorMessage(err)}); ${refuse ? "a refuse quota fails closed" : "the turn waits until it answers"}`;
  return { ok: false, quota_id: rule.id, action: refuse ? "refuse" : "pause", code: "quota_unavailable", message, retry_at: null };
}

function logged(err: unknown): void {
  console.error("a quota object did not answer", err);
}
