-- Tool governance: the session's policy, durable approval records, and the per-session memory.
ALTER TABLE session ADD COLUMN policy TEXT NOT NULL DEFAULT '{}';

CREATE TABLE actions (                   -- one row per approval request; never deleted (a second decision is a 409)
  action_id TEXT PRIMARY KEY,
  turn_id TEXT NOT NULL,
  tool_call_id TEXT NOT NULL,
  tool_name TEXT NOT NULL,
  status TEXT NOT NULL,                  -- pending | approved | rejected | timed_out
  expires_at INTEGER NOT NULL,
  decided_by TEXT,
  decided_at INTEGER,
  reason TEXT
);

CREATE TABLE memory (                    -- the memory_* tools' key-value store
  key TEXT PRIMARY KEY,
  value TEXT NOT NULL,
  updated_at INTEGER NOT NULL
);
