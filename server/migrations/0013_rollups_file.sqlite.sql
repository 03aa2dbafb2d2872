-- Lowdown storage, version 13 (SQLite; PostgreSQL's 0013 changes nothing): the roll-ups
-- move to a file of their own, `<database>-rollups` (server/migrations/rollups.sqlite.sql),
-- written by the roller's connection in parallel with the ingest writer. They are derived
-- from the raw rows, so nothing is copied: the server rebuilds them there from the first
-- row. Rows the per-network cap marked `capped` before keep that class.

DROP VIEW main.rollup_tasks;
DROP VIEW main.rollup_versions;
DROP VIEW main.rollup_schemas;
DROP TABLE main.rollup_releases;
DROP TABLE main.rollup_days;
DROP TABLE main.rollup_targets;
DROP TABLE main.rollup_latency;
DROP TABLE main.nodes;
DROP TABLE main.node_days;
DROP TABLE main.node_targets;
DROP TABLE main.rollup_networks;
DROP TABLE main.rollup_contributors;
DROP TABLE main.rollup_watermark;
