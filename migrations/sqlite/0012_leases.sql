-- Leases are Postgres-only (cluster mode runs several nodes on one Postgres; a SQLite file has
-- one server). This migration has nothing to do: it keeps the two dialects' versions in step,
-- so that a migration number means the same change on both.
SELECT 1;
