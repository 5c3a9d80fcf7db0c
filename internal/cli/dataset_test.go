package cli

import (
	"context"
	"strings"
	"testing"

	"github.com/fairbench/fairbench/internal/sqldb"
	"github.com/fairbench/fairbench/internal/testserver"
	"github.com/fairbench/fairbench/internal/workload/workloadtest"
)

// The data set's parameters come from prepare: `prepare --tables 2` then plain `run`, `check`
// and `cleanup` use 2 tables; an explicit contradiction and a foreign table are one
// line and exit 2.
func TestDataSetParametersFromPrepare(t *testing.T) {
	tg := testserver.Database(t, "postgres")
	dsn := withPassword(tg, tg.Password)
	target := []string{"--target", dsn, "--workload", "oltp_read_only"}
	if code, _, e := run(append([]string{"prepare", "--tables", "2", "--table-size", "500"}, target...)...); code != 0 {
		t.Fatalf("prepare: %s", e)
	}
	if code, out, e := run(append([]string{"run", "--threads", "2", "--time", "500ms"}, target...)...); code != 0 || !strings.Contains(out, "transactions:") {
		t.Fatalf("run with prepare's parameters: exit %d\n%s%s", code, out, e)
	}
	if code, out, e := run(append([]string{"check"}, target...)...); code != 0 || !strings.Contains(out, "passed") {
		t.Fatalf("check: exit %d\n%s%s", code, out, e)
	}
	code, _, e := run(append([]string{"run", "--time", "500ms", "--table-size", "1000000"}, target...)...)
	if lines := strings.Split(strings.TrimSpace(e), "\n"); code != 2 || len(lines) != 1 ||
		!strings.Contains(e, "prepared with --table-size 500, not --table-size 1000000") || !strings.Contains(e, "--force") {
		t.Fatalf("run asking for other data: exit %d %q", code, e)
	}
	if code, _, e := run(append([]string{"cleanup"}, target...)...); code != 0 {
		t.Fatalf("cleanup: %s", e)
	}
	c := workloadtest.Conn(t, tg)
	for _, n := range []string{"sbtest1", "sbtest2", "fairbench_dataset"} {
		if tableExists(t, c, n) {
			t.Errorf("%s left after cleanup", n)
		}
	}
	workloadtest.Exec(t, c, "CREATE TABLE sbtest1 (id INTEGER PRIMARY KEY, k INTEGER, c CHAR(120), pad CHAR(60))")
	code, _, e = run(append([]string{"run", "--time", "500ms", "--tables", "1"}, target...)...)
	if lines := strings.Split(strings.TrimSpace(e), "\n"); code != 2 || len(lines) != 1 || !strings.Contains(e, "prepared by fairbench") {
		t.Fatalf("run on a foreign sbtest1: exit %d %q", code, e)
	}
}

// run --help gives each workload's own defaults (--point-selects read 9, oltp_90_10's,
// for every workload).
func TestHelpShowsEachWorkloadsDefaults(t *testing.T) {
	_, out, _ := run("run", "--help")
	if !strings.Contains(out, "point SELECTs per transaction (default 10; oltp_90_10: 9)") {
		t.Fatalf("run --help does not give point-selects' defaults by workload:\n%s", out)
	}
	_, out, _ = run("run", "--workload", "oltp_90_10", "--help")
	if !strings.Contains(out, "Options of oltp_90_10") || !strings.Contains(out, "point SELECTs per transaction (default 9)") {
		t.Fatalf("run --workload oltp_90_10 --help:\n%s", out)
	}
	_, out, _ = run("run", "--workload", "oltp_read_write", "--help")
	if !strings.Contains(out, "point SELECTs per transaction (default 10)") || !strings.Contains(out, "from what prepare recorded") {
		t.Fatalf("run --workload oltp_read_write --help:\n%s", out)
	}
}

// A parameter the schema cannot hold is refused before anything is loaded.
func TestTableSizeBeyondTheSchema(t *testing.T) {
	code, _, e := run("prepare", "--target", "postgres://u@127.0.0.1:1/db", "--workload", "oltp_read_write", "--table-size", "2147483648")
	if code != 2 || !strings.Contains(e, "--table-size 2147483648 is more than") || strings.Count(strings.TrimSpace(e), "\n") != 0 {
		t.Fatalf("exit %d %q", code, e)
	}
}

func tableExists(t *testing.T, c sqldb.Conn, name string) bool {
	t.Helper()
	ok, err := sqldb.TableExists(context.Background(), c, name)
	if err != nil {
		t.Fatal(err)
	}
	return ok
}
