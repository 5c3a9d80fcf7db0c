-- A script that needs every part of the language fairbench runs: a row kept with \gset, read
-- back in an expression and a branch, a pause, and pgbench's END on every engine. The branches
-- not taken divide by zero: a wrong branch fails the transaction, which the test counts.
\set aid random(1, 100000 * :scale)
BEGIN;
SELECT abalance, bid FROM pgbench_accounts WHERE aid = :aid \gset acct_
\set next :acct_abalance + 1
\if :acct_bid = 1 and :next > :acct_abalance
UPDATE pgbench_accounts SET abalance = :next WHERE aid = :aid;
\elif :acct_bid is null
\set never 1 / 0
\else
\set never 1 / 0
\endif
END;
\sleep 200 us
