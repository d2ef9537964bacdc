// The deployment's leases of eval cases in flight, a table of the registry object (one object, so a count and
// its grant are one step): a run takes a lease before it opens a case's session and gives it back when the case
// ends, so the cases of all runs in flight never exceed EVAL_MAX_CONCURRENT_CASES and live traffic keeps the rest.
// Free leases are shared round-robin between the runs that wait: each goes to the waiting run holding the
// fewest (the longest waiting first among equals), so a run that asks again the moment its case ended does not
// take back every lease while another run waits. A lease kept for another run stays free until that run asks:
// the registry tells it to at once (`wakeable`, then the run object's wake() through the EVAL_RUNS binding), and a
// run that waits asks again at its watchdog alarm anyway, should a wake be lost.
import { positiveSetting } from "../../env";

/** A run that has not asked again within this long no longer waits (its object is gone or busy elsewhere). */
const WAIT_TTL_MS = 20_000;
const DEFAULT_MAX_CASES = 8;

/** EVAL_MAX_CONCURRENT_CASES: eval cases in flight across all runs of the deployment (default 8). */
export function maxConcurrentCases(env: { EVAL_MAX_CONCURRENT_CASES?: string }): number {
  return positiveSetting(env.EVAL_MAX_CONCURRENT_CASES, DEFAULT_MAX_CASES);
}

interface Claim {
  run_id: string;
  held: number;
  wants: number;
  since: number;
}

/**
 * How many of `free` leases go to `me` when they are dealt one at a time to the claim that wants more and holds
 * the fewest (the longest waiting first; `me` first among equals only when it has waited longest).
 */
export function fairShare(free: number, me: Claim, others: Claim[]): number {
  return deal(free, [me, ...others])[0]!;
}

/** The leases each claim gets when `free` are dealt one at a time as fairShare says, in the claims' order. */
function deal(free: number, list: Claim[]): number[] {
  const claims = list.map((c) => ({ ...c }));
  const got = claims.map(() => 0);
  for (let i = 0; i < free; i++) {
    const next = claims.filter((c) => c.wants > 0).sort((a, b) => a.held - b.held || a.since - b.since)[0];
    if (!next) break;
    next.held++;
    next.wants--;
    got[claims.indexOf(next)]!++;
  }
  return got;
}

export class EvalLeases {
  constructor(private readonly sql: SqlStorage) {}

  /**
   * Grants the cases of `idxs` (in order) a lease each, of those the deployment has free under `cap`, as many as
   * the run's fair share among the runs that wait; a case that already holds one (a run restarted between the
   * grant and recording it) keeps it. A run granted fewer than it asked for waits. Answers the granted cases.
   */
  acquire(runId: string, idxs: number[], cap: number, now: number): number[] {
    this.sql.exec("DELETE FROM eval_lease_waits WHERE seen_at < ?", now - WAIT_TTL_MS);
    const held = new Set(
      this.sql
        .exec<{ idx: number }>("SELECT idx FROM eval_leases WHERE run_id = ?", runId)
        .toArray()
        .map((r) => r.idx),
    );
    const fresh = idxs.filter((idx) => !held.has(idx));
    const { counts, total, waits } = this.claims();
    const since = waits.find((w) => w.run_id === runId)?.since ?? now;
    const others = waits.filter((w) => w.run_id !== runId).map((w) => ({ ...w, held: counts.get(w.run_id) ?? 0 }));
    const share = fairShare(Math.max(0, cap - total), { run_id: runId, held: counts.get(runId) ?? 0, wants: fresh.length, since }, others);
    const granted = fresh.slice(0, share);
    for (const idx of granted) this.sql.exec("INSERT INTO eval_leases (run_id, idx, acquired_at) VALUES (?, ?, ?)", runId, idx, now);
    if (granted.length < fresh.length) {
      this.sql.exec(
        "INSERT OR REPLACE INTO eval_lease_waits (run_id, wants, since, seen_at) VALUES (?, ?, ?, ?)",
        runId,
        fresh.length - granted.length,
        since,
        now,
      );
    } else {
      this.sql.exec("DELETE FROM eval_lease_waits WHERE run_id = ?", runId);
    }
    return idxs.filter((idx) => held.has(idx) || granted.includes(idx));
  }

  /**
   * The waiting runs (but `except`, which asks again by itself) that free leases under `cap` would go to now, as
   * acquire deals them: told to ask at once, they need not wait for their next poll.
   */
  wakeable(cap: number, except: string, now: number): string[] {
    const { counts, total, waits } = this.claims();
    const claims = waits.filter((w) => w.seen_at >= now - WAIT_TTL_MS).map((w) => ({ ...w, held: counts.get(w.run_id) ?? 0 }));
    const got = deal(Math.max(0, cap - total), claims);
    return claims.filter((c, i) => got[i]! > 0 && c.run_id !== except).map((c) => c.run_id);
  }

  /** The leases held by run, their total, and the runs that wait. */
  private claims() {
    const counts = new Map(
      this.sql
        .exec<{ run_id: string; n: number }>("SELECT run_id, COUNT(*) AS n FROM eval_leases GROUP BY run_id")
        .toArray()
        .map((r) => [r.run_id, r.n]),
    );
    const total = [...counts.values()].reduce((a, b) => a + b, 0);
    const waits = this.sql.exec<Omit<Claim, "held"> & { seen_at: number }>("SELECT run_id, wants, since, seen_at FROM eval_lease_waits").toArray();
    return { counts, total, waits };
  }

  /** Gives back case `idx`'s lease, or every lease of the run (it finished or was cancelled: it waits no more). */
  release(runId: string, idx?: number): void {
    if (idx !== undefined) {
      this.sql.exec("DELETE FROM eval_leases WHERE run_id = ? AND idx = ?", runId, idx);
      return;
    }
    this.sql.exec("DELETE FROM eval_leases WHERE run_id = ?", runId);
    this.sql.exec("DELETE FROM eval_lease_waits WHERE run_id = ?", runId);
  }
}
