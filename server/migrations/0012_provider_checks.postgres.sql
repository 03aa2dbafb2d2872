-- Lowdown storage, version 12 (PostgreSQL; SQLite has its own 0012): provider results a
-- stranger cannot forge (SPEC §11).
--
-- 1. benchmark_submissions: several per directive (an agent directive counts once two
--    providers of different networks agree), at most one per provider and directive.
--    status: reading (counts toward the displayed score), pending (an agent result
--    waiting for agreement), disagreed (an agent result that did not agree with the one
--    that counted), unverified (stored before version 12, taken as given: never a
--    reading). counted_at is when it became a reading; network the keyed id of the
--    provider's client network; observed what a protocol run's probe saw (JSON).
-- 2. The displayed scores came from unverified readings: they are dropped, to be set
--    again by verified ones. Credits already in the ledger stay.
-- 3. provider_disagreements: each protocol submission the server's probe contradicted
--    and each agent result that disagreed; the provider order and exclusion count them.

ALTER TABLE benchmark_submissions DROP CONSTRAINT benchmark_submissions_directive_id_key;
ALTER TABLE benchmark_submissions ADD CONSTRAINT benchmark_submissions_directive_provider UNIQUE (directive_id, provider_id);
ALTER TABLE benchmark_submissions ADD COLUMN status TEXT NOT NULL DEFAULT 'unverified';
ALTER TABLE benchmark_submissions ALTER COLUMN status DROP DEFAULT;
ALTER TABLE benchmark_submissions ADD COLUMN counted_at BIGINT;
ALTER TABLE benchmark_submissions ADD COLUMN network TEXT;
ALTER TABLE benchmark_submissions ADD COLUMN observed TEXT;
DROP INDEX idx_benchmark_submissions_service;
CREATE INDEX idx_benchmark_submissions_readings ON benchmark_submissions (service_id, kind, counted_at);

DELETE FROM benchmark_scores;

CREATE TABLE provider_disagreements (
    disagreement_id TEXT NOT NULL PRIMARY KEY,
    provider_id TEXT NOT NULL,
    directive_id TEXT NOT NULL,
    kind TEXT NOT NULL,
    field TEXT NOT NULL,
    created_at BIGINT NOT NULL
);
CREATE INDEX idx_provider_disagreements_provider ON provider_disagreements (provider_id, created_at);
