-- The account life cycle and moderation: suspensions (an admin's, for a time or for good),
-- deleted accounts (kept under a placeholder name, so that their matches keep their seats),
-- one-time password reset links an admin issues, and players' reports of a chat line or a
-- player.

-- Suspended since `suspended_at` (NULL: not suspended) until `suspended_until` (NULL: for good).
ALTER TABLE accounts ADD COLUMN suspended_at TEXT;
ALTER TABLE accounts ADD COLUMN suspended_until TEXT;
ALTER TABLE accounts ADD COLUMN suspension_reason TEXT;
-- When the player deleted the account (its kind is then `deleted`, its name a placeholder).
ALTER TABLE accounts ADD COLUMN deleted_at TEXT;

-- A reset link's token is stored only as its SHA-256; a link is used once, before it expires.
CREATE TABLE password_resets (
    token_hash TEXT PRIMARY KEY,
    account_id TEXT NOT NULL REFERENCES accounts (id),
    created_at TEXT NOT NULL,
    expires_at TEXT NOT NULL,
    used_at    TEXT
);

CREATE INDEX password_resets_account ON password_resets (account_id);

CREATE TABLE reports (
    id             INTEGER PRIMARY KEY AUTOINCREMENT,
    at             TEXT NOT NULL,
    reporter       TEXT NOT NULL,         -- the reporting account
    target_key     TEXT NOT NULL,         -- `account:<uuid>` or `chat:<id>`: what is reported
    account_id     TEXT,                  -- the reported player (a chat line's sender)
    chat_id        INTEGER,               -- the reported chat line (no foreign key: it may go)
    chat_text      TEXT,                  -- the line's text when it was reported
    reason         TEXT NOT NULL,
    status         TEXT NOT NULL,         -- open | resolved
    resolved_at    TEXT,
    resolved_by    TEXT,                  -- the admin, as the audit trail names them
    resolution     TEXT
);

-- One open report per reporter and target: a second is refused, not stored.
CREATE UNIQUE INDEX reports_open ON reports (reporter, target_key) WHERE status = 'open';
CREATE INDEX reports_status ON reports (status, id);
CREATE INDEX reports_reporter ON reports (reporter, at);
-- Chat lines by their sender: an account's export and deletion.
CREATE INDEX chat_account ON chat (account_id);
