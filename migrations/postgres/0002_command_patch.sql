-- The JSON Patch each command made to the public view, as sent in its diff: lets the server
-- resume a client from the log (diffs with their events) instead of a snapshot. NULL for rows
-- written before this column existed: those resumes fall back to a snapshot.
ALTER TABLE commands ADD COLUMN patch JSONB;
