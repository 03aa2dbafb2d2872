-- Provider mode (SPEC §11): benchmark directives, providers, claims, submissions, the
-- displayed benchmark score and the credit ledger. Same portable subset as 0001: TEXT,
-- BIGINT, DOUBLE PRECISION, ON CONFLICT; times are unix milliseconds; booleans are 0/1.

-- One provider per registered agent.
CREATE TABLE providers (
    provider_id TEXT NOT NULL PRIMARY KEY,
    agent_id TEXT NOT NULL UNIQUE,
    created_at BIGINT NOT NULL,
    -- Touched by every claim, so one provider's claims run one at a time (the update
    -- takes the row lock on PostgreSQL; SQLite has one writer anyway).
    last_claim_at BIGINT
);

-- What an operator posted for a paying vendor. status is open until a submission
-- completes it (done); holder and lease_expires_at are the current or last lease, and a
-- lease past lease_expires_at is no lease: the directive is back in the queue. seq is the
-- posting order (one more than the largest so far), so the queue is first in, first out
-- even within one millisecond.
CREATE TABLE benchmark_directives (
    directive_id TEXT NOT NULL PRIMARY KEY,
    seq BIGINT NOT NULL,
    service_id TEXT NOT NULL,
    kind TEXT NOT NULL,
    spec TEXT NOT NULL,
    price_credits BIGINT NOT NULL,
    critical BIGINT NOT NULL,
    created_at BIGINT NOT NULL,
    status TEXT NOT NULL,
    holder TEXT,
    lease_expires_at BIGINT,
    claim_id TEXT,
    completed_at BIGINT,
    submission_id TEXT
);
CREATE INDEX idx_benchmark_directives_status ON benchmark_directives (status, seq);

-- Every claim, for the history and for naming misuse precisely (your lease expired, you
-- never claimed it). ended is released or submitted; NULL while held or once expired.
CREATE TABLE benchmark_claims (
    claim_id TEXT NOT NULL PRIMARY KEY,
    directive_id TEXT NOT NULL,
    provider_id TEXT NOT NULL,
    claimed_at BIGINT NOT NULL,
    expires_at BIGINT NOT NULL,
    ended_at BIGINT,
    ended TEXT
);
CREATE INDEX idx_benchmark_claims_directive ON benchmark_claims (directive_id, provider_id, claimed_at);

-- Accepted submissions: the readings behind the displayed score. dimensions and
-- test_results are JSON text (errors redacted); no tool definition, answer or prompt.
CREATE TABLE benchmark_submissions (
    submission_id TEXT NOT NULL PRIMARY KEY,
    directive_id TEXT NOT NULL UNIQUE,
    provider_id TEXT NOT NULL,
    service_id TEXT NOT NULL,
    kind TEXT NOT NULL,
    dimensions TEXT NOT NULL,
    overall_score DOUBLE PRECISION NOT NULL,
    recorded_score DOUBLE PRECISION NOT NULL,
    test_results TEXT NOT NULL,
    runner_id TEXT NOT NULL,
    execution_time_ms DOUBLE PRECISION NOT NULL,
    displaced BIGINT NOT NULL,
    created_at BIGINT NOT NULL
);
CREATE INDEX idx_benchmark_submissions_service ON benchmark_submissions (service_id, kind, created_at);

-- The displayed benchmark score per service and kind (the displacement rule decides when
-- it changes); the probe-health cap is applied on read, never stored.
CREATE TABLE benchmark_scores (
    service_id TEXT NOT NULL,
    kind TEXT NOT NULL,
    value DOUBLE PRECISION NOT NULL,
    set_at BIGINT NOT NULL,
    reason TEXT NOT NULL,
    providers BIGINT NOT NULL,
    submission_id TEXT NOT NULL,
    PRIMARY KEY (service_id, kind)
);

-- Credits earned: 70 % of a directive's price, in thousandths of a credit. No real money.
CREATE TABLE provider_ledger (
    entry_id TEXT NOT NULL PRIMARY KEY,
    provider_id TEXT NOT NULL,
    directive_id TEXT NOT NULL,
    submission_id TEXT NOT NULL,
    millicredits BIGINT NOT NULL,
    created_at BIGINT NOT NULL
);
CREATE INDEX idx_provider_ledger_provider ON provider_ledger (provider_id, created_at);
