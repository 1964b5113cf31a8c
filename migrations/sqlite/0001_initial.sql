-- The durable state of the server. A match is a function of its setup (with the secret seed) and
-- its commands; `commands.events` is stored so that a restart can check that replaying gives the
-- same result.

CREATE TABLE matches (
    id            TEXT PRIMARY KEY,       -- UUID, hyphenated
    setup         TEXT NOT NULL,          -- rules::Setup as JSON, seed included: never sent to clients
    status        TEXT NOT NULL,          -- active | finished | broken
    rules_version TEXT NOT NULL,
    created_at    TEXT NOT NULL,
    updated_at    TEXT NOT NULL
);

CREATE INDEX matches_status ON matches (status);

CREATE TABLE seats (
    match_id   TEXT    NOT NULL REFERENCES matches (id),
    seat       INTEGER NOT NULL,
    colour     TEXT    NOT NULL,
    token_hash TEXT    NOT NULL UNIQUE,   -- sha256 of the seat token, hex
    PRIMARY KEY (match_id, seat)
);

CREATE TABLE commands (
    match_id   TEXT    NOT NULL REFERENCES matches (id),
    seq        INTEGER NOT NULL,
    seat       INTEGER NOT NULL,
    command_id TEXT    NOT NULL,          -- chosen by the client, unique per seat
    command    TEXT    NOT NULL,          -- rules::Command as JSON
    events     TEXT    NOT NULL,          -- Vec<rules::Event> as JSON
    created_at TEXT    NOT NULL,
    PRIMARY KEY (match_id, seq),
    UNIQUE (match_id, seat, command_id)
);
