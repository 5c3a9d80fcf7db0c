package tpch

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fairbench/fairbench/internal/dialect"
	"github.com/fairbench/fairbench/internal/job"
	"github.com/fairbench/fairbench/internal/randgen"
	"github.com/fairbench/fairbench/internal/regress"
	"github.com/fairbench/fairbench/internal/result"
	"github.com/fairbench/fairbench/internal/runner"
	"github.com/fairbench/fairbench/internal/servermetrics"
	"github.com/fairbench/fairbench/internal/sqldb"
	"github.com/fairbench/fairbench/internal/testserver"
)

func TestMain(m *testing.M) { testserver.Main(m) }

const testSF = "0.01"

func newJob(t *testing.T, tg sqldb.Target, set map[string]string) *job.Job {
	t.Helper()
	opts := map[string]string{OptScaleFactor: testSF}
	for k, v := range set {
		opts[k] = v
	}
	j, err := job.New(tg, Name, opts, randgen.DefaultConfig("uniform"), 1)
	if err != nil {
		t.Fatal(err)
	}
	return j
}

func measure(t *testing.T, j *job.Job) (*result.Result, error) {
	t.Helper()
	res, err := j.Run(context.Background(), runner.Config{Threads: 1, Progress: io.Discard})
	if res == nil {
		t.Fatalf("no result: %v", err)
	}
	if res.TPCH == nil {
		t.Fatalf("result without TPC-H figures: %+v", res)
	}
	return res, err
}

// measureInstrumented runs j as compare does (job.Measured, a server monitor around it) with the
// wait sampler and the statements' accounts on, and checks they covered the timed test: samples
// of the query session alone (the workload's own connection for counters is not a client) and
// the queries' accounts.
func measureInstrumented(t *testing.T, j *job.Job, tg sqldb.Target) *result.Result {
	t.Helper()
	ctx := context.Background()
	mc, err := sqldb.Open(ctx, tg)
	if err != nil {
		t.Fatal(err)
	}
	defer mc.Close()
	j.WaitEvery = 10 * time.Millisecond
	res, err := j.Measured(ctx, runner.Config{Threads: 1, Progress: io.Discard}, servermetrics.NewMonitor(mc, j.PIDs), j.Run)
	if err != nil || res == nil || res.TPCH == nil {
		t.Fatalf("power run: %v", err)
	}
	w := res.Waits
	if w == nil || w.Sessions == 0 || w.Sessions > w.Rounds || w.Error != "" {
		t.Errorf("waits: %+v; want the one query session sampled every round", w)
	}
	st := res.Statements
	costliest := ""
	for i := 0; st != nil && i < min(3, len(st.Top)); i++ {
		costliest += strings.ToLower(st.Top[i].Text)
	}
	if st == nil || st.Error != "" || !strings.Contains(costliest, "lineitem") {
		t.Errorf("statements: %+v; want the queries' accounts, lineitem's among the costliest", st)
	} else {
		t.Logf("waits: %d samples, %.0f%% on CPU, %.0f%% data read; statements: %d calls, %.0f ms, top %.60q",
			w.Sessions, 100*w.Share("cpu"), 100*w.Share("data_read"), st.Calls, st.TotalMS, st.Top[0].Text)
	}
	return res
}

