-- Lowdown storage, version 15 (PostgreSQL): `interactions` is partitioned by time, one
-- partition per UTC day of `created_at`, so that removing the raw rows older than the
-- retention period drops a partition (`db/retention.rs`).
--
-- A unique key of a partitioned table must include the partition key, so `record_id`
-- can no longer be the raw table's primary key: deduplication moves to `record_ids`, one
-- row per id ever stored, which ingest claims before it writes a raw row and which removal
-- never touches. It keeps each id as 8 bytes, the first of its SHA-256 as a signed
-- big-endian integer (`db::ingest::id_key` computes the same), not its text: it is kept
-- for ever. Every existing id is added.
--
-- The existing rows keep their table: it becomes the partition of everything before the
-- end of the UTC day of its newest row (dropped whole once that day is past the retention
-- period); no row is copied or lost. Later days get partitions of their own from the
-- retention job, ahead of time; a row of a day without one lands in the default partition,
-- from which removal deletes row by row.
CREATE TABLE record_ids (
    id_key BIGINT NOT NULL PRIMARY KEY
);
INSERT INTO record_ids (id_key)
SELECT DISTINCT CAST(CAST('x' || encode(substring(sha256(convert_to(record_id, 'UTF8')) FROM 1 FOR 8), 'hex') AS bit(64)) AS BIGINT)
FROM interactions;

ALTER TABLE interactions RENAME TO interactions_before_0015;
CREATE TABLE interactions (LIKE interactions_before_0015 INCLUDING DEFAULTS)
    PARTITION BY RANGE (created_at);
CREATE TABLE interactions_default PARTITION OF interactions DEFAULT;

DO $$
DECLARE
    newest BIGINT;
BEGIN
    SELECT MAX(created_at) INTO newest FROM interactions_before_0015;
    IF newest IS NULL THEN
        DROP TABLE interactions_before_0015;
    ELSE
        EXECUTE format(
            'ALTER TABLE interactions ATTACH PARTITION interactions_before_0015 '
            'FOR VALUES FROM (MINVALUE) TO (%s)',
            (floor(newest / 86400000.0)::BIGINT + 1) * 86400000
        );
    END IF;
END $$;
