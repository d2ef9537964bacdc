-- Eval runs listed newest first; the deployment's leases of eval cases in flight (EVAL_MAX_CONCURRENT_CASES,
-- one row a running case of a run); and online scores aggregated per agent version and scorer.
CREATE INDEX eval_runs_by_created ON eval_runs (created_at, id);
CREATE TABLE eval_leases (
  run_id TEXT NOT NULL,
  idx INTEGER NOT NULL,
  acquired_at INTEGER NOT NULL,
  PRIMARY KEY (run_id, idx)
);
CREATE TABLE version_scores (
  agent TEXT NOT NULL,
  version INTEGER NOT NULL,
  scorer TEXT NOT NULL,
  count INTEGER NOT NULL,
  score_sum REAL NOT NULL,
  passed INTEGER NOT NULL,
  last_at INTEGER NOT NULL,
  PRIMARY KEY (agent, version, scorer)
);
