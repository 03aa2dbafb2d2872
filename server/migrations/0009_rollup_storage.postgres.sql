-- Lowdown storage, version 9 (PostgreSQL; SQLite has its own 0009): ingest writes fewer
-- indexes and rewrites rollup rows in place. Every ingested record updates each rollup, and
-- on a busy network almost every record lands on rollup rows of its own.
--
-- 1. Per-task, per-version and per-schema counts live in one table, rollup_releases, keyed by
--    all of them (a release is a server version with its tool schema); rollup_tasks,
--    rollup_versions and rollup_schemas become views over it (one write instead of three).
--    Rebuilt from the raw rows, which every rollup equals.
-- 2. rollup_days is keyed (target, day, ...), which serves the trend query's day range, so
--    its extra (target, day) index goes.
-- 3. Rollup tables leave a third of each page free (fillfactor 70), so adding to a count
--    writes the new row version on the same page without touching the index (a HOT update).
-- 4. The raw rows lose idx_interactions_target_created: no query reads it (recomputation
--    scans the whole table), and it cost every record an index insert.

CREATE TABLE rollup_releases (
    target TEXT NOT NULL,
    task_type TEXT NOT NULL,
    server_version TEXT NOT NULL,
    schema_hash TEXT NOT NULL,
    source TEXT NOT NULL,
    outcome_class TEXT NOT NULL,
    failure_type TEXT NOT NULL,
    n BIGINT NOT NULL,
    PRIMARY KEY (target, task_type, server_version, schema_hash, source, outcome_class, failure_type)
) WITH (fillfactor = 70);
INSERT INTO rollup_releases
    SELECT target, task_type, COALESCE(server_version, ''), COALESCE(schema_hash, ''), source,
           outcome_class, COALESCE(failure_type, ''), COUNT(*)
    FROM interactions
    GROUP BY target, task_type, COALESCE(server_version, ''), COALESCE(schema_hash, ''), source,
             outcome_class, COALESCE(failure_type, '');
DROP TABLE rollup_tasks;
DROP TABLE rollup_versions;
DROP TABLE rollup_schemas;
CREATE VIEW rollup_tasks AS
    SELECT target, task_type, source, outcome_class, failure_type, CAST(SUM(n) AS BIGINT) AS n
    FROM rollup_releases GROUP BY target, task_type, source, outcome_class, failure_type;
CREATE VIEW rollup_versions AS
    SELECT target, task_type, server_version, source, outcome_class, CAST(SUM(n) AS BIGINT) AS n
    FROM rollup_releases GROUP BY target, task_type, server_version, source, outcome_class;
CREATE VIEW rollup_schemas AS
    SELECT target, task_type, schema_hash, source, outcome_class, CAST(SUM(n) AS BIGINT) AS n
    FROM rollup_releases GROUP BY target, task_type, schema_hash, source, outcome_class;

ALTER TABLE rollup_days DROP CONSTRAINT rollup_days_pkey;
ALTER TABLE rollup_days ADD PRIMARY KEY (target, day, task_type, source, outcome_class);
DROP INDEX idx_rollup_days_target_day;

ALTER TABLE rollup_days SET (fillfactor = 70);
ALTER TABLE rollup_targets SET (fillfactor = 70);
ALTER TABLE rollup_latency SET (fillfactor = 70);

DROP INDEX idx_interactions_target_created;
