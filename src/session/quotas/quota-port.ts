// The quota port of a running turn (src/engine/quota-reservation.ts uses it): the quotas that apply to the turn
// (from the isolate's cache of definitions), grouped by the object of each subject they count, asked in
// parallel. A quota object that does not answer fails closed for a refuse quota (quota_unavailable) and pauses
// a pause-only one until it answers again.
import type { QuotaPort, QuotaSpend } from "../../engine/ports";
import type { Spend } from "../../objects/quota/quota-ledger";
import { quotaObject } from "../../objects/quota/quota-object";
import { quotaDefinitions } from "../../objects/registry/quota-cache";
import { errorMessage } from "../../protocol/errors";
import type { QuotaRule, QuotaVerdict, QuotaWarning } from "../../protocol/quotas";
import { continuedOf } from "./quota-continue";
import { type QuotaGroup, type QuotaSession, quotaGroups, turnSubjects } from "./quota-subjects";

const DEFAULT_RECHECK_MS = 10_000;
/** How often a paused turn looks whether it was continued (a read of its own log). */
const CONTINUE_LOOK_MS = 250;
const SPEND = ["usd", "input_tokens", "output_tokens"] as const;
const TURNS = ["turns", "concurrent_turns"] as const;

const OK: QuotaVerdict = { ok: true };

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

  const settleOn = (of: QuotaGroup[], id: string, actual: QuotaSpend | null) => {
    const spend = actual && { ...actual, usd: actual.usd ?? 0 };
    for (const g of of) {
      // Not awaited: the turn goes on. A settlement that fails leaves the reservation to expire as spent.
      void quotaObject(env, g.name)
        .settle(id, g.rules, spend, g.subject)
        .then((warnings) => warnings.length > 0 && recordWarnings(warnings))
        .catch(logged);
    }
  };

  /** The turn's start is counted in every object that counts it (by begin, or with its first reservation). */
  let started = false;

  /**
   * One request to each quota object, in parallel: counts the turn's start (`start`, unless it is counted
   * already) and reserves `call`, together where one object counts both (its admit). Refused anywhere, the
   * reservations made are given back, and the start too when it was the start that was refused. `over`: the
   * quotas a principal continued the call past, which the objects do not check. An object that does not answer
   * gives a quota_unavailable verdict naming a quota of it not in `over`; when it counts none but those, the
   * call is made anyway (its settlement counts it when the object answers).
   */
  const admit = async (start: boolean, call: { id: string; spend: Spend } | null, over: readonly string[]): Promise<QuotaVerdict> => {
    const withStart = start && !started;
    const of = (await groups())
      .map((g) => ({ ...g, turnRules: withStart ? limits(g.rules, TURNS) : [], rules: call ? limits(g.rules, SPEND) : [] }))
      .filter((g) => g.turnRules.length > 0 || g.rules.length > 0);
    const answers = await Promise.all(
      of.map(async (g) => {
        const object = quotaObject(env, g.name);
        try {
          if (!call || g.rules.length === 0) return { g, start: await object.begin(turnId, g.turnRules, over), call: OK };
          if (g.turnRules.length === 0) return { g, start: OK, call: await object.reserve(call.id, turnId, g.rules, call.spend, over) };
          const both = await object.admit(turnId, g.turnRules, { id: call.id, rules: g.rules, spend: call.spend }, over);
          return { g, start: both.start, call: both.call ?? both.start };
        } catch (err) {
          const held = [...g.turnRules, ...g.rules].filter((r) => !over.includes(r.id));
          if (held.length === 0) logged(err);
          const verdict = held.length === 0 ? OK : unavailable(held, err);
          return { g, start: verdict, call: verdict };
        }
      }),
    );
    const refusedStart = answers.find((a) => !a.start.ok)?.start;
    const refusedCall = answers.find((a) => !a.call.ok)?.call;
    for (const a of refusedStart || refusedCall ? answers : []) {
      const object = quotaObject(env, a.g.name);
      if (refusedStart && a.start.ok && a.g.turnRules.length > 0) void object.end(turnId, a.g.turnRules, true).catch(logged);
      if (call && a.call.ok && a.g.rules.length > 0) void object.settle(call.id, a.g.rules, null, a.g.subject).catch(logged);
    }
    if (refusedStart) return refusedStart;
    if (withStart) started = true;
    if (refusedCall) return refusedCall;
    if (call)
      reserved.set(
        call.id,
        of.filter((g) => g.rules.length > 0),
      );
    return OK;
  };

  return {
    async applies() {
      const all = (await groups()).flatMap((g) => g.rules);
      if (all.length === 0) return null;
      return { spend: limits(all, SPEND).length > 0, turns: limits(all, TURNS).length > 0 };
    },
    begin: (over = []) => admit(true, null, over),
    async reserve(id, most, { over = [], start = false } = {}) {
      const spendRules = (await groups()).flatMap((g) => limits(g.rules, SPEND));
      const unpriced = most.usd === null ? spendRules.find((r) => r.limits.usd !== undefined) : undefined;
      if (unpriced) {
        const message = `Quota '${unpriced.id}' limits spend in USD, and a model of this call has no known price (set MODEL_PRICES): the call is not made`;
        return { ok: false, quota_id: unpriced.id, action: "refuse", code: "quota_exceeded", message, retry_at: null };
      }
      return admit(start, { id, spend: { ...most, usd: most.usd ?? 0 } }, over);
    },
    settle(id, actual: QuotaSpend | null) {
      const of = reserved.get(id) ?? [];
      reserved.delete(id);
      settleOn(of, id, actual);
    },
    settleCut(id, actual) {
      // The executor that reserved is gone with its map: the objects are those of the quotas that apply now.
      void groups()
        .then((all) =>
          settleOn(
            all.map((g) => ({ ...g, rules: limits(g.rules, SPEND) })).filter((g) => g.rules.length > 0),
            id,
            actual,
          ),
        )
        .catch(logged);
    },
    continued: () => continuedOf(s.sql, turnId),
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
        const look = setInterval(() => continuedOf(s.sql, turnId) !== null && done(), CONTINUE_LOOK_MS);
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
