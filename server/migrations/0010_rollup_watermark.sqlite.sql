-- Lowdown storage, version 10: the last `interactions` row the rollups include.
--
-- On SQLite an ingest transaction writes only the raw rows, and the rollups follow them in
-- rolls of many thousands (server/src/db/roller.rs): `rolled` is the last rowid rolled up,
-- moved in the same transaction as the rollups it covers. Every row stored so far is
-- already in the rollups. (PostgreSQL rolls up in the ingest transaction; its 0010 makes
-- the same table, which stays at 0.)

CREATE TABLE rollup_watermark (
    id BIGINT NOT NULL PRIMARY KEY,
    rolled BIGINT NOT NULL
);
INSERT INTO rollup_watermark (id, rolled) SELECT 1, COALESCE(MAX(rowid), 0) FROM interactions;
