\set k random(1, 100000)
SELECT v FROM ycsb WHERE k = :k;
