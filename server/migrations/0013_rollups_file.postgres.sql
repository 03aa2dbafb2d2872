-- Lowdown storage, version 13 (PostgreSQL): nothing changes. SQLite's 0013 moves its
-- roll-ups to a file of their own; PostgreSQL rolls up in the ingest transaction.
SELECT 1;
