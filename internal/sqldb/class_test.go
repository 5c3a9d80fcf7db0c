package sqldb

import "testing"

// A statement is a read only when nothing in it can change data as either family reads it:
// data-modifying WITH, SELECT ... INTO, set_config and the statements that are not reads at all
// are refused on existing tables (a WITH ... UPDATE was taken for a read and zeroed a
// user's table). Words inside strings, quoted names and comments do not count, except where one
// family would run them (a backslash-escaped quote on MySQL, MySQL's /*! comments).
func TestClassOf(t *testing.T) {
	cases := []struct{ sql, want string }{
		{"SELECT balance FROM t WHERE id = ?", "read"},
		{"  (SELECT 1)", "read"},
		{"SELECT v FROM t WHERE id = ? FOR UPDATE", "read"},
		{"SELECT v FROM t WHERE id = ? FOR NO KEY UPDATE", "read"},
		{"WITH x AS (SELECT id FROM t) SELECT id FROM x", "read"},
		{"SELECT 'UPDATE t SET v = 0' AS s", "read"},
		{`SELECT "into" FROM t`, "read"},
		{"SELECT v FROM t -- INTO OUTFILE\n WHERE id = 1", "read"},
		{"SELECT v /* DELETE */ FROM t", "read"},
		{"VALUES (1)", "read"},
		{"SHOW server_version", "read"},
		{"WITH x AS (UPDATE mydata SET v = 0 WHERE id = ? RETURNING id) SELECT id FROM x", "write"},
		{"with x as (delete from t returning id) select count(*) from x", "write"},
		{"WITH x AS (INSERT INTO t VALUES (1) RETURNING id) SELECT * FROM x", "write"},
		{"WITH x AS (MERGE INTO t USING s ON t.id = s.id WHEN MATCHED THEN DELETE) SELECT 1", "write"},
		{"SELECT v INTO stolen_copy FROM mydata", "write"},
		{"SELECT v FROM t INTO OUTFILE '/tmp/x'", "write"},
		{"SELECT v FROM t INTO @a", "write"},
		{"SELECT set_config('default_transaction_read_only', 'off', false)", "write"},
		{`SELECT '\'' INTO OUTFILE 'x' -- '`, "write"},
		{"SELECT 1 /*! INTO OUTFILE '/tmp/x' */", "write"},
		{"SELECT 1 /*M!100000 INTO @a */", "write"},
		{"UPDATE t SET v = 0", "write"},
		{"insert into t values (1)", "write"},
		{"REPLACE INTO t VALUES (1)", "write"},
		{"MERGE INTO t USING s ON t.id = s.id WHEN MATCHED THEN DELETE", "write"},
		{"DELETE FROM t", "write"},
		{"CALL zero_all()", "other"},
		{"BEGIN", "other"},
		{"  commit;", "other"},
		{"START TRANSACTION READ ONLY", "other"},
		{"Update t SET v = 1", "write"},
		{"/* UPDATE */ SELECT 1", "read"},
		{"DO $$ BEGIN UPDATE t SET v = 0; END $$", "other"},
		{"SET default_transaction_read_only = off", "other"},
		{"COPY t TO PROGRAM 'id'", "other"},
		{"", "other"},
		{"-- nothing", "other"},
	}
	for _, c := range cases {
		if got := ClassOf(c.sql).String(); got != c.want {
			t.Errorf("ClassOf(%q) = %s, want %s", c.sql, got, c.want)
		}
	}
}

// Connections classify every statement they send: doing it must not allocate, whatever the
// statement's first word.
func TestClassOfDoesNotAllocate(t *testing.T) {
	for _, sql := range []string{"COMMIT", "UPDATE t SET v = ? WHERE id = ?", "SELECT c FROM sbtest1 WHERE id = ?",
		"WITH x AS (DELETE FROM t RETURNING id) SELECT 1", "/* hint */ SELECT 'it''s' FROM t"} {
		if n := testing.AllocsPerRun(100, func() { ClassOf(sql) }); n != 0 {
			t.Errorf("ClassOf(%q) allocates %.0f times", sql, n)
		}
	}
}
