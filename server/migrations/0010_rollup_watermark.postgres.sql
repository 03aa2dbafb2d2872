-- Lowdown storage, version 10 (PostgreSQL; SQLite has its own 0010): the table SQLite
-- keeps its rollup watermark in. PostgreSQL rolls up in the ingest transaction, so the
-- value stays 0; the table is here so both engines have the same tables.

CREATE TABLE rollup_watermark (
    id BIGINT NOT NULL PRIMARY KEY,
    rolled BIGINT NOT NULL
);
INSERT INTO rollup_watermark (id, rolled) VALUES (1, 0);
