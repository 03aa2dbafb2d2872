-- Lowdown storage, version 12 (SQLite; PostgreSQL has its own 0012): provider results a
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

CREATE TABLE benchmark_submissions_v12 (
    submission_id TEXT NOT NULL PRIMARY KEY,
    directive_id TEXT NOT NULL,
    provider_id TEXT NOT NULL,
    service_id TEXT NOT NULL,
    kind TEXT NOT NULL,
    dimensions TEXT NOT NULL,
    overall_score DOUBLE PRECISION NOT NULL,
    recorded_score DOUBLE PRECISION NOT NULL,
    test_results TEXT NOT NULL,
    runner_id TEXT NOT NULL,
    execution_time_ms DOUBLE PRECISION NOT NULL,
    displaced BIGINT NOT NULL,
    created_at BIGINT NOT NULL,
    status TEXT NOT NULL,
    counted_at BIGINT,
    network TEXT,
    observed TEXT,
    UNIQUE (directive_id, provider_id)
);
INSERT INTO benchmark_submissions_v12
    SELECT submission_id, directive_id, provider_id, service_id, kind, dimensions, overall_score,
           recorded_score, test_results, runner_id, execution_time_ms, displaced, created_at,
           'unverified', NULL, NULL, NULL
    FROM benchmark_submissions;
DROP TABLE benchmark_submissions;
ALTER TABLE benchmark_submissions_v12 RENAME TO benchmark_submissions;
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
