-- One quota subject's state (src/objects/quota/): settled usage per quota and bucket, the reservations of
-- model calls in flight, the turns it counts as running, and which soft thresholds have warned.
CREATE TABLE usage_buckets (
  quota_id TEXT NOT NULL,
  bucket_start INTEGER NOT NULL,
  bucket_ms INTEGER NOT NULL,
  usd REAL NOT NULL DEFAULT 0,
  input_tokens INTEGER NOT NULL DEFAULT 0,
  output_tokens INTEGER NOT NULL DEFAULT 0,
  turns INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (quota_id, bucket_start, bucket_ms)
);
CREATE TABLE reservations (
  id TEXT NOT NULL,
  quota_id TEXT NOT NULL,
  turn_id TEXT NOT NULL,
  usd REAL NOT NULL,
  input_tokens INTEGER NOT NULL,
  output_tokens INTEGER NOT NULL,
  at INTEGER NOT NULL,
  PRIMARY KEY (id, quota_id)
);
CREATE TABLE turn_leases (
  quota_id TEXT NOT NULL,
  turn_id TEXT NOT NULL,
  started_at INTEGER NOT NULL,
  seen_at INTEGER NOT NULL,
  PRIMARY KEY (quota_id, turn_id)
);
CREATE TABLE warnings (
  quota_id TEXT NOT NULL,
  threshold REAL NOT NULL,
  window_start INTEGER NOT NULL,
  PRIMARY KEY (quota_id, threshold)
);
