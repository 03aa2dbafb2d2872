-- The SQLite roll-ups file (`<database>-rollups`, server/src/db/rollups_file.rs): every table
-- only the roll writes, as the main file held them up to migration 0012. It is derived from
-- the raw `interactions` rows of the main file: when it is missing, of another version or of
-- another database, it is made again from this script and rolled up from the first row.
-- Bump ROLLUPS_VERSION in rollups_file.rs whenever this changes.

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
-- Views see the tables of their own file only, so they live here too.
CREATE VIEW rollup_tasks AS
    SELECT target, task_type, source, outcome_class, failure_type, CAST(SUM(n) AS BIGINT) AS n
    FROM rollup_releases GROUP BY target, task_type, source, outcome_class, failure_type;
CREATE VIEW rollup_versions AS
    SELECT target, task_type, server_version, source, outcome_class, CAST(SUM(n) AS BIGINT) AS n
    FROM rollup_releases GROUP BY target, task_type, server_version, source, outcome_class;
CREATE VIEW rollup_schemas AS
    SELECT target, task_type, schema_hash, source, outcome_class, CAST(SUM(n) AS BIGINT) AS n
    FROM rollup_releases GROUP BY target, task_type, schema_hash, source, outcome_class;
CREATE TABLE rollup_days (
    target TEXT NOT NULL,
    task_type TEXT NOT NULL,
    day TEXT NOT NULL,
    source TEXT NOT NULL,
    outcome_class TEXT NOT NULL,
    n BIGINT NOT NULL,
    PRIMARY KEY (target, day, task_type, source, outcome_class)
) WITHOUT ROWID;
CREATE TABLE rollup_targets (
    target TEXT NOT NULL,
    source TEXT NOT NULL,
    outcome_class TEXT NOT NULL,
    n BIGINT NOT NULL,
    PRIMARY KEY (target, source, outcome_class)
) WITHOUT ROWID;
CREATE TABLE rollup_latency (
    target TEXT NOT NULL,
    task_type TEXT NOT NULL,
    bucket BIGINT NOT NULL,
    n BIGINT NOT NULL,
    sum_ms DOUBLE PRECISION NOT NULL,
    PRIMARY KEY (target, task_type, bucket)
) WITHOUT ROWID;
CREATE TABLE nodes (
    node_id TEXT NOT NULL PRIMARY KEY,
    interactions BIGINT NOT NULL,
    first_seen BIGINT NOT NULL,
    last_seen BIGINT NOT NULL
);
CREATE INDEX idx_nodes_interactions ON nodes (interactions);
CREATE TABLE node_days (
    node_id TEXT NOT NULL,
    day TEXT NOT NULL,
    PRIMARY KEY (node_id, day)
) WITHOUT ROWID;
CREATE TABLE node_targets (
    node_id TEXT NOT NULL,
    target TEXT NOT NULL,
    PRIMARY KEY (node_id, target)
) WITHOUT ROWID;
CREATE TABLE rollup_networks (
    target TEXT NOT NULL,
    network TEXT NOT NULL,
    n BIGINT NOT NULL,
    day TEXT NOT NULL,
    day_n BIGINT NOT NULL,
    PRIMARY KEY (target, network)
) WITHOUT ROWID;
CREATE TABLE rollup_contributors (
    target TEXT NOT NULL,
    contributor TEXT NOT NULL,
    PRIMARY KEY (target, contributor)
) WITHOUT ROWID;
-- When organic records first carried each server version and tool schema hash (kind
-- `server_version` or `schema_hash`): the change feed's new versions and schemas.
CREATE TABLE rollup_firsts (
    target TEXT NOT NULL,
    kind TEXT NOT NULL,
    value TEXT NOT NULL,
    first_seen BIGINT NOT NULL,
    PRIMARY KEY (target, kind, value)
) WITHOUT ROWID;
-- The client networks behind each server version's rated organic records.
CREATE TABLE rollup_version_networks (
    target TEXT NOT NULL,
    server_version TEXT NOT NULL,
    network TEXT NOT NULL,
    PRIMARY KEY (target, server_version, network)
) WITHOUT ROWID;
-- The per-network cap's marks: the `interactions` rowids it capped (the main file's raw
-- rows keep the class they arrived with; the roll applies these).
CREATE TABLE capped_rows (
    id INTEGER NOT NULL PRIMARY KEY
);
-- The last `interactions` rowid the roll-ups include, moved in the roll's transaction.
CREATE TABLE rollup_watermark (
    id BIGINT NOT NULL PRIMARY KEY,
    rolled BIGINT NOT NULL
);
INSERT INTO rollup_watermark (id, rolled) VALUES (1, 0);
