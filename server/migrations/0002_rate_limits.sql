-- Telemetry rate-limit windows (SPEC §4), shared by every server on this database.
-- One row per caller: `subject` is the sha256 (hex) of `agent:<agent id>` or `ip:<address>`,
-- never the raw address; `window_start` (unix ms) opens a fixed one-hour window at the
-- caller's first observation after the previous window ended; `n` counts observations
-- accepted in it. Incremented in the transaction that stores the observations.
CREATE TABLE rate_limits (
    subject TEXT PRIMARY KEY,
    window_start BIGINT NOT NULL,
    n BIGINT NOT NULL
);
CREATE INDEX rate_limits_window_start ON rate_limits (window_start);
