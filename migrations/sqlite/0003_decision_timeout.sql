-- Each match keeps the decision timeout it was created with (milliseconds a non-active player has
-- to answer a decision before the server applies its default), so that a restart with another
-- setting moves no pending deadline. NULL for matches created before: they take the server's.
ALTER TABLE matches ADD COLUMN decision_timeout_ms INTEGER;
