-- Code tools (docs/guides/code-tools.md): every version of each, the latest read by default. `definition` is
-- the JSON of the version, secrets included (they never leave the registry but to the sandbox).
CREATE TABLE code_tools (
  name TEXT NOT NULL,
  version INTEGER NOT NULL,
  definition TEXT NOT NULL,
  hash TEXT NOT NULL,
  source_hash TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  PRIMARY KEY (name, version)
);
