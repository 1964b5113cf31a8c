-- Lazy recovery (issue 14 item 4): a restart serves at once and replays a match on its first
-- touch. What cannot wait for a touch (a pawn-choice deadline, a game clock, an away player) is
-- found by `wake_at`: when the match next needs the server, in milliseconds since the Unix epoch;
-- NULL when nothing is pending. The match's actor keeps it equal to its next deadline, written
-- in the same transaction as each append.
ALTER TABLE matches ADD COLUMN wake_at INTEGER;

-- Matches stored before this column: unknown, so due now; the first start after the upgrade
-- loads them in the background once and each writes its real wake time.
UPDATE matches SET wake_at = 0 WHERE status = 'active';

-- Start: the unfinished matches with something pending, soonest first.
CREATE INDEX matches_wake ON matches (wake_at) WHERE status = 'active' AND wake_at IS NOT NULL;
