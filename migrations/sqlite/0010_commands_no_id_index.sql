-- Issue 14 (performance): `commands` loses its UNIQUE (match_id, seat, command_id) constraint.
--
-- Why: its index (sqlite_autoindex_commands_2) cost one more dirty 4 KiB page per durable move,
-- written to the WAL at each commit and again at each checkpoint. The guarantee it gave is kept
-- by the match's actor: `actor::commands::Dedupe` holds every accepted (seat, command id) of the
-- match and answers a repeated id with its first seq, without a second write; it is rebuilt
-- from this table each time the match is loaded (`actor::replay`), and one actor owns each
-- match, so no other writer can store the same id twice. Each match is read by
-- (match_id, seq), which the primary key still indexes.
--
-- SQLite cannot drop a table constraint, so the table is rebuilt as SQLite documents it
-- (https://www.sqlite.org/lang_altertable.html#otheralter): create the new table, copy every
-- row, drop the old one, rename the new one. Same columns (`patch` last, where 0002 added it),
-- same types, same primary key and foreign key. sqlx runs a migration inside one transaction,
-- so an interrupted upgrade leaves the old table; `PRAGMA foreign_keys` cannot change inside a
-- transaction and need not: no table refers to `commands`, so dropping it deletes nothing
-- elsewhere, and every row copied already refers to a stored match. The copy rewrites the
-- whole table once, at the first start after the upgrade. No index, trigger or view is defined
-- on `commands` besides its constraints' own.

CREATE TABLE commands_0010 (
    match_id   TEXT    NOT NULL REFERENCES matches (id),
    seq        INTEGER NOT NULL,
    seat       INTEGER NOT NULL,
    command_id TEXT    NOT NULL,          -- chosen by the client, unique per seat (the actor checks)
    command    TEXT    NOT NULL,          -- rules::Command as JSON
    events     TEXT    NOT NULL,          -- Vec<rules::Event> as JSON
    created_at TEXT    NOT NULL,
    patch      TEXT,                      -- see 0002
    PRIMARY KEY (match_id, seq)
);

INSERT INTO commands_0010 (match_id, seq, seat, command_id, command, events, created_at, patch)
SELECT match_id, seq, seat, command_id, command, events, created_at, patch
FROM commands
ORDER BY rowid;

DROP TABLE commands;

ALTER TABLE commands_0010 RENAME TO commands;
