-- The sessions made from this one (its forks and replays), registered before each is created so that erasing
-- this session finds every one that may exist and erases it too.
CREATE TABLE derived_sessions (
  session_id TEXT PRIMARY KEY,
  kind TEXT NOT NULL,                -- fork | replay
  created_at INTEGER NOT NULL
);
