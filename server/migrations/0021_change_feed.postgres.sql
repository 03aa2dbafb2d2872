-- Lowdown storage, version 21 (PostgreSQL): when organic records first carried each
-- server version and tool schema hash (kind `server_version` or `schema_hash`), for the
-- change feed (`/t/{target}/changes`). The roll keeps it from now on; the rows already
-- rolled fill it here (rows still pending are added by their roll). Versions and hashes
-- whose raw rows the retention already removed are not known.
CREATE TABLE rollup_firsts (
    target TEXT NOT NULL,
    kind TEXT NOT NULL,
    value TEXT NOT NULL,
    first_seen BIGINT NOT NULL,
    PRIMARY KEY (target, kind, value)
);
INSERT INTO rollup_firsts (target, kind, value, first_seen)
    SELECT target, 'server_version', server_version, MIN(created_at) FROM interactions
    WHERE source = 'organic' AND server_version IS NOT NULL GROUP BY target, server_version;
INSERT INTO rollup_firsts (target, kind, value, first_seen)
    SELECT target, 'schema_hash', schema_hash, MIN(created_at) FROM interactions
    WHERE source = 'organic' AND schema_hash IS NOT NULL GROUP BY target, schema_hash;
-- The client networks behind each server version's rated organic records (the preflight
-- verdict's independence rule), filled from the rows already rolled.
CREATE TABLE rollup_version_networks (
    target TEXT NOT NULL,
    server_version TEXT NOT NULL,
    network TEXT NOT NULL,
    PRIMARY KEY (target, server_version, network)
);
INSERT INTO rollup_version_networks (target, server_version, network)
    SELECT DISTINCT target, server_version, network FROM interactions
    WHERE source = 'organic' AND outcome_class IN ('success', 'partial', 'failure')
      AND server_version IS NOT NULL AND network IS NOT NULL;
