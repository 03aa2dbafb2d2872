-- Lowdown storage, version 19 (SQLite): nothing changes. PostgreSQL's 0019 adds the table
-- its ingest writes raw rows to; SQLite's ingest writes `interactions`, and its roller
-- follows a watermark there.
SELECT 1;
