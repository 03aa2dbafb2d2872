-- Lowdown storage, version 9 (SQLite; PostgreSQL has its own 0009): ingest writes fewer and
-- tighter B-trees. Every ingested record updates each rollup, and on a busy network almost
-- every record lands on rollup rows of its own, so each B-tree a record touches costs a page
-- written to the WAL per commit.
--
-- 1. Per-task, per-version and per-schema counts live in one table, rollup_releases, keyed by
--    all of them (a release is a server version with its tool schema); rollup_tasks,
--    rollup_versions and rollup_schemas become views over it (one write instead of three).
--    Rebuilt from the raw rows, which every rollup equals.
-- 2. Rollups are WITHOUT ROWID tables: the primary key is the table, not a second B-tree.
-- 3. rollup_days is keyed (target, day, ...), which serves the trend query's day range, so
--    its extra (target, day) index goes.
-- 4. The raw rows lose idx_interactions_target_created: no query reads it (recomputation
--    scans the whole table), and it cost every record a random B-tree insert.

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
) WITHOUT ROWID;
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

CREATE TABLE rollup_days_v9 (
    target TEXT NOT NULL,
    task_type TEXT NOT NULL,
    day TEXT NOT NULL,
    source TEXT NOT NULL,
    outcome_class TEXT NOT NULL,
    n BIGINT NOT NULL,
    PRIMARY KEY (target, day, task_type, source, outcome_class)
) WITHOUT ROWID;
INSERT INTO rollup_days_v9 SELECT target, task_type, day, source, outcome_class, n FROM rollup_days;
DROP TABLE rollup_days;
ALTER TABLE rollup_days_v9 RENAME TO rollup_days;

CREATE TABLE rollup_targets_v9 (
    target TEXT NOT NULL,
    source TEXT NOT NULL,
    outcome_class TEXT NOT NULL,
    n BIGINT NOT NULL,
    PRIMARY KEY (target, source, outcome_class)
) WITHOUT ROWID;
INSERT INTO rollup_targets_v9 SELECT target, source, outcome_class, n FROM rollup_targets;
DROP TABLE rollup_targets;
ALTER TABLE rollup_targets_v9 RENAME TO rollup_targets;

CREATE TABLE rollup_latency_v9 (
    target TEXT NOT NULL,
    task_type TEXT NOT NULL,
    bucket BIGINT NOT NULL,
    n BIGINT NOT NULL,
    sum_ms DOUBLE PRECISION NOT NULL,
    PRIMARY KEY (target, task_type, bucket)
) WITHOUT ROWID;
INSERT INTO rollup_latency_v9 SELECT target, task_type, bucket, n, sum_ms FROM rollup_latency;
DROP TABLE rollup_latency;
ALTER TABLE rollup_latency_v9 RENAME TO rollup_latency;

CREATE TABLE node_days_v9 (
    node_id TEXT NOT NULL,
    day TEXT NOT NULL,
    PRIMARY KEY (node_id, day)
) WITHOUT ROWID;
INSERT INTO node_days_v9 SELECT node_id, day FROM node_days;
DROP TABLE node_days;
ALTER TABLE node_days_v9 RENAME TO node_days;

CREATE TABLE node_targets_v9 (
    node_id TEXT NOT NULL,
    target TEXT NOT NULL,
    PRIMARY KEY (node_id, target)
) WITHOUT ROWID;
INSERT INTO node_targets_v9 SELECT node_id, target FROM node_targets;
DROP TABLE node_targets;
ALTER TABLE node_targets_v9 RENAME TO node_targets;

DROP INDEX idx_interactions_target_created;
