-- The deployment's index of sessions (GET /v1/sessions) and their usage per UTC day (GET /v1/usage). Each
-- session object writes its own rows (upserts of what it holds, so a retried write converges); an erased
-- session's row goes, its usage rows lose the session id and owner, and a tombstone keeps the id from reuse.
CREATE TABLE session_index (
  session_id TEXT PRIMARY KEY,
  agent TEXT NOT NULL,
  owner TEXT,
  metadata TEXT NOT NULL,               -- JSON object
  created_at INTEGER NOT NULL,
  last_activity INTEGER NOT NULL,
  status TEXT NOT NULL,
  turns INTEGER NOT NULL,
  input_tokens INTEGER NOT NULL,
  output_tokens INTEGER NOT NULL,
  cost_usd REAL NOT NULL,
  unpriced_model_calls INTEGER NOT NULL,
  log_events INTEGER NOT NULL
);
CREATE INDEX session_index_created ON session_index (created_at DESC, session_id DESC);
CREATE INDEX session_index_agent ON session_index (agent, created_at DESC, session_id DESC);
CREATE INDEX session_index_owner ON session_index (owner, created_at DESC, session_id DESC);

CREATE TABLE usage_days (
  session_id TEXT NOT NULL,
  day TEXT NOT NULL,                    -- YYYY-MM-DD (UTC)
  agent TEXT NOT NULL,
  owner TEXT,
  turns INTEGER NOT NULL,
  failures INTEGER NOT NULL,
  model_calls INTEGER NOT NULL,
  tool_calls INTEGER NOT NULL,
  input_tokens INTEGER NOT NULL,
  output_tokens INTEGER NOT NULL,
  cost_usd REAL NOT NULL,
  unpriced_model_calls INTEGER NOT NULL,
  PRIMARY KEY (session_id, day)
);
CREATE INDEX usage_days_day ON usage_days (day);

CREATE TABLE erased_sessions (
  session_id TEXT PRIMARY KEY,
  erased_at INTEGER NOT NULL
);
