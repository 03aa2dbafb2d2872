-- Lowdown storage, version 1. One file for SQLite and PostgreSQL: only types and syntax
-- both accept (TEXT, BIGINT, DOUBLE PRECISION, composite primary keys, ON CONFLICT).
-- Times are unix milliseconds (BIGINT); days are 'YYYY-MM-DD' (TEXT, UTC).
-- Rollup keys use '' for "none" because NULLs never conflict in a unique key.

-- Raw interaction records (SPEC §3.2). record_id is the client's idempotency key, or one
-- the server made up when the client sent none.
CREATE TABLE interactions (
    record_id TEXT NOT NULL PRIMARY KEY,
    actor TEXT NOT NULL,
    target TEXT NOT NULL,
    target_type TEXT NOT NULL,
    task_type TEXT NOT NULL,
    outcome TEXT NOT NULL,
    failure_type TEXT,
    error_layer TEXT,
    request_kind TEXT NOT NULL,
    outcome_class TEXT NOT NULL,
    latency_ms DOUBLE PRECISION,
    source TEXT NOT NULL,
    node_id TEXT,
    server_version TEXT,
    schema_hash TEXT,
    recorder_version TEXT,
    protocol_version TEXT,
    day TEXT NOT NULL,
    created_at BIGINT NOT NULL
);
-- Answers read rollups only; this index serves audits and recomputation per target.
-- Every other raw-row index would only slow ingest down.
CREATE INDEX idx_interactions_target_created ON interactions (target, created_at);

-- Every target ever recorded (or observed by telemetry), for exact and short-name lookup.
-- name_key is the lower-cased last segment (after the last ':' or '/').
CREATE TABLE targets (
    target TEXT NOT NULL PRIMARY KEY,
    name_key TEXT NOT NULL,
    first_seen BIGINT NOT NULL
);
CREATE INDEX idx_targets_name_key ON targets (name_key);

-- Interaction rollups, maintained in the ingest transaction. n counts records.
CREATE TABLE rollup_targets (
    target TEXT NOT NULL,
    source TEXT NOT NULL,
    outcome_class TEXT NOT NULL,
    n BIGINT NOT NULL,
    PRIMARY KEY (target, source, outcome_class)
);
CREATE TABLE rollup_tasks (
    target TEXT NOT NULL,
    task_type TEXT NOT NULL,
    source TEXT NOT NULL,
    outcome_class TEXT NOT NULL,
    failure_type TEXT NOT NULL,
    n BIGINT NOT NULL,
    PRIMARY KEY (target, task_type, source, outcome_class, failure_type)
);
CREATE TABLE rollup_days (
    target TEXT NOT NULL,
    task_type TEXT NOT NULL,
    day TEXT NOT NULL,
    source TEXT NOT NULL,
    outcome_class TEXT NOT NULL,
    n BIGINT NOT NULL,
    PRIMARY KEY (target, task_type, day, source, outcome_class)
);
CREATE INDEX idx_rollup_days_target_day ON rollup_days (target, day);
CREATE TABLE rollup_versions (
    target TEXT NOT NULL,
    task_type TEXT NOT NULL,
    server_version TEXT NOT NULL,
    source TEXT NOT NULL,
    outcome_class TEXT NOT NULL,
    n BIGINT NOT NULL,
    PRIMARY KEY (target, task_type, server_version, source, outcome_class)
);
CREATE TABLE rollup_schemas (
    target TEXT NOT NULL,
    task_type TEXT NOT NULL,
    schema_hash TEXT NOT NULL,
    source TEXT NOT NULL,
    outcome_class TEXT NOT NULL,
    n BIGINT NOT NULL,
    PRIMARY KEY (target, task_type, schema_hash, source, outcome_class)
);

-- Contributing nodes.
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
    n BIGINT NOT NULL,
    PRIMARY KEY (node_id, day)
);
CREATE TABLE node_targets (
    node_id TEXT NOT NULL,
    target TEXT NOT NULL,
    n BIGINT NOT NULL,
    PRIMARY KEY (node_id, target)
);

-- Service catalog: services and the hosts that belong to them ("known hosts").
CREATE TABLE services (
    service_id TEXT NOT NULL PRIMARY KEY,
    name TEXT NOT NULL,
    created_at BIGINT NOT NULL
);
CREATE TABLE service_hosts (
    host TEXT NOT NULL PRIMARY KEY,
    service_id TEXT NOT NULL
);
CREATE INDEX idx_service_hosts_service ON service_hosts (service_id);

-- Registered agents. Only the sha256 of the key is stored.
CREATE TABLE agents (
    agent_id TEXT NOT NULL PRIMARY KEY,
    key_hash TEXT NOT NULL,
    name TEXT NOT NULL,
    model_provider TEXT NOT NULL,
    model_id TEXT NOT NULL,
    environment TEXT NOT NULL,
    created_at BIGINT NOT NULL
);
CREATE UNIQUE INDEX idx_agents_key_hash ON agents (key_hash);

-- Raw telemetry observations (SPEC §4): host only, never a path.
CREATE TABLE observations (
    record_id TEXT NOT NULL PRIMARY KEY,
    host TEXT NOT NULL,
    method TEXT NOT NULL,
    status BIGINT,
    status_class TEXT NOT NULL,
    latency_ms DOUBLE PRECISION NOT NULL,
    response_bytes BIGINT,
    source TEXT NOT NULL,
    weight_tenths BIGINT NOT NULL,
    service_id TEXT,
    agent_id TEXT,
    day TEXT NOT NULL,
    created_at BIGINT NOT NULL
);
CREATE INDEX idx_observations_host_created ON observations (host, created_at);

-- Telemetry rollups per subject (a host, or a catalog service), day, source, status,
-- weight and latency bucket (the core's histogram index). status -1 stands for "no
-- status" (connect error); weight_tenths is 1, 3, 5 or 10.
CREATE TABLE telemetry_rollups (
    subject_kind TEXT NOT NULL,
    subject TEXT NOT NULL,
    day TEXT NOT NULL,
    source TEXT NOT NULL,
    status BIGINT NOT NULL,
    weight_tenths BIGINT NOT NULL,
    latency_bucket BIGINT NOT NULL,
    n BIGINT NOT NULL,
    PRIMARY KEY (subject_kind, subject, day, source, status, weight_tenths, latency_bucket)
);
-- Reputation answers look a name up as a host or as a service in one query.
CREATE INDEX idx_telemetry_rollups_subject ON telemetry_rollups (subject, subject_kind);
