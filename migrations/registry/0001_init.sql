-- Agent registry schema, version 1.
CREATE TABLE agents (
  name TEXT PRIMARY KEY,
  config TEXT NOT NULL,                  -- the validated AgentConfig with defaults filled in (JSON)
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);
