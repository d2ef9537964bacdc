-- A replay session (POST /v1/sessions/:sid/turns/:turn_id/replay): the recorded turn it runs again. `recording`
-- is JSON {calls, results} read from the source's events when the replay was made; `original` is JSON, the
-- source turn's side of the comparison. The replay's own turn is the session's turn submitted with the
-- idempotency key "replay".
CREATE TABLE replay (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  source_session TEXT NOT NULL,
  source_turn_id TEXT NOT NULL,
  tools TEXT NOT NULL,               -- recorded | live
  recording TEXT NOT NULL,
  original TEXT NOT NULL
);
