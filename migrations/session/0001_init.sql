-- Session object schema, version 1.
-- The event log is the source of truth; every other table is working state or a cache of a fold.
CREATE TABLE events (
  sequence INTEGER PRIMARY KEY,          -- gapless per session, starting at 1
  event_id TEXT NOT NULL UNIQUE,
  type TEXT NOT NULL,
  turn_id TEXT,
  body TEXT NOT NULL                     -- the serialized envelope, sent as-is to every channel
);
CREATE INDEX events_turn ON events (turn_id, sequence);

CREATE TABLE session (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  session_id TEXT NOT NULL,
  thread_id TEXT NOT NULL,
  agent TEXT NOT NULL,                   -- the AgentConfig (JSON) the session runs
  metadata TEXT NOT NULL,
  created_at INTEGER NOT NULL
);

CREATE TABLE turns (
  turn_id TEXT PRIMARY KEY,
  position INTEGER NOT NULL,             -- queue order; lower runs first
  status TEXT NOT NULL,                  -- queued | running | completed | failed | cancelled
  input TEXT NOT NULL,
  idempotency_key TEXT UNIQUE,
  created_at INTEGER NOT NULL
);
CREATE INDEX turns_status ON turns (status, position);

CREATE TABLE turn_state (                -- the checkpoint of the running turn (at most one row)
  turn_id TEXT PRIMARY KEY,
  state TEXT NOT NULL
);

CREATE TABLE messages (                  -- the thread history as model messages, for later turns
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  turn_id TEXT NOT NULL,
  message TEXT NOT NULL
);

CREATE TABLE channels (                  -- remote channels and their last acked sequence
  channel_id TEXT PRIMARY KEY,
  acked_sequence INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);

CREATE TABLE schedule (                  -- everything the single alarm multiplexes
  kind TEXT PRIMARY KEY,
  due_at INTEGER NOT NULL
);

CREATE TABLE snapshot (                  -- the folded read model at a sequence, so a cold start replays only the tail
  id INTEGER PRIMARY KEY CHECK (id = 1),
  sequence INTEGER NOT NULL,
  body TEXT NOT NULL
);
