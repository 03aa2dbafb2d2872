-- Lowdown storage, version 16: the audit on each path (SPEC §10): the gateway's ProxyCalls
-- and the agents' own reports (the mirror path), beside the figures of both together that
-- flagged, error_rate, p95_p5 and n hold.
ALTER TABLE service_audits ADD COLUMN gateway_flagged BIGINT NOT NULL DEFAULT 0;
ALTER TABLE service_audits ADD COLUMN gateway_error_rate DOUBLE PRECISION;
ALTER TABLE service_audits ADD COLUMN gateway_p95_p5 DOUBLE PRECISION;
ALTER TABLE service_audits ADD COLUMN gateway_n BIGINT NOT NULL DEFAULT 0;
ALTER TABLE service_audits ADD COLUMN telemetry_flagged BIGINT NOT NULL DEFAULT 0;
ALTER TABLE service_audits ADD COLUMN telemetry_error_rate DOUBLE PRECISION;
ALTER TABLE service_audits ADD COLUMN telemetry_p95_p5 DOUBLE PRECISION;
ALTER TABLE service_audits ADD COLUMN telemetry_n BIGINT NOT NULL DEFAULT 0;
-- An audit stored before read the gateway's calls alone: those are its gateway figures.
UPDATE service_audits SET gateway_flagged = flagged, gateway_error_rate = error_rate,
    gateway_p95_p5 = p95_p5, gateway_n = n;
