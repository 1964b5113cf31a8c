-- Lobbies (issue 12): the whole lobby as JSON (protocol::LobbyState), with the columns that
-- queries filter on. A started lobby stays as the record of its match's access (public, or
-- private with its invite code); an empty lobby is deleted.

CREATE TABLE lobbies (
    id          TEXT PRIMARY KEY,
    status      TEXT    NOT NULL,         -- open | started
    public      INTEGER NOT NULL,
    invite_code TEXT,                     -- private lobbies only
    match_id    TEXT REFERENCES matches (id),
    state       TEXT    NOT NULL,         -- protocol::LobbyState as JSON
    updated_at  TEXT    NOT NULL
);

CREATE INDEX lobbies_status ON lobbies (status);
CREATE UNIQUE INDEX lobbies_match ON lobbies (match_id);
