-- Lowdown storage, version 17: the gateway stores a ProxyCall for every request of a
-- catalog service it answers, refused ones too (SPEC §10), with the refusal's reason in
-- `refused` (NULL: forwarded to the vendor). Refused calls never count in probe health,
-- the audit, the score or an agent's reputation. An agent not identified is stored as ''.
ALTER TABLE proxy_calls ADD COLUMN refused TEXT;
