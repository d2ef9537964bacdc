-- One eval run (src/objects/evals/): its request, the dataset version's items as cases, and each case's result.
CREATE TABLE run (
  id TEXT PRIMARY KEY,
  spec TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  created_by TEXT,
  finished_at INTEGER
);
CREATE TABLE cases (
  idx INTEGER PRIMARY KEY,
  item TEXT NOT NULL,
  status TEXT NOT NULL,
  session_id TEXT,
  turn_id TEXT,
  result TEXT
);
