-- The Registry Scanner (SPEC §8). Same portability rules as 0001: TEXT, BIGINT and
-- DOUBLE PRECISION only; times are unix milliseconds, days 'YYYY-MM-DD' (UTC); JSON
-- lists are TEXT. Booleans are BIGINT 0/1.

-- One row per scan run. A run that dies halfway stays 'running' with no finished_at; its
-- completed observations remain, and the answer reports the members it never reached as
-- `scanner_did_not_run`. day is the UTC day the run started: every observation, skip and
-- Registry change of the run counts for that day.
CREATE TABLE scan_runs (
    scan_run_id TEXT NOT NULL PRIMARY KEY,
    day TEXT NOT NULL,
    started_at BIGINT NOT NULL,
    finished_at BIGINT,
    -- running | completed | registry_failed | failed
    status TEXT NOT NULL,
    -- 1 once the whole Registry read succeeded and was stored.
    registry_ok BIGINT NOT NULL,
    registry_url TEXT NOT NULL,
    cohort_version BIGINT,
    -- The run summary (JSON), once finished.
    summary TEXT
);
CREATE INDEX idx_scan_runs_day ON scan_runs (day);

-- The latest declaration of every Registry name (isLatest entries, any status) as of the
-- last successful read. listed = 1 when that read contained it.
CREATE TABLE registry_entries (
    name TEXT NOT NULL PRIMARY KEY,
    version TEXT,
    status TEXT NOT NULL,
    -- JSON [{"type","url"}] as declared, and the sorted hosts of those URLs.
    remotes TEXT NOT NULL,
    remote_hosts TEXT NOT NULL,
    -- JSON [{"registryType","identifier","version"}] as declared (for the packages block).
    packages TEXT NOT NULL,
    published_at TEXT,
    updated_at TEXT,
    listed BIGINT NOT NULL,
    first_seen_day TEXT NOT NULL,
    last_seen_day TEXT NOT NULL
);

-- Declaration changes between successive reads: field is listed | version | status |
-- remote_hosts; from_value and to_value are JSON.
CREATE TABLE registry_changes (
    name TEXT NOT NULL,
    scan_run_id TEXT NOT NULL,
    field TEXT NOT NULL,
    day TEXT NOT NULL,
    from_value TEXT NOT NULL,
    to_value TEXT NOT NULL,
    PRIMARY KEY (name, scan_run_id, field)
);
CREATE INDEX idx_registry_changes_name_day ON registry_changes (name, day);

-- The cohort: one row per version (its declared size and how many members it then had),
-- one row per member (the version it joined under). Members are never removed.
CREATE TABLE scanner_cohort_versions (
    cohort_version BIGINT NOT NULL PRIMARY KEY,
    size BIGINT NOT NULL,
    members BIGINT NOT NULL,
    created_at BIGINT NOT NULL,
    scan_run_id TEXT NOT NULL
);
CREATE TABLE scanner_cohort (
    target_id TEXT NOT NULL PRIMARY KEY,
    sort_key TEXT NOT NULL,
    cohort_version BIGINT NOT NULL,
    joined_day TEXT NOT NULL
);

-- Members a run did not probe, and why: not_listed | no_probeable_remote.
CREATE TABLE scanner_skips (
    scan_run_id TEXT NOT NULL,
    target_id TEXT NOT NULL,
    day TEXT NOT NULL,
    reason TEXT NOT NULL,
    PRIMARY KEY (scan_run_id, target_id)
);
CREATE INDEX idx_scanner_skips_target_day ON scanner_skips (target_id, day);

-- One observation per probed remote per run (public: hashes and tool names only).
-- id is assigned in order by the run that holds the scan lease (dense, in time order).
-- definition_hashes (JSON list of scanner_tool_definitions keys) is private: it links the
-- observation to the full definitions and never leaves the database.
CREATE TABLE scanner_observations (
    id BIGINT NOT NULL PRIMARY KEY,
    scan_run_id TEXT NOT NULL,
    target_id TEXT NOT NULL,
    remote_url TEXT NOT NULL,
    day TEXT NOT NULL,
    observed_at BIGINT NOT NULL,
    reached_level BIGINT NOT NULL,
    http_status BIGINT,
    error_type TEXT,
    latency_ms DOUBLE PRECISION,
    server_version TEXT,
    protocol_version TEXT,
    tool_count BIGINT,
    tools_has_more BIGINT,
    schema_hash TEXT,
    desc_hash TEXT,
    name_hash TEXT,
    tool_names TEXT NOT NULL,
    www_authenticate BIGINT NOT NULL,
    definition_hashes TEXT NOT NULL
);
CREATE INDEX idx_scanner_observations_target_day ON scanner_observations (target_id, day);
CREATE INDEX idx_scanner_observations_run ON scanner_observations (scan_run_id);

-- Full tool definitions (canonical JSON of one tool object), stored once per distinct
-- definition. Private: never in an answer, an export or a log; only the hashes are public.
CREATE TABLE scanner_tool_definitions (
    definition_hash TEXT NOT NULL PRIMARY KEY,
    definition TEXT NOT NULL,
    first_seen_at BIGINT NOT NULL
);

-- Leases: one holder at a time per name ('scan'; the audit later), across every server
-- sharing the database. Taken by one atomic upsert that succeeds only when the row is
-- absent or expired; renewed by the holder while it works.
CREATE TABLE leases (
    name TEXT NOT NULL PRIMARY KEY,
    holder TEXT NOT NULL,
    expires_at BIGINT NOT NULL
);
