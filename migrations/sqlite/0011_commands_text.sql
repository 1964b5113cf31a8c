-- Issue 14: on Postgres the commands' JSON columns become text (they were jsonb). SQLite's have
-- been text from the start; this file keeps the two dialects' migrations numbered alike.
SELECT 1;
