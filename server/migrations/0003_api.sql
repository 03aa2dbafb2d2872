-- Lowdown storage, version 3 (SPEC §4-§5 as of issue 12).

-- Facts about this deployment, shared by every server on this database: the secret that
-- keys rate-limit callers ('caller_secret', 32 random bytes as hex, created by the first
-- server to start) and markers of one-time data migrations done in Rust ('backfill_0003').
CREATE TABLE server_meta (
    key TEXT NOT NULL PRIMARY KEY,
    value TEXT NOT NULL
);

-- Rate-limit callers are now HMAC-SHA256 of the caller under that secret. Rows keyed by
-- the old unkeyed sha256 can never match a caller again, and every window lasts at most an
-- hour, so they are dropped rather than kept until pruned: at worst a caller gets one
-- fresh window at the upgrade.
DELETE FROM rate_limits;

-- The wrapper that reported an observation (`"source":"your-wrapper-name"`); provenance
-- stays in `source`.
ALTER TABLE observations ADD COLUMN reporter TEXT;

-- The lookup form of each target (PEP 503 for `pypi:`, lower case for `npm:`, else the
-- target itself), written with the target; rows from before are filled by the server at
-- start ('backfill_0003'), since the rule lives in lowdown-core, not in SQL.
ALTER TABLE targets ADD COLUMN lookup_key TEXT;
CREATE INDEX idx_targets_lookup_key ON targets (lookup_key);

-- Latency of rated organic tool calls per target and task: a histogram over the core's
-- latency buckets (`bucket` is the index) with the exact sum, for avg/p50/p95. Written in
-- the ingest transaction; rows from before are filled at start ('backfill_0003').
CREATE TABLE rollup_latency (
    target TEXT NOT NULL,
    task_type TEXT NOT NULL,
    bucket BIGINT NOT NULL,
    n BIGINT NOT NULL,
    sum_ms DOUBLE PRECISION NOT NULL,
    PRIMARY KEY (target, task_type, bucket)
);

-- Which (node, day) and (node, target) pairs exist is all the node answer reads (it counts
-- them); their per-pair counts were never read, so they are no longer kept, and ingest
-- registers a pair once instead of rewriting its row for every record.
ALTER TABLE node_days DROP COLUMN n;
ALTER TABLE node_targets DROP COLUMN n;
