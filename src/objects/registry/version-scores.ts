// Online scores aggregated per agent version and scorer, a table of the registry object: each eval.scored a
// session records adds to its row (sent off the turn's path), so a version's scores are one read, not a scan of logs.
import type { Aggregate } from "../../protocol/evals";

export interface ScoreNotice {
  agent: string;
  version: number;
  scorer: string;
  score: number;
  pass: boolean;
}

export class VersionScores {
  constructor(private readonly sql: SqlStorage) {}

  add(s: ScoreNotice, now: number): void {
    this.sql.exec(
      `INSERT INTO version_scores (agent, version, scorer, count, score_sum, passed, last_at) VALUES (?, ?, ?, 1, ?, ?, ?)
       ON CONFLICT (agent, version, scorer) DO UPDATE SET count = count + 1, score_sum = score_sum + excluded.score_sum,
         passed = passed + excluded.passed, last_at = excluded.last_at`,
      s.agent,
      s.version,
      s.scorer,
      s.score,
      s.pass ? 1 : 0,
      now,
    );
  }

  /** Per scorer: how many turns were scored, the mean score and the pass rate; and when the last score came. */
  of(agent: string, version: number): { scorers: Record<string, Aggregate>; last_scored_at: number | null } {
    const rows = this.sql
      .exec<{ scorer: string; count: number; score_sum: number; passed: number; last_at: number }>(
        "SELECT scorer, count, score_sum, passed, last_at FROM version_scores WHERE agent = ? AND version = ? ORDER BY scorer",
        agent,
        version,
      )
      .toArray();
    const round = (n: number) => Math.round(n * 10_000) / 10_000;
    return {
      scorers: Object.fromEntries(rows.map((r) => [r.scorer, { mean: round(r.score_sum / r.count), pass_rate: round(r.passed / r.count), count: r.count }])),
      last_scored_at: rows.length ? Math.max(...rows.map((r) => r.last_at)) : null,
    };
  }
}
