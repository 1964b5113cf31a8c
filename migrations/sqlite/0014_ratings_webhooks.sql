-- Ratings. A rated match's result is recorded when it ends (`rated_matches`, in the order the
-- matches were rated: `n`), with what it did to each player's rating (`rating_history`) and
-- every account's current rating per family (`ratings`). The results are kept apart from the
-- match rows, so that retention may delete a match and a recompute still replays every result.
-- No foreign keys: a rating outlives the rows it came from.

CREATE TABLE rated_matches (
    n        INTEGER PRIMARY KEY AUTOINCREMENT,
    match_id TEXT    NOT NULL UNIQUE,
    family   TEXT    NOT NULL,          -- duel | multi
    ended_at TEXT    NOT NULL,
    results  TEXT    NOT NULL           -- [{account_id, name, score}] in seat order, as JSON
);

CREATE TABLE rating_history (
    n            INTEGER NOT NULL,      -- rated_matches.n
    account_id   TEXT    NOT NULL,
    family       TEXT    NOT NULL,
    place        INTEGER NOT NULL,      -- 1 for the winner; ties share a place
    mu_before    REAL    NOT NULL,
    sigma_before REAL    NOT NULL,
    mu           REAL    NOT NULL,
    sigma        REAL    NOT NULL,
    PRIMARY KEY (n, account_id)
);

CREATE INDEX rating_history_account ON rating_history (account_id, n);

CREATE TABLE ratings (
    account_id TEXT    NOT NULL,
    family     TEXT    NOT NULL,
    mu         REAL    NOT NULL,
    sigma      REAL    NOT NULL,
    rating     REAL    NOT NULL,        -- mu - 3 sigma: the leaderboard's order
    games      INTEGER NOT NULL,
    PRIMARY KEY (account_id, family)
);

CREATE INDEX ratings_board ON ratings (family, rating DESC, account_id);

-- An account's webhook for your-turn notices: where to post and the HMAC-SHA256 key that signs
-- each payload (kept as given, since the server signs with it; the player sees it once).
CREATE TABLE webhooks (
    account_id TEXT PRIMARY KEY,
    url        TEXT NOT NULL,
    secret     TEXT NOT NULL,
    created_at TEXT NOT NULL
);
