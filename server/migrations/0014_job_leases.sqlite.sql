-- Lowdown storage, version 14 (SQLite): a lease row remembers the job's period (the UTC
-- day a daily job works on), the holder's progress there (`state`, e.g. the scan run to
-- resume) and the last period finished (`done`), so a job runs once per period across every
-- server on the database and a holder that dies leaves its work to the next one.
ALTER TABLE leases ADD COLUMN period TEXT;
ALTER TABLE leases ADD COLUMN state TEXT;
ALTER TABLE leases ADD COLUMN done TEXT;
