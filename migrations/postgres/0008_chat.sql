-- Chat (issue 12 item 7): every message is stored before it is delivered, so that the admin log
-- shows it. A message belongs to a match (`table` or `spectators` channel) or to a lobby
-- (`lobby` channel); lobby_id has no foreign key because an empty lobby is deleted.

CREATE TABLE chat (
    id         BIGSERIAL   PRIMARY KEY,
    match_id   UUID REFERENCES matches (id),
    lobby_id   UUID,
    channel    TEXT        NOT NULL CHECK (channel IN ('table', 'spectators', 'lobby')),
    seat       SMALLINT,                  -- the sender's seat (table channel)
    account_id UUID,                      -- the sender's account, if any
    name       TEXT,                      -- the sender's display name then, if any
    text       TEXT        NOT NULL,
    at         TIMESTAMPTZ NOT NULL,
    CHECK ((match_id IS NULL) <> (lobby_id IS NULL))
);

CREATE INDEX chat_match ON chat (match_id, id);
CREATE INDEX chat_lobby ON chat (lobby_id, id);
