-- The durable state of the server. A match is a function of its setup (with the secret seed) and
-- its commands; `commands.events` is stored so that a restart can check that replaying gives the
-- same result.

CREATE TABLE matches (
    id            UUID PRIMARY KEY,
    setup         JSONB       NOT NULL,   -- rules::Setup, seed included: never sent to clients
    status        TEXT        NOT NULL CHECK (status IN ('active', 'finished', 'broken')),
    rules_version TEXT        NOT NULL,
    created_at    TIMESTAMPTZ NOT NULL,
    updated_at    TIMESTAMPTZ NOT NULL
);

CREATE INDEX matches_status ON matches (status);

CREATE TABLE seats (
    match_id   UUID     NOT NULL REFERENCES matches (id),
    seat       SMALLINT NOT NULL,
    colour     TEXT     NOT NULL,
    token_hash TEXT     NOT NULL UNIQUE,  -- sha256 of the seat token, hex
    PRIMARY KEY (match_id, seat)
);

CREATE TABLE commands (
    match_id   UUID        NOT NULL REFERENCES matches (id),
    seq        BIGINT      NOT NULL,
    seat       SMALLINT    NOT NULL,
    command_id TEXT        NOT NULL,      -- chosen by the client, unique per seat
    command    JSONB       NOT NULL,      -- rules::Command
    events     JSONB       NOT NULL,      -- Vec<rules::Event>
    created_at TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (match_id, seq),
    UNIQUE (match_id, seat, command_id)
);
