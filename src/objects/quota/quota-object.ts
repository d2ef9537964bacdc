// One quota subject's object (docs/guides/quotas.md): `deployment:`, `key:<key id>`, `subject:<end user>`,
// `resource:<id>` or `agent:<name>`, holding the counts of every quota that applies to that subject. Sessions
// ask it before each turn (turns, concurrent_turns) and each model call (a reservation of the call's most
// cost and tokens; a turn's first call asks both at once, admit), and settle after; the quota definitions come with each request, from the sessions'
// cache, so no deployment-wide object is asked on the way.
import { DurableObject } from "cloudflare:workers";
import type { Env } from "../../env";
import type { QuotaAmounts, QuotaDimension, QuotaRule, QuotaUsage, QuotaVerdict, QuotaWarning } from "../../protocol/quotas";
import { migrate, QUOTA_MIGRATIONS } from "../migrate";
import { QuotaLedger, type Spend } from "./quota-ledger";
import { windowAt } from "./quota-windows";

/** The object of one quota subject. */
export function quotaObject(env: Pick<Env, "QUOTAS">, name: string) {
  return env.QUOTAS.get(env.QUOTAS.idFromName(name));
}

const TURN_DIMENSIONS: QuotaDimension[] = ["turns", "concurrent_turns"];
const UNITS: Record<QuotaDimension, string> = {
  usd: "USD",
  input_tokens: "input tokens",
  output_tokens: "output tokens",
  turns: "turns",
  concurrent_turns: "running turns",
};

