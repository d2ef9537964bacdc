// The deployment's leases of eval cases in flight, a table of the registry object (one object, so a count and
// its grant are one step): a run takes a lease before it opens a case's session and gives it back when the case
// ends, so the cases of all runs in flight never exceed EVAL_MAX_CONCURRENT_CASES and live traffic keeps the rest.

export class EvalLeases {
  constructor(private readonly sql: SqlStorage) {}

  /**
   * Grants the cases of `idxs` (in order) a lease each while the deployment holds fewer than `cap`; a case that
   * already holds one (a run restarted between the grant and recording it) keeps it. Answers the granted cases.
   */
  acquire(runId: string, idxs: number[], cap: number, now: number): number[] {
    const held = new Set(
      this.sql
        .exec<{ idx: number }>("SELECT idx FROM eval_leases WHERE run_id = ?", runId)
        .toArray()
        .map((r) => r.idx),
    );
    let total = this.sql.exec<{ n: number }>("SELECT COUNT(*) AS n FROM eval_leases").one().n;
    const granted: number[] = [];
    for (const idx of idxs) {
      if (held.has(idx)) granted.push(idx);
      else if (total < cap) {
        this.sql.exec("INSERT INTO eval_leases (run_id, idx, acquired_at) VALUES (?, ?, ?)", runId, idx, now);
        granted.push(idx);
        total++;
      }
    }
    return granted;
  }

  /** Gives back case `idx`'s lease, or every lease of the run (it finished or was cancelled). */
  release(runId: string, idx?: number): void {
    if (idx === undefined) this.sql.exec("DELETE FROM eval_leases WHERE run_id = ?", runId);
    else this.sql.exec("DELETE FROM eval_leases WHERE run_id = ? AND idx = ?", runId, idx);
  }
}
