-- The resource (end user or account) the session belongs to: whose memory its turns read and write.
ALTER TABLE session ADD COLUMN resource_id TEXT;
