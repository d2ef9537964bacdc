-- The running turn's conversation, one row per message, appended as the turn goes: a checkpoint writes
-- only what is new instead of rewriting the whole conversation (and no single row grows with the turn).
CREATE TABLE turn_messages (
  turn_id TEXT NOT NULL,
  idx INTEGER NOT NULL,
  message TEXT NOT NULL,
  PRIMARY KEY (turn_id, idx)
);
