-- The sampling gateway (SPEC §10). Same portable subset as 0001: TEXT, BIGINT,
-- DOUBLE PRECISION, ON CONFLICT; times are unix milliseconds.

-- An agent may register an Ed25519 public key (base64) that verifies its receipt signatures.
ALTER TABLE agents ADD COLUMN public_key TEXT;

-- One salt per UTC day, id s_YYYYMMDD, 32 random bytes as hex. Inserted if absent, so
-- every server sharing the database hands out the same salt.
CREATE TABLE sampling_salts (
    salt_id TEXT NOT NULL PRIMARY KEY,
    salt TEXT NOT NULL,
    created_at BIGINT NOT NULL
);

-- One row per call through the gateway: no path, query, headers or bodies.
-- status is NULL when no response arrived; error_type names what went wrong
-- (timeout, connect, redirect_off_host, upstream_body, client_gone).
CREATE TABLE proxy_calls (
    call_id TEXT NOT NULL PRIMARY KEY,
    service_id TEXT NOT NULL,
    agent_id TEXT NOT NULL,
    salt_id TEXT NOT NULL,
    method TEXT NOT NULL,
    status BIGINT,
    latency_ms DOUBLE PRECISION NOT NULL,
    response_bytes BIGINT,
    error_type TEXT,
    at BIGINT NOT NULL
);
CREATE INDEX idx_proxy_calls_service_at ON proxy_calls (service_id, at);
CREATE INDEX idx_proxy_calls_agent_at ON proxy_calls (agent_id, at);

-- The latest audit per service (recomputed at most once per 24 h).
CREATE TABLE service_audits (
    service_id TEXT NOT NULL PRIMARY KEY,
    flagged BIGINT NOT NULL,
    error_rate DOUBLE PRECISION,
    p95_p5 DOUBLE PRECISION,
    n BIGINT NOT NULL,
    checked_at BIGINT NOT NULL
);

-- Delivery receipts, keyed by the sha256 of the statement's canonical JSON (replays are
-- refused by the key). weight_tenths is 3 (one signature) or 10 (both).
CREATE TABLE receipts (
    statement_hash TEXT NOT NULL PRIMARY KEY,
    service_id TEXT NOT NULL,
    agent_id TEXT NOT NULL,
    call_at TEXT NOT NULL,
    outcome TEXT NOT NULL,
    latency_ms DOUBLE PRECISION NOT NULL,
    agent_signed BIGINT NOT NULL,
    service_signed BIGINT NOT NULL,
    weight_tenths BIGINT NOT NULL,
    submitted_at BIGINT NOT NULL
);
CREATE INDEX idx_receipts_agent ON receipts (agent_id, submitted_at);

-- Refused forged or replayed decisions and receipts, per agent (reputation abuse_flags).
CREATE TABLE agent_flags (
    flag_id TEXT NOT NULL PRIMARY KEY,
    agent_id TEXT NOT NULL,
    kind TEXT NOT NULL,
    service_id TEXT,
    at BIGINT NOT NULL
);
CREATE INDEX idx_agent_flags_agent_at ON agent_flags (agent_id, at);

-- Database leases: one holder at a time per name across servers (the daily audit runs
-- under the `audit` lease). The same table as the Registry Scanner's, hence IF NOT EXISTS.
CREATE TABLE IF NOT EXISTS leases (
    name TEXT NOT NULL PRIMARY KEY,
    holder TEXT NOT NULL,
    expires_at BIGINT NOT NULL
);

-- The live score and agent reputation read recent telemetry per service and per agent.
CREATE INDEX idx_observations_service_created ON observations (service_id, created_at);
CREATE INDEX idx_observations_agent_created ON observations (agent_id, created_at);
