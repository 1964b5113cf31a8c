-- Chat (issue 12 item 7): every message is stored before it is delivered, so that the admin log
-- shows it. A message belongs to a match (`table` or `spectators` channel) or to a lobby
-- (`lobby` channel); lobby_id has no foreign key because an empty lobby is deleted.

CREATE TABLE chat (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    match_id   TEXT REFERENCES matches (id),
    lobby_id   TEXT,
    channel    TEXT    NOT NULL,          -- table | spectators | lobby
    seat       INTEGER,                   -- the sender's seat (table channel)
    account_id TEXT,                      -- the sender's account, if any
    name       TEXT,                      -- the sender's display name then, if any
    text       TEXT    NOT NULL,
    at         TEXT    NOT NULL,
    CHECK ((match_id IS NULL) <> (lobby_id IS NULL))
);

CREATE INDEX chat_match ON chat (match_id, id);
CREATE INDEX chat_lobby ON chat (lobby_id, id);
