-- Outbound subscriptions (POST /v1/sessions/:sid/subscriptions): each reads the event log from its own
-- cursor. `batch_id`/`batch_end` name the batch being sent, written before the request goes out, so a crash
-- between sending and advancing the cursor resends the same batch under the same id.
CREATE TABLE subscriptions (
  subscription_id TEXT PRIMARY KEY,
  url TEXT NOT NULL,
  types TEXT,                        -- JSON array of event types, null for all
  secret TEXT NOT NULL,
  format TEXT NOT NULL,              -- events | otlp
  cursor INTEGER NOT NULL,           -- the last sequence delivered (or passed over as not matching)
  status TEXT NOT NULL,              -- active | failing | disabled
  attempts INTEGER NOT NULL DEFAULT 0,
  last_error TEXT,
  next_attempt_at INTEGER NOT NULL DEFAULT 0,
  batch_id TEXT,
  batch_end INTEGER,
  created_at INTEGER NOT NULL
);
