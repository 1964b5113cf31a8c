-- Game clocks (issue 12 item 4): a match may have a clock, the same for every player: a bank of
-- milliseconds each starts with and an increment added when each of their turns ends. Both NULL:
-- no clock. The time left is not stored: it is rebuilt from the commands' stored times. Away
-- marks (a clock ran out, or an admin) use `seats.away_since` (0004).
ALTER TABLE matches ADD COLUMN clock_bank_ms BIGINT;
ALTER TABLE matches ADD COLUMN clock_increment_ms BIGINT;
