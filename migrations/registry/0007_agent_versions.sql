-- Agent versions (docs/guides/versions-and-evals.md): every change of an agent's config is an immutable
-- version; labels point at versions and traffic splits new sessions between labels. The agents stored before
-- become their version 1 (their hash is computed when the registry starts: SQL has no HMAC).
CREATE TABLE agent_versions (
  name TEXT NOT NULL,
  version INTEGER NOT NULL,
  config TEXT NOT NULL,                  -- the validated AgentConfig (JSON), as the agents row held it
  content_hash TEXT,                     -- keyed SHA-256 of the canonical config; NULL until computed
  created_at INTEGER NOT NULL,
  created_by TEXT,                       -- the principal's id (NULL: stored before versions)
  PRIMARY KEY (name, version)
);
INSERT INTO agent_versions (name, version, config, content_hash, created_at, created_by)
  SELECT name, 1, config, NULL, updated_at, NULL FROM agents;

CREATE TABLE agent_labels (
  name TEXT NOT NULL,
  label TEXT NOT NULL,
  version INTEGER NOT NULL,
  moved_at INTEGER NOT NULL,
  moved_by TEXT,
  PRIMARY KEY (name, label)
);
-- Every move of a label, newest last: who moved it from where (a rollback is a move back).
CREATE TABLE agent_label_moves (
  name TEXT NOT NULL,
  label TEXT NOT NULL,
  version INTEGER NOT NULL,
  from_version INTEGER,
  moved_at INTEGER NOT NULL,
  moved_by TEXT
);
CREATE INDEX agent_label_moves_label ON agent_label_moves (name, label, moved_at);

CREATE TABLE agent_traffic (
  name TEXT PRIMARY KEY,
  routes TEXT NOT NULL,                  -- JSON [{label, weight}]
  updated_at INTEGER NOT NULL,
  updated_by TEXT
);

-- The key of the content hashes (random, made once): a hash names a config without letting anyone test
-- guesses of the secrets in it.
CREATE TABLE registry_secrets (
  name TEXT PRIMARY KEY,
  value TEXT NOT NULL
);
