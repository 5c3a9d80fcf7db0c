-- A pgbench script of a skewed account workload: a few accounts take most of the traffic
-- (zipfian, as a popular merchant's would), one in ten transactions reads the balance it
-- just moved back with \gset and records it, and a client pauses a moment between them.
-- Run it as pgbench would, or on every engine with fairbench:
--   pgbench -f examples/pgbench/hot-accounts.sql -s 10 ...
--   fairbench run --target DSN --workload pgbench --script examples/pgbench/hot-accounts.sql --scale 10
-- (or a suite step: - workload: pgbench, options: {script: examples/pgbench/hot-accounts.sql}).
\set aid random_zipfian(1, 100000 * :scale, 1.1)
\set tid random(1, 10 * :scale)
\set bid random(1, :scale)
\set delta random(-5000, 5000)
BEGIN;
UPDATE pgbench_accounts SET abalance = abalance + :delta WHERE aid = :aid;
\if random(1, 10) = 1
SELECT abalance FROM pgbench_accounts WHERE aid = :aid \gset
INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES (:tid, :bid, :aid, :abalance, CURRENT_TIMESTAMP);
\endif
END;
\sleep 1 ms
