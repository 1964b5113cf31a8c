-- Accounts (guests and registered), their sessions, and the seats bound to accounts (issue 12).
-- Session tokens are stored only as their SHA-256; passwords only as argon2id PHC strings.

CREATE TABLE accounts (
    id            UUID PRIMARY KEY,
    name          TEXT        NOT NULL,   -- display name as given (trimmed)
    name_key      TEXT        NOT NULL,   -- lower-cased name: registered names are unique by it
    kind          TEXT        NOT NULL CHECK (kind IN ('guest', 'registered')),
    password_hash TEXT,                   -- argon2id PHC string; NULL for guests
    admin         BOOLEAN     NOT NULL DEFAULT FALSE,
    created_at    TIMESTAMPTZ NOT NULL
);

CREATE UNIQUE INDEX accounts_registered_name ON accounts (name_key) WHERE kind = 'registered';

CREATE TABLE sessions (
    id         UUID PRIMARY KEY,
    account_id UUID        NOT NULL REFERENCES accounts (id),
    token_hash TEXT        NOT NULL UNIQUE,  -- sha256 of the session token, hex
    created_at TIMESTAMPTZ NOT NULL
);

CREATE INDEX sessions_account ON sessions (account_id);

-- A seat that belongs to an account: that account's sessions may play it.
CREATE TABLE seat_accounts (
    match_id   UUID     NOT NULL REFERENCES matches (id),
    seat       SMALLINT NOT NULL,
    account_id UUID     NOT NULL REFERENCES accounts (id),
    PRIMARY KEY (match_id, seat)
);

CREATE INDEX seat_accounts_account ON seat_accounts (account_id);
