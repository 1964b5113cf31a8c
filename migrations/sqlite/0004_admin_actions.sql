-- The admin API (issue 12 item 5). An admin may abort a match: `aborted` is final, a restart
-- does not resume it. An admin may mark a player away (the game clocks will read the mark).
-- Every admin action is written to `admin_actions`, the audit trail.
-- (matches.status has no CHECK here: `aborted` needs no change.)

-- The admin list: newest first, paged by (created_at, id).
CREATE INDEX matches_created ON matches (created_at DESC, id DESC);

-- When an admin (later: a clock) marked the seat's player away; NULL while present.
ALTER TABLE seats ADD COLUMN away_since TEXT;

CREATE TABLE admin_actions (
    id       INTEGER PRIMARY KEY AUTOINCREMENT,
    at       TEXT NOT NULL,
    actor    TEXT NOT NULL,              -- who: `admin_token` (later `account:<uuid>`)
    action   TEXT NOT NULL,              -- abort | away | secrets | scenario
    match_id TEXT,                       -- the match acted on, if any
    detail   TEXT NOT NULL,              -- the request's parameters as JSON (a seat, a seq)
    outcome  TEXT NOT NULL               -- `ok`, or the error code it was refused with
);

CREATE INDEX admin_actions_match ON admin_actions (match_id, id);
