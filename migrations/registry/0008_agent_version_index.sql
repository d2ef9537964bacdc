-- The agent version each session runs (NULL: an inline agent, or a session opened before versions), in the
-- session index and its usage days, so lists filter and usage groups by it.
ALTER TABLE session_index ADD COLUMN agent_version INTEGER;
ALTER TABLE usage_days ADD COLUMN agent_version INTEGER;
