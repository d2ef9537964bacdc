// A run's numbers from its cases: per scorer the mean score and pass rate; two runs compared case by case.
import type { Aggregate, Comparison, EvalCase } from "../../protocol/evals";

export function aggregates(cases: readonly Pick<EvalCase, "scores">[]): Record<string, Aggregate> {
  const by = new Map<string, { sum: number; passed: number; count: number }>();
  for (const c of cases)
    for (const s of c.scores) {
      const a = by.get(s.scorer) ?? { sum: 0, passed: 0, count: 0 };
      a.sum += s.score;
      a.passed += s.pass ? 1 : 0;
      a.count += 1;
      by.set(s.scorer, a);
    }
  return Object.fromEntries([...by].map(([k, a]) => [k, { mean: round(a.sum / a.count), pass_rate: round(a.passed / a.count), count: a.count }]));
}

/** Cost summed over cases (null when any is unknown), and mean latency. */
export function totals(cases: readonly Pick<EvalCase, "cost_usd" | "latency_ms">[]): { cost_usd: number | null; mean_latency_ms: number | null } {
  let cost: number | null = 0;
  for (const c of cases) cost = cost === null || c.cost_usd === null || c.cost_usd === undefined ? null : cost + c.cost_usd;
  const latencies = cases.flatMap((c) => (c.latency_ms === undefined ? [] : [c.latency_ms]));
  return {
    cost_usd: cost === null ? null : round(cost, 9),
    mean_latency_ms: latencies.length ? round(latencies.reduce((x, y) => x + y, 0) / latencies.length, 1) : null,
  };
}

const round = (n: number, digits = 4) => Math.round(n * 10 ** digits) / 10 ** digits;
const ratio = (b: number | null, a: number | null) => (a === null || b === null || a === 0 ? null : round(b / a));

/** b against a over the cases both finished (by dataset index): per scorer wins, losses and ties of b's score. */
export function compareRuns(ids: { a: string; b: string }, a: readonly EvalCase[], b: readonly EvalCase[]): Comparison {
  const done = (cs: readonly EvalCase[]) => new Map(cs.filter((c) => c.status === "done").map((c) => [c.index, c]));
  const da = done(a);
  const db = done(b);
  const shared = [...da.keys()].filter((i) => db.has(i));
  const scorers: Comparison["scorers"] = {};
  for (const i of shared) {
    const ca = da.get(i)!;
    const cb = db.get(i)!;
    for (const sa of ca.scores) {
      const sb = cb.scores.find((s) => s.scorer === sa.scorer);
      if (!sb) continue;
      const t = (scorers[sa.scorer] ??= { win: 0, lose: 0, tie: 0, a_mean: 0, b_mean: 0 });
      if (sb.score > sa.score) t.win++;
      else if (sb.score < sa.score) t.lose++;
      else t.tie++;
      t.a_mean += sa.score;
      t.b_mean += sb.score;
    }
  }
  for (const t of Object.values(scorers)) {
    const n = t.win + t.lose + t.tie;
    t.a_mean = round(t.a_mean / n);
    t.b_mean = round(t.b_mean / n);
  }
  const pick = (m: Map<number, EvalCase>) => shared.map((i) => m.get(i)!);
  const ta = totals(pick(da));
  const tb = totals(pick(db));
  return {
    ...ids,
    shared_cases: shared.length,
    scorers,
    cost_ratio: ratio(tb.cost_usd, ta.cost_usd),
    latency_ratio: ratio(tb.mean_latency_ms, ta.mean_latency_ms),
  };
}
