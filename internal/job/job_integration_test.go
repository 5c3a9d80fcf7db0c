package job_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/fairbench/fairbench/internal/job"
	"github.com/fairbench/fairbench/internal/randgen"
	"github.com/fairbench/fairbench/internal/runner"
	"github.com/fairbench/fairbench/internal/sqldb"
	"github.com/fairbench/fairbench/internal/testserver"
	"github.com/fairbench/fairbench/internal/workload"
	_ "github.com/fairbench/fairbench/internal/workload/all"
	"github.com/fairbench/fairbench/internal/workload/workloadtest"
)

func newJob(t *testing.T, tg sqldb.Target, name string, set map[string]string) *job.Job {
	t.Helper()
	j, err := job.New(tg, name, set, randgen.DefaultConfig("uniform"), 7)
	if err != nil {
		t.Fatal(err)
	}
	return j
}

func shortRun(t *testing.T, j *job.Job) {
	t.Helper()
	res, err := j.Run(context.Background(), runner.Config{Threads: 2, Duration: 300 * time.Millisecond, MaxTries: 10})
	if err != nil || !res.Complete || res.Transactions == 0 {
		t.Fatalf("run: %v (result %+v)", err, res)
	}
}

// A hand-made sbtest1 with sysbench's very columns is not fairbench's: run and check refuse it
// before writing a row (run used to update 370 of its 1,000 rows).
func TestRunRefusesForeignTables(t *testing.T) {
	for _, kind := range testserver.Kinds() {
		t.Run(kind, func(t *testing.T) {
			tg := testserver.Database(t, kind)
			c := workloadtest.Conn(t, tg)
			workloadtest.Exec(t, c, "CREATE TABLE sbtest1 (id INTEGER NOT NULL PRIMARY KEY, k INTEGER DEFAULT '0' NOT NULL, "+
				"c CHAR(120) DEFAULT '' NOT NULL, pad CHAR(60) DEFAULT '' NOT NULL)")
			workloadtest.Exec(t, c, "INSERT INTO sbtest1 (id, k, c, pad) VALUES (1, 1, 'mine', 'mine'), (2, 2, 'mine', 'mine')")
			workloadtest.RunRefused(t, newJob(t, tg, "oltp_read_write", map[string]string{"tables": "1", "table-size": "2"}), "prepared by fairbench")
			if rows := workloadtest.Rows(t, c, "SELECT COUNT(*) FROM sbtest1 WHERE c = 'mine' AND k IN (1, 2)"); rows[0][0] != "2" {
				t.Fatalf("the user's rows were changed: %v", rows)
			}
		})
	}
}

// One of fairbench's own tables replaced by the user's after prepare: refused, by name.
func TestRunRefusesAReplacedTable(t *testing.T) {
	tg := testserver.Database(t, "postgres")
	c := workloadtest.Conn(t, tg)
	j := newJob(t, tg, "oltp_point_select", map[string]string{"tables": "2", "table-size": "100"})
	workloadtest.Prepare(t, j, 2)
	workloadtest.Exec(t, c, "DROP TABLE sbtest2")
	workloadtest.Exec(t, c, "CREATE TABLE sbtest2 (id INTEGER PRIMARY KEY, k INTEGER, c CHAR(120), pad CHAR(60))")
	workloadtest.RunRefused(t, j, "table sbtest2 was not created by fairbench")
}

// A prepare interrupted mid-load (Ctrl-C, SIGTERM: its context cancelled) leaves the data set
// recorded as unfinished, and run and check refuse it (they used to run on half-loaded
// tables). prepare --force then loads it whole.
func TestInterruptedPrepareIsRefused(t *testing.T) {
	for _, kind := range testserver.Kinds() {
		t.Run(kind, func(t *testing.T) {
			tg := testserver.Database(t, kind)
			j := newJob(t, tg, "oltp_read_write", map[string]string{"tables": "2", "table-size": "200000"})
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			progress := func(done, total int64) {
				if done >= 20000 {
					cancel()
				}
			}
			if err := j.Prepare(ctx, j.Env(2, false, progress, nil)); err == nil {
				t.Fatal("prepare finished although it was cancelled")
			}
			workloadtest.RunRefused(t, j, "unfinished")
			// The fix the refusal names works: prepare --force loads the data set afresh.
			small := newJob(t, tg, "oltp_read_write", map[string]string{"tables": "2", "table-size": "1000"})
			if err := small.Prepare(context.Background(), small.Env(2, true, nil, nil)); err != nil {
				t.Fatal(err)
			}
			shortRun(t, small)
		})
	}
}

