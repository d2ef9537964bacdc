-- A cancelled run (POST /v1/evals/:id/cancel) keeps when it was cancelled; finished_at is set with it.
ALTER TABLE run ADD COLUMN cancelled_at INTEGER;
