-- Eval runs waiting for leases of cases in flight (EVAL_MAX_CONCURRENT_CASES): a free lease goes to the run that
-- waits and holds the fewest, so one big run does not take every lease while another waits (eval-leases.ts).
CREATE TABLE eval_lease_waits (
  run_id TEXT PRIMARY KEY,
  wants INTEGER NOT NULL,
  since INTEGER NOT NULL,
  seen_at INTEGER NOT NULL
);
