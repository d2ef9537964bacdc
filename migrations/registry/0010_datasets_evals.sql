-- Datasets (PUT /v1/datasets/:name): every version's items, kept until the dataset is deleted; and the eval
-- runs' index (their state lives in their own objects): what a label's gate looks up.
CREATE TABLE dataset_versions (
  name TEXT NOT NULL,
  version INTEGER NOT NULL,
  content_hash TEXT NOT NULL,
  items TEXT NOT NULL,
  item_count INTEGER NOT NULL,
  created_at INTEGER NOT NULL,
  created_by TEXT,
  PRIMARY KEY (name, version)
);
CREATE TABLE eval_runs (
  id TEXT PRIMARY KEY,
  agent TEXT NOT NULL,
  version INTEGER NOT NULL,
  dataset TEXT NOT NULL,
  dataset_version INTEGER NOT NULL,
  status TEXT NOT NULL,
  summary TEXT,
  created_at INTEGER NOT NULL,
  finished_at INTEGER
);
CREATE INDEX eval_runs_by_agent ON eval_runs (agent, version, dataset, dataset_version, created_at);
