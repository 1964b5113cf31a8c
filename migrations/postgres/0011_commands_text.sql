-- Issue 14 (performance): the commands' JSON columns hold text instead of jsonb.
--
-- Why: the server only ever writes these columns whole and reads them back whole (a match's
-- replay, a resume from the log, the admin log); it never queries inside them. Parsing each
-- append's JSON (≈ 1 KB of events and patch a move) into jsonb was about a third of Postgres's
-- own CPU per move. Text also keeps the bytes the server wrote, as SQLite does: a diff resumed
-- from the log is byte for byte the one first sent (jsonb reorders keys and respaces). Rows
-- written before keep jsonb's rendering of their JSON, which is the same JSON.
ALTER TABLE commands
    ALTER COLUMN command TYPE TEXT USING command::text,
    ALTER COLUMN events TYPE TEXT USING events::text,
    ALTER COLUMN patch TYPE TEXT USING patch::text;
