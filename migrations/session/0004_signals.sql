-- Second cut of the session core. Live messages wait in an inbox, one row each, until the loop takes them
-- (no row grows with the number of messages); approvals keep the envelope of their call, so a decision is
-- recorded without reading the running turn's state; orchestration depth is the runtime's own column,
-- not part of the user's metadata; sessions record their owner.
CREATE TABLE inbox (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,   -- inbox order; a turn's checkpoint records the last one it took
  turn_id TEXT NOT NULL,
  message_id TEXT NOT NULL,
  content TEXT NOT NULL,
  created_at INTEGER NOT NULL
);
CREATE INDEX inbox_turn ON inbox (turn_id, seq);

ALTER TABLE actions ADD COLUMN parent_id TEXT;
ALTER TABLE actions ADD COLUMN depth INTEGER NOT NULL DEFAULT 0;
ALTER TABLE actions ADD COLUMN subagent_id TEXT;

ALTER TABLE session ADD COLUMN orchestration_depth INTEGER NOT NULL DEFAULT 0;
-- Who opened the session: a browser token's subject, or what the key's caller named (null otherwise).
ALTER TABLE session ADD COLUMN owner TEXT;

-- The trace each turn's events join (W3C trace context; see src/engine/trace.ts).
ALTER TABLE turns ADD COLUMN trace_id TEXT;
ALTER TABLE turns ADD COLUMN trace_parent TEXT;
UPDATE session SET orchestration_depth = coalesce(json_extract(metadata, '$.orchestration_depth'), 0);
