-- Lobbies (issue 12): the whole lobby as JSON (protocol::LobbyState), with the columns that
-- queries filter on. A started lobby stays as the record of its match's access (public, or
-- private with its invite code); an empty lobby is deleted.

CREATE TABLE lobbies (
    id          UUID PRIMARY KEY,
    status      TEXT        NOT NULL CHECK (status IN ('open', 'started')),
    public      BOOLEAN     NOT NULL,
    invite_code TEXT,                     -- private lobbies only
    match_id    UUID REFERENCES matches (id),
    state       JSONB       NOT NULL,     -- protocol::LobbyState
    updated_at  TIMESTAMPTZ NOT NULL
);

CREATE INDEX lobbies_status ON lobbies (status);
CREATE UNIQUE INDEX lobbies_match ON lobbies (match_id);
