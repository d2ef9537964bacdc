-- The session's files as the one writer of them keeps them (file-ledger.ts): a row per file with its R2 key and
-- description, reserved (stored = 0) before its bytes go to R2, so the session's byte and file counts are a
-- query, never an R2 listing. A fork's rows name its source's keys until its own copies are made.
CREATE TABLE files (
  file_id TEXT PRIMARY KEY,
  r2_key TEXT NOT NULL,
  media_type TEXT NOT NULL,
  size INTEGER NOT NULL,
  sha256 TEXT NOT NULL,
  filename TEXT,
  created_at INTEGER NOT NULL,
  stored INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX files_by_time ON files (created_at, file_id);
-- A session from before this table has its files read once from R2 into it; a new session deletes this row.
CREATE TABLE files_backfill (pending INTEGER NOT NULL);
INSERT INTO files_backfill (pending) VALUES (1);
