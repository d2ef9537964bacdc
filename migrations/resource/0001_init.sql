-- One resource's memory (ResourceMemoryObject): its working memory documents (one per scope: "" for the
-- resource, an agent's name for an agent-scoped one), every version of them, the sessions opened for it, and
-- the recall index of its ended turns (FTS5, ranked by bm25).
CREATE TABLE working_memory (
  scope TEXT PRIMARY KEY,
  document TEXT NOT NULL,
  version INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);
CREATE TABLE working_versions (
  scope TEXT NOT NULL,
  version INTEGER NOT NULL,
  patch TEXT NOT NULL,
  document TEXT NOT NULL,
  at INTEGER NOT NULL,
  PRIMARY KEY (scope, version)
);
CREATE TABLE resource_sessions (
  session_id TEXT PRIMARY KEY,
  created_at INTEGER NOT NULL
);
-- One row per indexed message; `id` is "<turn_id>:<role>", so a retried index write replaces, never doubles.
CREATE TABLE recall_entries (
  rowid INTEGER PRIMARY KEY,
  id TEXT NOT NULL UNIQUE,
  session_id TEXT NOT NULL,
  turn_id TEXT NOT NULL,
  role TEXT NOT NULL,
  at INTEGER NOT NULL,
  text TEXT NOT NULL
);
CREATE INDEX recall_entries_session ON recall_entries (session_id);
CREATE VIRTUAL TABLE recall_fts USING fts5 (text, content = 'recall_entries', content_rowid = 'rowid');
CREATE TRIGGER recall_entries_ai AFTER INSERT ON recall_entries BEGIN
  INSERT INTO recall_fts (rowid, text) VALUES (new.rowid, new.text);
END;
CREATE TRIGGER recall_entries_ad AFTER DELETE ON recall_entries BEGIN
  INSERT INTO recall_fts (recall_fts, rowid, text) VALUES ('delete', old.rowid, old.text);
END;
