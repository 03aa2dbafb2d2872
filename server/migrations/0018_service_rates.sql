-- Lowdown storage, version 18: each catalog service's sampling_rate over time, noted when
-- a server loads a catalog whose rate differs from the last noted, so
-- POST /v1/sampling/verify checks a past decision with the rate in force for its salt
-- rather than today's.
CREATE TABLE service_rates (
    service_id TEXT NOT NULL,
    sampling_rate DOUBLE PRECISION NOT NULL,
    since BIGINT NOT NULL,
    PRIMARY KEY (service_id, since)
);
