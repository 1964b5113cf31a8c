-- Issue 14 (performance): `commands` loses its UNIQUE (match_id, seat, command_id) constraint.
--
-- Why: its index cost one more index page written per durable move. The guarantee it gave is
-- kept by the match's actor: `actor::commands::Dedupe` holds every accepted (seat, command id)
-- of the match and answers a repeated id with its first seq, without a second write; it is
-- rebuilt from this table each time the match is loaded (`actor::replay`), and one actor owns
-- each match, so no other writer can store the same id twice. Each match is read by
-- (match_id, seq), which the primary key still indexes. The name is the one Postgres gave the
-- constraint of 0001 (`<table>_<columns>_key`); dropping it drops its index.
ALTER TABLE commands DROP CONSTRAINT commands_match_id_seat_command_id_key;
