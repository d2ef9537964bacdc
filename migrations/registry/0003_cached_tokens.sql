-- Input tokens read from the providers' prompt caches, per day; part of input_tokens.
ALTER TABLE usage_days ADD COLUMN cached_input_tokens INTEGER NOT NULL DEFAULT 0;
