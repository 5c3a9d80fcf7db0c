\set k random(1, 100000)
\set n random(1, 1000000)
UPDATE ycsb SET n = :n WHERE k = :k;