export class QuotaObject extends DurableObject<Env> {
  private readonly ledger: QuotaLedger;
  /** Test hooks: a clock offset (a window rolling over without waiting), and failing every request. */
  private skewMs = 0;
  private failing = false;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.ledger = new QuotaLedger(ctx.storage.sql);
    ctx.blockConcurrencyWhile(async () => migrate(ctx.storage, QUOTA_MIGRATIONS));
  }

  /**
   * Counts a turn's start against `rules`' turns and concurrent_turns; idempotent per turn (a resumed turn counts
   * once). `over`: the quotas a principal continued the turn past, counted whatever their limits (the others are checked).
   */
  async begin(turnId: string, rules: QuotaRule[], over: readonly string[] = []): Promise<QuotaVerdict> {
    const now = this.open(rules);
    const counted = rules.filter((r) => TURN_DIMENSIONS.some((d) => r.limits[d] !== undefined));
    this.ledger.seen(turnId, now);
    for (const rule of counted) {
      if (over.includes(rule.id)) continue;
      if (this.leaseOf(rule.id, turnId)) continue;
      const refusal = this.refusal(rule, { turns: 1, concurrent_turns: 1 }, now);
      if (refusal) return refusal;
    }
    for (const rule of counted) this.ledger.begin(rule, turnId, now);
    return { ok: true };
  }

  /** Reserves a model call's most (its spend) against every rule; none is taken when one not in `over` (as for begin) would be crossed. Idempotent per id. */
  async reserve(id: string, turnId: string, rules: QuotaRule[], spend: Spend, over: readonly string[] = []): Promise<QuotaVerdict> {
    const now = this.open(rules);
    this.ledger.seen(turnId, now);
    for (const rule of rules) {
      if (over.includes(rule.id)) continue;
      const refusal = this.refusal(rule, spend, now);
      if (refusal) return refusal;
    }
    for (const rule of rules) this.ledger.reserve(id, turnId, rule, spend, now);
    return { ok: true };
  }

  /**
   * A turn's first model call: counts the turn's start against `turnRules` (as begin) and, when that has room,
   * reserves the call against `spendRules` (as reserve), in one request and one commit. `start` is the verdict
   * on the turn's start; `call` the reservation's (null when the start was refused and nothing was reserved).
   */
  async admit(
    turnId: string,
    turnRules: QuotaRule[],
    call: { id: string; rules: QuotaRule[]; spend: Spend },
    over: readonly string[] = [],
  ): Promise<{ start: QuotaVerdict; call: QuotaVerdict | null }> {
    const start = await this.begin(turnId, turnRules, over);
    if (!start.ok) return { start, call: null };
    return { start, call: await this.reserve(call.id, turnId, call.rules, call.spend, over) };
  }

  /** Replaces reservation `id` by the call's actual spend (null: it is given back); answers the thresholds crossed. */
  async settle(id: string, rules: QuotaRule[], actual: Spend | null, subject: string): Promise<QuotaWarning[]> {
    const now = this.open(rules);
    this.ledger.settle(id, rules, actual, now);
    return rules.flatMap((rule) => this.ledger.warnings(rule, now).map((w) => ({ quota_id: rule.id, subject, ...w })));
  }

  /** The turn ended (`refund`: it was refused before it ran, so it does not count). */
  async end(turnId: string, rules: QuotaRule[], refund = false): Promise<void> {
    const now = this.open(rules);
    this.ledger.end(turnId, rules, refund, now);
  }

  /** `rules`' usage and what remains, now. */
  async usage(rules: QuotaRule[], subject: string): Promise<QuotaUsage[]> {
    const now = this.open(rules);
    return rules.map((rule) => {
      const { oldest, ...used } = this.ledger.used(rule, now);
      const span = windowAt(rule.window, now, oldest);
      const remaining: QuotaAmounts = {};
      for (const [d, limit] of Object.entries(rule.limits) as [QuotaDimension, number | undefined][]) {
        if (limit !== undefined) remaining[d] = Math.max(0, limit - used[d]);
      }
      const shown = Object.fromEntries(Object.keys(rule.limits).map((d) => [d, used[d as QuotaDimension]]));
      return { subject, window_start: span.start, window_end: span.end, used: shown, remaining };
    });
  }

  /** Test hook: moves this object's clock by `ms` (a window rolls over at once). */
  async skew(ms: number): Promise<void> {
    this.hook();
    this.skewMs += ms;
  }

  /** Test hook: every request fails while `on` (the object is unreachable). */
  async fail(on: boolean): Promise<void> {
    this.hook();
    this.failing = on;
  }

  /** Test hook (the benchmark): `n` reservations made and settled inside one request, so timing it from outside leaves out the RPCs. */
  async churn(n: number, rules: QuotaRule[], spend: Spend): Promise<number> {
    this.hook();
    let made = 0;
    for (let i = 0; i < n; i++) {
      if ((await this.reserve(`churn_${i}`, "churn", rules, spend)).ok) made++;
      await this.settle(`churn_${i}`, rules, spend, "churn");
    }
    return made;
  }

  private hook(): void {
    if (this.env.TEST_HOOKS !== "1") throw new Error("test hooks are off");
  }

  /** The object's clock for a request, after expiring stale reservations and pruning buckets no window counts. */
  private open(rules: QuotaRule[]): number {
    if (this.failing) throw new Error("the quota object is failing (test hook)");
    const now = Date.now() + this.skewMs;
    this.ledger.expire(rules, now);
    this.ledger.prune(rules, now);
    return now;
  }

  private leaseOf(quotaId: string, turnId: string): boolean {
    return this.ctx.storage.sql.exec("SELECT 1 FROM turn_leases WHERE quota_id = ? AND turn_id = ?", quotaId, turnId).toArray().length > 0;
  }

  private refusal(rule: QuotaRule, more: QuotaAmounts, now: number): QuotaVerdict | null {
    const crossed = this.ledger.crossed(rule, more, now);
    if (!crossed) return null;
    const { dimension, limit, used, requested } = crossed;
    const unit = UNITS[dimension];
    const fmt = (n: number) => (dimension === "usd" ? n.toFixed(6).replace(/\.?0+$/, "") : String(n));
    const retry_at = dimension === "concurrent_turns" ? null : windowAt(rule.window, now, this.ledger.used(rule, now).oldest).end;
    return {
      ok: false,
      quota_id: rule.id,
      action: rule.action,
      code: "quota_exceeded",
      message: `Quota '${rule.id}' would be exceeded: ${fmt(used)} of ${fmt(limit)} ${unit} used in its window, and this needs ${fmt(requested)} more`,
      retry_at,
    };
  }
}
