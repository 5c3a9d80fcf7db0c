-- Every client updates one branch at serializable isolation (PostgreSQL's SET TRANSACTION inside
-- the transaction), so most attempts fail to serialize and are retried.
\set delta random(1, 3)
BEGIN;
SET TRANSACTION ISOLATION LEVEL SERIALIZABLE;
UPDATE pgbench_branches SET bbalance = bbalance + :delta WHERE bid = 1;
END;
