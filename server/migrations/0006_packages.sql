-- Package facts (SPEC §8 `packages`) and the daily record's reads. Same portability rules
-- as 0001: TEXT, BIGINT and DOUBLE PRECISION only; times are unix milliseconds.

-- One row per checked package (npm, PyPI), keyed by its normalised name (npm lower case,
-- PyPI by PEP 503). state is the core's PackageState as JSON (latest, deprecated or yanked,
-- PEP 792 status, not_found and since when, the last successful check, whether the last
-- check failed): the rules for it live in lowdown_core::scanner::packages.
CREATE TABLE package_checks (
    ecosystem TEXT NOT NULL,
    name TEXT NOT NULL,
    state TEXT NOT NULL,
    last_attempt_at BIGINT NOT NULL,
    PRIMARY KEY (ecosystem, name)
);

-- Which Registry entries declare which package: package_target is the package's lookup
-- form (npm:<name>, pypi:<name>), name the Registry name. Rebuilt from registry_entries
-- after every successful Registry read, so `npm:`/`pypi:` lookups find their entries.
CREATE TABLE registry_packages (
    package_target TEXT NOT NULL,
    name TEXT NOT NULL,
    PRIMARY KEY (package_target, name)
);

-- The daily record reads one day at a time: its observations (by level, status and error
-- type; values first observed that day), its skips and its Registry changes.
CREATE INDEX idx_scanner_observations_day ON scanner_observations (day);
CREATE INDEX idx_scanner_skips_day ON scanner_skips (day);
CREATE INDEX idx_registry_changes_day ON registry_changes (day);
