-- The agent each session was opened with: an agent-bound token lists its subject's sessions of its
-- agent by it, whatever agent a handoff made current. Rows written before it are NULL: `agent` stands in.
ALTER TABLE session_index ADD COLUMN opened_agent TEXT;
