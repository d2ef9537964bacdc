-- Usage per UTC day, a projection of the session's own events (cost.recorded, tool.started, turn ends), which
-- the session copies into the deployment's index.
CREATE TABLE usage_days (
  day TEXT PRIMARY KEY,                 -- YYYY-MM-DD (UTC)
  turns INTEGER NOT NULL DEFAULT 0,
  failures INTEGER NOT NULL DEFAULT 0,
  model_calls INTEGER NOT NULL DEFAULT 0,
  tool_calls INTEGER NOT NULL DEFAULT 0,
  input_tokens INTEGER NOT NULL DEFAULT 0,
  output_tokens INTEGER NOT NULL DEFAULT 0,
  cost_usd REAL NOT NULL DEFAULT 0,
  unpriced_model_calls INTEGER NOT NULL DEFAULT 0
);
