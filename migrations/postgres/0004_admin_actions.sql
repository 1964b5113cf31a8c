-- The admin API (issue 12 item 5). An admin may abort a match: `aborted` is final, a restart
-- does not resume it. An admin may mark a player away (the game clocks will read the mark).
-- Every admin action is written to `admin_actions`, the audit trail.

ALTER TABLE matches DROP CONSTRAINT matches_status_check;
ALTER TABLE matches ADD CONSTRAINT matches_status_check
    CHECK (status IN ('active', 'finished', 'broken', 'aborted'));

-- The admin list: newest first, paged by (created_at, id).
CREATE INDEX matches_created ON matches (created_at DESC, id DESC);

-- When an admin (later: a clock) marked the seat's player away; NULL while present.
ALTER TABLE seats ADD COLUMN away_since TIMESTAMPTZ;

CREATE TABLE admin_actions (
    id       BIGSERIAL   PRIMARY KEY,
    at       TIMESTAMPTZ NOT NULL,
    actor    TEXT        NOT NULL,   -- who: `admin_token` (later `account:<uuid>`)
    action   TEXT        NOT NULL,   -- abort | away | secrets | scenario
    match_id UUID,                   -- the match acted on, if any
    detail   JSONB       NOT NULL,   -- the request's parameters (a seat, a seq)
    outcome  TEXT        NOT NULL    -- `ok`, or the error code it was refused with
);

CREATE INDEX admin_actions_match ON admin_actions (match_id, id);