// Asking for other data than was loaded is refused with both values and the fix; asking for
// nothing takes what prepare recorded (`prepare --tables 2` then `run` used to fail
// with "sbtest1..sbtest4 not found").
func TestParametersComeFromPrepare(t *testing.T) {
	for _, kind := range testserver.Kinds() {
		t.Run(kind, func(t *testing.T) {
			tg := testserver.Database(t, kind)
			c := workloadtest.Conn(t, tg)
			workloadtest.Prepare(t, newJob(t, tg, "oltp_read_write", map[string]string{"tables": "2", "table-size": "1000"}), 2)

			big := newJob(t, tg, "oltp_read_write", map[string]string{"table-size": "1000000"})
			workloadtest.RunRefused(t, big, "prepared with --table-size 1000, not --table-size 1000000")

			plain := newJob(t, tg, "oltp_read_only", nil) // the defaults say 4 tables of 100,000 rows
			res, err := plain.Run(context.Background(), runner.Config{Threads: 2, Duration: 300 * time.Millisecond, MaxTries: 10})
			if err != nil {
				t.Fatal(err)
			}
			if o := res.Workload.Options; o["tables"] != "2" || o["table-size"] != "1000" {
				t.Fatalf("run used tables=%s table-size=%s, want prepare's 2 and 1000", o["tables"], o["table-size"])
			}
			if res.Prepared == nil || res.Prepared.PreparedBy != "oltp_read_write" || res.Prepared.FinishedAt == "" {
				t.Fatalf("result's prepare record: %+v", res.Prepared)
			}
			if dc, err := plain.Check(context.Background(), nil); err != nil || !dc.Passed {
				t.Fatalf("check with prepare's parameters: %+v, %v", dc, err)
			}
			// cleanup, given nothing, drops both tables and the record.
			workloadtest.Cleanup(t, newJob(t, tg, "oltp_read_write", nil), c, "sbtest1", "sbtest2", workload.DatasetTable)
		})
	}
}

// The after-run check is job's, for the command line and compare alike: a run that leaves the
// data broken is marked incomplete, with every verdict in its result.
func TestCheckAfterRunMarksBrokenDataIncomplete(t *testing.T) {
	tg := testserver.Database(t, "mariadb")
	c := workloadtest.Conn(t, tg)
	j := newJob(t, tg, "oltp_point_select", map[string]string{"tables": "1", "table-size": "100"})
	workloadtest.Prepare(t, j, 1)
	j.CheckAfterRun = true
	shortRun(t, j)
	workloadtest.Exec(t, c, "DELETE FROM sbtest1 WHERE id = 5")
	res, err := j.Run(context.Background(), runner.Config{Threads: 1, Duration: 200 * time.Millisecond, MaxTries: 10})
	if err == nil || res == nil || res.Complete || res.DataCheck == nil || res.DataCheck.Passed {
		t.Fatalf("run over broken data: err %v, result %+v", err, res)
	}
	if !strings.Contains(res.Error, "99 rows, expected 100") {
		t.Fatalf("the result does not say what failed: %q", res.Error)
	}
	if err := job.CheckError(res.DataCheck); err == nil {
		t.Fatal("CheckError passes a failed check")
	}
}

// Each measured step starts with the server's dirty pages written out, and the result says so.
func TestEveryStepStartsFlushed(t *testing.T) {
	for _, kind := range testserver.Kinds() {
		t.Run(kind, func(t *testing.T) {
			tg := testserver.Database(t, kind)
			j := newJob(t, tg, "oltp_write_only", map[string]string{"tables": "1", "table-size": "20000"})
			workloadtest.Prepare(t, j, 1)
			res, err := j.Run(context.Background(), runner.Config{Threads: 2, Duration: 300 * time.Millisecond, MaxTries: 10})
			if err != nil {
				t.Fatal(err)
			}
			st := res.StartState
			if st == nil || (st.Flush != "checkpoint" && st.Flush != "dirty pages flushed") || st.RedoBacklogBytes == nil {
				t.Fatalf("start state: %+v", st)
			}
			t.Logf("%s: flush %q in %.2fs, dirty pages %v, redo backlog %d bytes", kind, st.Flush, st.FlushS, deref(st.DirtyPages), *st.RedoBacklogBytes)
			if kind != "postgres" && (st.DirtyPages == nil || *st.DirtyPages > 100) {
				t.Fatalf("InnoDB dirty pages after the flush: %v", deref(st.DirtyPages))
			}
		})
	}
}

func deref(p *int64) any {
	if p == nil {
		return nil
	}
	return *p
}

// Data a schema cannot hold is refused before anything is loaded.
func TestParametersTheSchemaCannotHold(t *testing.T) {
	_, err := job.New(sqldb.Target{Kind: sqldb.Postgres}, "oltp_read_write", map[string]string{"table-size": "2147483648"},
		randgen.DefaultConfig("uniform"), 1)
	if err == nil || !strings.Contains(err.Error(), "--table-size") || !strings.Contains(err.Error(), "2147483647") {
		t.Fatalf("table size 2^31: %v", err)
	}
	var np *workload.NotPreparedError
	if errors.As(err, &np) {
		t.Fatal("wrong error type")
	}
}

// The flush leaves the server's settings as it found them: InnoDB adjusts
// innodb_max_dirty_pages_pct_lwm when innodb_max_dirty_pages_pct goes below it, and a later
// step must not run with a changed flushing policy.
func TestSettleRestoresTheServersSettings(t *testing.T) {
	for _, kind := range []string{"mariadb", "mysql"} {
		t.Run(kind, func(t *testing.T) {
			tg := testserver.Database(t, kind)
			c := workloadtest.Conn(t, tg)
			const q = "SELECT @@GLOBAL.innodb_max_dirty_pages_pct, @@GLOBAL.innodb_max_dirty_pages_pct_lwm"
			before := workloadtest.Rows(t, c, q)
			st := newJob(t, tg, "oltp_point_select", nil).Settle(context.Background())
			if st.Flush != "dirty pages flushed" {
				t.Fatalf("flush: %q", st.Flush)
			}
			if after := workloadtest.Rows(t, c, q); after[0][0] != before[0][0] || after[0][1] != before[0][1] {
				t.Fatalf("pct, lwm were %v, are %v after the flush", before[0], after[0])
			}
			t.Logf("%s: pct, lwm = %v", kind, before[0])
		})
	}
}
