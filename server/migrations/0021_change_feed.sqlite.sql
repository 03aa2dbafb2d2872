-- Lowdown storage, version 21 (SQLite): nothing changes in the main file. The roll-ups
-- file gains `rollup_firsts` and `rollup_version_networks` (its version 2), and a file of version 1 is made again and
-- rolled up from the raw rows it keeps.
SELECT 1;
