// Package workloadtest holds the steps every workload family's integration tests take against
// a real server: build a job, open a connection, read rows, prepare, run, clean up. Each test
// then keeps only the assertions that are about its own workload, and every family goes
// through the same job.New and runner path the command line uses, so a change there is
// exercised by all of them alike.
package workloadtest

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/fairbench/fairbench/internal/job"
	"github.com/fairbench/fairbench/internal/randgen"
	"github.com/fairbench/fairbench/internal/result"
	"github.com/fairbench/fairbench/internal/runner"
	"github.com/fairbench/fairbench/internal/runspec"
	"github.com/fairbench/fairbench/internal/sqldb"
	"github.com/fairbench/fairbench/internal/sqldb/fakeconn"
	"github.com/fairbench/fairbench/internal/workload"
)

// Job builds the job the command line would for --workload name with options. Keys are drawn
// uniformly so that a test's counts do not depend on a skewed distribution; the seed is the
// caller's so that each family keeps the data its assertions were written against.
func Job(t testing.TB, target sqldb.Target, name string, options map[string]string, seed uint64) *job.Job {
	t.Helper()
	j, err := job.New(target, name, options, randgen.DefaultConfig("uniform"), seed)
	if err != nil {
		t.Fatal(err)
	}
	return j
}

// Conn opens a connection of the test's own, beside the workload's, to look at and tamper with
// the tables. It is closed by t.Cleanup, which runs before testserver drops the database it
// was registered after.
func Conn(t testing.TB, target sqldb.Target) sqldb.Conn {
	t.Helper()
	c, err := sqldb.Open(context.Background(), target)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// Rows runs a query whose failure leaves nothing to assert on, so it ends the test and names
// the SQL that failed.
func Rows(t testing.TB, c sqldb.Conn, sql string, args ...any) [][]string {
	t.Helper()
	rows, err := c.Query(context.Background(), sql, args...)
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return rows
}

// Exec runs a statement a test relies on (a foreign table, data changed by hand), naming the
// SQL when it fails.
func Exec(t testing.TB, c sqldb.Conn, sql string) {
	t.Helper()
	if err := c.Exec(context.Background(), sql); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

// Prepare loads the workload's tables with loadThreads connections, as `fairbench prepare`
// does without --force.
func Prepare(t testing.TB, j *job.Job, loadThreads int) {
	t.Helper()
	if err := j.Prepare(context.Background(), j.Env(loadThreads, false, nil, nil)); err != nil {
		t.Fatal(err)
	}
}

// Run measures the job with threads for duration through the real runner. A run that fails,
// stops early or commits nothing says nothing about the workload, so it ends the test; the
// figures are logged to tell a slow engine from a broken one.
func Run(t testing.TB, j *job.Job, threads int, duration time.Duration) *result.Result {
	t.Helper()
	res, err := j.Run(context.Background(), runner.Config{Threads: threads, Duration: duration, MaxTries: runspec.DefaultMaxTries})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Complete || res.Transactions == 0 {
		t.Fatalf("complete=%v transactions=%d", res.Complete, res.Transactions)
	}
	t.Logf("%s: %d transactions (%.0f tps), %d rolled back, %d retries, %d errors",
		j.Spec.Name, res.Transactions, res.TPS, res.Rollbacks, res.Retries, res.Errors)
	return res
}

// Cleanup removes the workload's tables as `fairbench cleanup` does and checks through c that
// none of tables is left, since a cleanup that quietly leaves tables would make the next
// prepare refuse.
func Cleanup(t testing.TB, j *job.Job, c sqldb.Conn, tables ...string) {
	t.Helper()
	ctx := context.Background()
	if err := j.Cleanup(ctx, j.Env(1, false, nil, nil)); err != nil {
		t.Fatal(err)
	}
	for _, n := range tables {
		if ok, _ := sqldb.TableExists(ctx, c, n); ok {
			t.Errorf("%s still exists after cleanup", n)
		}
	}
}

// PrepareAgainRefused prepares a second time over the tables the first prepare made: it must
// refuse rather than load on top of, or drop, data a run may have changed.
func PrepareAgainRefused(t testing.TB, j *job.Job, loadThreads int) {
	t.Helper()
	if err := j.Prepare(context.Background(), j.Env(loadThreads, false, nil, nil)); err == nil || !strings.Contains(err.Error(), "already exists") {
		t.Fatalf("second prepare: %v, want a refusal", err)
	}
}

// ForeignTableLeftAlone checks fairbench's promise about a table it did not create, which the
// test has created by hand: prepare refuses with and without --force before creating anything
// (notCreated must still be absent), run and check refuse to touch it, cleanup says it left
// the table, and selectSQL on it still returns want in its one row.
func ForeignTableLeftAlone(t testing.TB, c sqldb.Conn, j *job.Job, table, notCreated, selectSQL, want string) {
	t.Helper()
	ctx := context.Background()
	for _, force := range []bool{false, true} {
		err := j.Prepare(ctx, j.Env(1, force, nil, nil))
		if err == nil || !strings.Contains(err.Error(), table+" exists and was not created by fairbench") {
			t.Fatalf("prepare (force=%v) over a foreign %s table: %v, want a refusal", force, table, err)
		}
	}
	if ok, _ := sqldb.TableExists(ctx, c, notCreated); ok {
		t.Fatalf("prepare created %s before refusing", notCreated)
	}
	RunRefused(t, j, "prepared by fairbench")
	if err := j.Cleanup(ctx, j.Env(1, false, nil, nil)); err == nil || !strings.Contains(err.Error(), "left "+table) {
		t.Fatalf("cleanup: %v, want it to say it left %s alone", err, table)
	}
	if rows := Rows(t, c, selectSQL); len(rows) != 1 || rows[0][0] != want {
		t.Fatalf("the user's table was changed: %v", rows)
	}
}

// RunRefused asserts that run and check both refuse the job's data, before measuring or
// checking anything, with an error that the command line reports as the user's to fix (exit
// 2) and that contains want.
func RunRefused(t testing.TB, j *job.Job, want string) {
	t.Helper()
	ctx := context.Background()
	res, err := j.Run(ctx, runner.Config{Threads: 1, Duration: 200 * time.Millisecond, MaxTries: 1})
	if res != nil || !IsRefusal(err) || !strings.Contains(err.Error(), want) {
		t.Fatalf("run: result %v, error %v; want a refusal saying %q", res != nil, err, want)
	}
	if _, err := j.Check(ctx, nil); !IsRefusal(err) || !strings.Contains(err.Error(), want) {
		t.Fatalf("check: %v; want a refusal saying %q", err, want)
	}
}

// IsRefusal tells the errors that say the data is not fit for the command (exit 2).
func IsRefusal(err error) bool {
	var np *workload.NotPreparedError
	var de *workload.DataError
	return errors.As(err, &np) || errors.As(err, &de)
}

// Worker builds workload name with options (defaults for the rest) and one worker of it on conn,
// thread 0 of 1, drawing from seed: the unit layer's way to run a workload's transactions on
// the fake connection (internal/sqldb/fakeconn). The worker's error is returned, for tests of
// what NewWorker refuses.
func Worker(t testing.TB, name string, options map[string]string, conn sqldb.Conn, seed uint64) (workload.Worker, error) {
	t.Helper()
	spec, err := workload.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	w, err := spec.New(spec.WithDefaults(options))
	if err != nil {
		t.Fatal(err)
	}
	cfg := randgen.DefaultConfig("uniform")
	return w.NewWorker(context.Background(), conn, cfg.New(seed), 0, 1)
}

// Transaction runs one transaction of wk on the fake connection conn and gives what it sent
// (conn's calls are forgotten first) and the statements conn counted meanwhile, by class, as the
// runner counts a transaction's reads and writes; an error fails the test.
func Transaction(t testing.TB, wk workload.Worker, conn *fakeconn.Conn) ([]fakeconn.Call, sqldb.Counters) {
	t.Helper()
	conn.Reset()
	before := conn.Counters()
	if err := wk.Transaction(context.Background(), &workload.Txn{}); err != nil {
		t.Fatal(err)
	}
	return conn.Sent(), conn.Counters().Sub(before)
}
