-- The bytes of each session's files in R2, for GET /v1/sessions and GET /v1/usage.
ALTER TABLE session_index ADD COLUMN stored_bytes INTEGER NOT NULL DEFAULT 0;
