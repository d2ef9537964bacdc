-- Quota definitions (PUT /v1/quotas/:id); their state lives in the quota objects, one per quota subject.
CREATE TABLE quotas (
  id TEXT PRIMARY KEY,
  spec TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);