// The whole life of the TPC-H data on each real engine at SF 0.01: prepare, check, a power run
// of all 22 queries whose answers agree across the engines, a throughput run, a timed-out query,
// and a deliberately wrong answer that fails the run.
func TestTPCHOnRealServers(t *testing.T) {
	if _, err := findGenerator(); err != nil {
		if os.Getenv("FAIRBENCH_REQUIRE_ENGINES") != "" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	ctx := context.Background()
	// One generated data set for every engine, so the engines are checked against each other on
	// the same rows; the first engine also exercises prepare's own generation.
	tbl := t.TempDir()
	if _, err := generate(ctx, 0.01, tbl); err != nil {
		t.Fatal(err)
	}
	cache, outs := t.TempDir(), t.TempDir()
	var answered []string

	for i, kind := range testserver.Kinds() {
		t.Run(kind, func(t *testing.T) {
			tg := testserver.Database(t, kind)
			set := map[string]string{OptAnswersCache: cache, OptAnswersOut: filepath.Join(outs, kind)}
			if i > 0 {
				set[OptTblDir] = tbl
			}
			j := newJob(t, tg, set)
			j.PIDs = testserver.Server(t, kind).PIDs
			if err := j.Prepare(ctx, j.Env(2, false, nil, nil)); err != nil {
				t.Fatal(err)
			}
			if err := j.Workload.Check(ctx, j.Env(1, false, nil, nil)); err != nil {
				t.Fatalf("check after prepare: %v", err)
			}

			res := measureInstrumented(t, j, tg)
			res0, tp := res, res.TPCH
			if len(tp.Queries) != numQueries || tp.Mode != "power" || tp.AnswersChecked != CheckedCrossEngine {
				t.Fatalf("power run: %d queries, mode %s, answers %q", len(tp.Queries), tp.Mode, tp.AnswersChecked)
			}
			var hits int64
			for n, q := range tp.Queries {
				if q.Query != n+1 || q.Status != StatusOK || q.Seconds <= 0 {
					t.Errorf("Q%d: status %s (%s), %.3fs", q.Query, q.Status, q.Detail, q.Seconds)
				}
				if !strings.Contains(q.Plan, "scan") && !strings.Contains(q.Plan, "lookup") {
					t.Errorf("Q%d: plan %q, want each table's access path", q.Query, q.Plan)
				}
				hits += q.BufferHits
			}
			if hits == 0 {
				t.Errorf("no buffer hits counted for any query")
			}
			if tp.GeoMeanS <= 0 || tp.LoadSeconds["total"] <= 0 || tp.LoadSeconds["lineitem"] <= 0 {
				t.Errorf("geomean %.4f, load seconds %v", tp.GeoMeanS, tp.LoadSeconds)
			}
			if !res.Complete || res.Server == nil || res.Server.DataSizeBytes <= 0 || !res.Server.Local {
				t.Errorf("complete %v, server %+v", res.Complete, res.Server)
			}
			// The runner timed the queries as it times every workload: its counts, a kind per
			// query, its intervals and the wire tally are there, and each query's time is within
			// the window.
			if res.Transactions != numQueries || res.Errors != 0 || len(res.ByKind) != numQueries || len(res.Intervals) == 0 || res.Wire == nil {
				t.Errorf("runner's figures: %d transactions, %d errors, %d kinds, %d intervals, wire %+v",
					res.Transactions, res.Errors, len(res.ByKind), len(res.Intervals), res.Wire)
			}
			// One read per query, as its connection counted it (Q15's view made and dropped
			// around its SELECT are other); the plans and statistics taken between the queries
			// are not the workload's statements.
			if q := res.Queries; q.Read != numQueries || q.Write != 0 || q.Other != 2 {
				t.Errorf("queries %+v: want %d reads and Q15's two view statements", q, numQueries)
			}
			var sum float64
			for _, q := range tp.Queries {
				sum += q.Seconds
			}
			if sum > res.DurationS {
				t.Errorf("the queries took %.3f s in a window of %.3f s", sum, res.DurationS)
			}
			answered = append(answered, kind)

			// Throughput: two streams at once, each in its own order, Q15's views apart.
			jt := newJob(t, tg, map[string]string{OptMode: "throughput", OptStreams: "2", OptQueries: "1,6,15", OptAnswersCache: cache})
			res, err := measure(t, jt)
			if err != nil {
				t.Fatalf("throughput run: %v", err)
			}
			if len(res.TPCH.Queries) != 6 || res.TPCH.QueriesPerHour <= 0 || res.TPCH.Streams != 2 {
				t.Errorf("throughput: %d queries, %.0f per hour, %d streams", len(res.TPCH.Queries), res.TPCH.QueriesPerHour, res.TPCH.Streams)
			}
			for _, q := range res.TPCH.Queries {
				if q.Status != StatusOK || q.Stream < 1 || q.Stream > 2 {
					t.Errorf("throughput Q%d stream %d: %s %s", q.Query, q.Stream, q.Status, q.Detail)
				}
				if (q.Plan != "") != (q.Stream == 1) {
					t.Errorf("throughput Q%d stream %d: plan %q; want one for stream 1 only", q.Query, q.Stream, q.Plan)
				}
			}

			// A query past --query-timeout is cancelled by the server and is a timeout, not a time
			// nor a failure of the run.
			jo := newJob(t, tg, map[string]string{OptQueries: "1", OptQueryTimeout: "0.001", OptAnswersCache: cache})
			res, err = measure(t, jo)
			if err != nil {
				t.Fatalf("a timeout failed the run: %v", err)
			}
			if q := res.TPCH.Queries[0]; q.Status != StatusTimeout || q.Seconds != 0 || res.Errors != 1 || res.Transactions != 0 {
				t.Errorf("Q1 with a 1 ms timeout: %s (%s), %.3fs; runner counted %d errors, %d transactions",
					q.Status, q.Detail, q.Seconds, res.Errors, res.Transactions)
			}

			if stale := staleOrdersStatistics[kind]; stale != nil {
				plansFollowStatistics(t, tg, j, res0, stale, cache)
			}
			if kind != "postgres" {
				return
			}
			// Rows missing from lineitem: the check and the answers both say so.
			c, err := sqldb.Open(ctx, tg)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if err := c.Exec(ctx, "DELETE FROM lineitem WHERE l_orderkey <= 100"); err != nil {
				t.Fatal(err)
			}
			if err := j.Workload.Check(ctx, j.Env(1, false, nil, nil)); err == nil || !strings.Contains(err.Error(), "lineitem") {
				t.Errorf("check after deleting lineitems: %v", err)
			}
			jw := newJob(t, tg, map[string]string{OptQueries: "1,2", OptAnswersCache: cache})
			res, err = measure(t, jw)
			if err == nil || !strings.Contains(err.Error(), "Q1") {
				t.Fatalf("a wrong answer did not fail the run naming Q1: %v", err)
			}
			if q := res.TPCH.Queries[0]; q.Status != StatusWrong || q.Seconds != 0 || !strings.Contains(q.Detail, "row 1") {
				t.Errorf("Q1 after the delete: %s (%s), %.3fs", q.Status, q.Detail, q.Seconds)
			}
			if q := res.TPCH.Queries[1]; q.Status != StatusOK {
				t.Errorf("Q2 does not read lineitem, yet: %s (%s)", q.Status, q.Detail)
			}
			if res.Complete {
				t.Errorf("a run with a wrong answer is marked complete")
			}

			// A Q15 view a killed run left behind would keep PostgreSQL from dropping lineitem.
			if err := c.Exec(ctx, "CREATE VIEW fb_revenue9 AS SELECT l_suppkey FROM lineitem"); err != nil {
				t.Fatal(err)
			}
			if err := j.Cleanup(ctx, j.Env(1, false, nil, nil)); err != nil {
				t.Fatal(err)
			}
			for _, name := range append(tableNames(), "fb_revenue9") {
				if ok, _ := sqldb.TableExists(ctx, c, name); ok {
					t.Errorf("%s still exists after cleanup", name)
				}
			}
		})
	}

	// The engines' own answer files agree with each other as well (what a comparison reports).
	for _, kind := range answered[min(1, len(answered)):] {
		diffs, err := CompareAnswerDirs(filepath.Join(outs, answered[0]), filepath.Join(outs, kind))
		if err != nil {
			t.Fatal(err)
		}
		if len(diffs) > 0 {
			t.Errorf("%s and %s answered differently: %v", answered[0], kind, diffs)
		}
	}
}

// staleOrdersStatistics make an engine's statistics say the orders table is empty while every
// row is still there, so its answers stay right and its plans change: orders emptied, analyzed
// and filled again with the same rows, with the engine's automatic statistics kept from
// noticing. MySQL is left out: its InnoDB statistics keep counting the rows put back, and no plan
// changed there this way.
var staleOrdersStatistics = map[string][]string{
	"postgres": {"ALTER TABLE orders SET (autovacuum_enabled = off)", "CREATE TEMPORARY TABLE keep AS SELECT * FROM orders",
		"DELETE FROM orders", "ANALYZE orders", "INSERT INTO orders SELECT * FROM keep", "DROP TABLE keep"},
	// MariaDB's optimizer reads the engine-independent statistics, which only ANALYZE ...
	// PERSISTENT writes and nothing updates behind it.
	"mariadb": {"CREATE TEMPORARY TABLE keep AS SELECT * FROM orders", "DELETE FROM orders",
		"ANALYZE TABLE orders PERSISTENT FOR ALL", "INSERT INTO orders SELECT * FROM keep", "DROP TEMPORARY TABLE keep"},
}

// plansFollowStatistics runs the power test again after the statements made the statistics of
// orders stale, and checks that a plan changed and that diff names the query beside its times.
func plansFollowStatistics(t *testing.T, tg sqldb.Target, j *job.Job, before *result.Result, stale []string, cache string) {
	t.Helper()
	ctx := context.Background()
	c, err := sqldb.Open(ctx, tg)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for _, s := range stale {
		var err error
		if strings.HasPrefix(s, "ANALYZE TABLE") {
			_, err = c.Query(ctx, s) // MariaDB answers it with a row per table
		} else {
			err = c.Exec(ctx, s)
		}
		if err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
	after, err := measure(t, newJob(t, tg, map[string]string{OptAnswersCache: cache}))
	if err != nil {
		t.Fatalf("power run on stale statistics: %v", err)
	}
	rows := regress.Diff([]*result.Result{before}, []*result.Result{after}, regress.Options{})
	if len(rows) != 1 || len(rows[0].PlansChanged) == 0 {
		t.Fatalf("no plan named as changed after orders' statistics went stale: %+v", rows)
	}
	t.Logf("plans changed: %s", strings.Join(rows[0].PlansChanged, ", "))
	// Fresh statistics again for what the test does next on PostgreSQL.
	if err := dialect.Of(c).Maintain(ctx, c, "orders"); err != nil {
		t.Fatal(err)
	}
}
