-- Scheduled turns (POST /v1/sessions/:sid/schedules). `spec` is the JSON of one of {at}, {every_s},
-- {cron, timezone}; `next_run_at` is when it is due next. The session's one alarm wakes for the earliest
-- through the `schedule` table's "schedules" entry.
CREATE TABLE schedules (
  schedule_id TEXT PRIMARY KEY,
  input TEXT NOT NULL,
  spec TEXT NOT NULL,
  idempotency_key TEXT UNIQUE,
  next_run_at INTEGER NOT NULL,
  created_at INTEGER NOT NULL
);
CREATE INDEX schedules_due ON schedules (next_run_at);
