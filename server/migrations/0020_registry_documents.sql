-- Lowdown storage, version 20: what GET /v0.1/servers serves in the MCP Registry's own
-- format. registry_entries kept only the fields the Scanner reads; a Registry-format view
-- needs each entry's server.json exactly as the Registry served it.
-- server_json: the entry's `server` object (compact JSON); official_json: its
-- `_meta["io.modelcontextprotocol.registry/official"]`; updated_ms: that block's
-- updatedAt in unix milliseconds (for `updated_since`; NULL when absent or unreadable).
-- Entries stored before this version have NULLs until the next Registry read, and the
-- view leaves them out until then.
ALTER TABLE registry_entries ADD COLUMN server_json TEXT;
ALTER TABLE registry_entries ADD COLUMN official_json TEXT;
ALTER TABLE registry_entries ADD COLUMN updated_ms BIGINT;
