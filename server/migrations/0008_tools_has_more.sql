-- Lowdown storage, version 8: the interaction record's `tools_has_more` (SPEC §3.2: the
-- tools/list behind `schema_hash` had more pages than the one hashed), stored like every
-- other record field: 1 or 0, NULL when the recorder saw no tools/list.
ALTER TABLE interactions ADD COLUMN tools_has_more BIGINT;
