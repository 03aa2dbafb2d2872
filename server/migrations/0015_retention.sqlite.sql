-- Lowdown storage, version 15 (SQLite): raw rows older than the retention period are
-- removed once rolled up (`db/retention.rs`), and their record ids stay deduplicated.
--
-- The raw table's own unique key deduplicates the rows it holds; when the retention job
-- removes rows, it moves their ids here first, in the same transaction, and ingest looks
-- every new id up here before inserting. Only removed ids are kept: a database that never
-- removed anything pays nothing.
CREATE TABLE record_ids (
    record_id TEXT NOT NULL PRIMARY KEY
) WITHOUT ROWID;
