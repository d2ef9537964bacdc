-- A turn's files and busy settings in its row, where the runner and the queue read them (they were read back
-- from its turn.submitted event). Turns stored before take theirs from that event.
ALTER TABLE turns ADD COLUMN files TEXT;          -- JSON array of FileRef, or NULL
ALTER TABLE turns ADD COLUMN on_busy TEXT;        -- set with debounce_ms only: how messages join its window
ALTER TABLE turns ADD COLUMN debounce_ms INTEGER;
UPDATE turns SET
  files = (SELECT json_extract(e.body, '$.payload.files') FROM events e WHERE e.turn_id = turns.turn_id AND e.type = 'turn.submitted'),
  on_busy = (SELECT json_extract(e.body, '$.payload.on_busy') FROM events e WHERE e.turn_id = turns.turn_id AND e.type = 'turn.submitted'),
  debounce_ms = (SELECT json_extract(e.body, '$.payload.debounce_ms') FROM events e WHERE e.turn_id = turns.turn_id AND e.type = 'turn.submitted');
