-- A live message may carry files (files sent with on_busy inject, or into a debounced turn): their
-- references as JSON (FileRef[]), never the bytes.
ALTER TABLE inbox ADD COLUMN files TEXT;
