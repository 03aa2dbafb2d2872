-- Lowdown storage, version 11 (PostgreSQL; SQLite has its own 0011): facts a stranger
-- cannot forge (SPEC §4, §5).
--
-- 1. Quotas on every write: one row per subject (a node id, agent key or network under one
--    limit, as a keyed hash) with its last hour of use in one-minute slots, `counts`
--    newest first from the minute `newest` (unix ms / 60,000). They replace the fixed
--    one-hour windows of rate_limits; a budget in use at the upgrade starts afresh.
-- 2. Who wrote what: the keyed id of the client's network (an IPv4 /24, an IPv6 /48) and
--    the agent behind the key of each record, observation and ProxyCall; `trusted` marks
--    records from a network the deployment trusts (--trusted-network), which no cap
--    limits. Rows stored before have none of it: they count in no network.
-- 3. Independence and the per-network cap, per target: rollup_networks counts each
--    network's rated organic records (n; capped ones not) and, for the cap, its rated
--    organic records of the latest day it sent one (day, day_n; capped ones too, trusted
--    networks' not); past 20 a day the rest are stored with outcome_class 'capped'.
--    rollup_contributors: the node ids and agents (keys) behind the rated organic records
--    (agent ids `ag_…` and node ids `ld_…` never look alike, so one column holds both).
--    The same for telemetry subjects.
-- 4. Agents count the observations accepted from them: a key earns weight with them.

DROP TABLE rate_limits;
CREATE TABLE quotas (
    subject TEXT NOT NULL PRIMARY KEY,
    newest BIGINT NOT NULL,
    counts TEXT NOT NULL
) WITH (fillfactor = 70);
CREATE INDEX idx_quotas_newest ON quotas (newest);

ALTER TABLE interactions ADD COLUMN network TEXT;
ALTER TABLE interactions ADD COLUMN agent_id TEXT;
ALTER TABLE interactions ADD COLUMN trusted BIGINT NOT NULL DEFAULT 0;
-- The core's latency bucket of the row's latency, computed at ingest so that the SQLite
-- roll groups by it instead of comparing each latency with 25 bounds.
ALTER TABLE interactions ADD COLUMN latency_bucket BIGINT;
ALTER TABLE observations ADD COLUMN network TEXT;
ALTER TABLE proxy_calls ADD COLUMN network TEXT;
ALTER TABLE agents ADD COLUMN accepted BIGINT NOT NULL DEFAULT 0;

CREATE TABLE rollup_networks (
    target TEXT NOT NULL,
    network TEXT NOT NULL,
    n BIGINT NOT NULL,
    day TEXT NOT NULL,
    day_n BIGINT NOT NULL,
    PRIMARY KEY (target, network)
) WITH (fillfactor = 70);
CREATE TABLE rollup_contributors (
    target TEXT NOT NULL,
    contributor TEXT NOT NULL,
    PRIMARY KEY (target, contributor)
) WITH (fillfactor = 70);
CREATE TABLE telemetry_networks (
    subject_kind TEXT NOT NULL,
    subject TEXT NOT NULL,
    network TEXT NOT NULL,
    n BIGINT NOT NULL,
    PRIMARY KEY (subject_kind, subject, network)
) WITH (fillfactor = 70);
CREATE TABLE telemetry_contributors (
    subject_kind TEXT NOT NULL,
    subject TEXT NOT NULL,
    contributor TEXT NOT NULL,
    PRIMARY KEY (subject_kind, subject, contributor)
) WITH (fillfactor = 70);

-- The contributors behind what is already stored (node ids, and the keys of
-- observations); networks were never recorded, so none is counted for those rows.
INSERT INTO rollup_contributors (target, contributor)
    SELECT DISTINCT target, node_id FROM interactions
    WHERE source = 'organic' AND outcome_class IN ('success', 'partial', 'failure')
      AND node_id IS NOT NULL;
INSERT INTO telemetry_contributors (subject_kind, subject, contributor)
    SELECT DISTINCT 'host', host, agent_id FROM observations
    WHERE source = 'organic' AND agent_id IS NOT NULL;
INSERT INTO telemetry_contributors (subject_kind, subject, contributor)
    SELECT DISTINCT 'service', service_id, agent_id FROM observations
    WHERE source = 'organic' AND agent_id IS NOT NULL AND service_id IS NOT NULL;
