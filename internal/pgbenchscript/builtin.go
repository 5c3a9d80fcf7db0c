package pgbenchscript

import "strings"

// builtins are pgbench's built-in scripts (pgbench -b NAME), word for word from PostgreSQL 17's
// pgbench.c, so that "tpcb-like" here is the transaction pgbench runs.
var builtins = map[string]string{
	"tpcb-like": `\set aid random(1, 100000 * :scale)
\set bid random(1, 1 * :scale)
\set tid random(1, 10 * :scale)
\set delta random(-5000, 5000)
BEGIN;
UPDATE pgbench_accounts SET abalance = abalance + :delta WHERE aid = :aid;
SELECT abalance FROM pgbench_accounts WHERE aid = :aid;
UPDATE pgbench_tellers SET tbalance = tbalance + :delta WHERE tid = :tid;
UPDATE pgbench_branches SET bbalance = bbalance + :delta WHERE bid = :bid;
INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES (:tid, :bid, :aid, :delta, CURRENT_TIMESTAMP);
END;
`,
	"simple-update": `\set aid random(1, 100000 * :scale)
\set bid random(1, 1 * :scale)
\set tid random(1, 10 * :scale)
\set delta random(-5000, 5000)
BEGIN;
UPDATE pgbench_accounts SET abalance = abalance + :delta WHERE aid = :aid;
SELECT abalance FROM pgbench_accounts WHERE aid = :aid;
INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES (:tid, :bid, :aid, :delta, CURRENT_TIMESTAMP);
END;
`,
	"select-only": `\set aid random(1, 100000 * :scale)
SELECT abalance FROM pgbench_accounts WHERE aid = :aid;
`,
}

// Builtin finds a built-in script by name or by a prefix of it, as pgbench -b does ("tpcb"
// for tpcb-like); ok is false when none or more than one matches.
func Builtin(name string) (text, full string, ok bool) {
	if t, found := builtins[name]; found {
		return t, name, true
	}
	for n, t := range builtins {
		if strings.HasPrefix(n, name) {
			if ok {
				return "", "", false
			}
			text, full, ok = t, n, true
		}
	}
	return text, full, ok
}

// BuiltinNames lists the built-in scripts.
func BuiltinNames() []string { return []string{"tpcb-like", "simple-update", "select-only"} }
