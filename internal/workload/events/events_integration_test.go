package events

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fairbench/fairbench/internal/job"
	"github.com/fairbench/fairbench/internal/randgen"
	"github.com/fairbench/fairbench/internal/result"
	"github.com/fairbench/fairbench/internal/runner"
	"github.com/fairbench/fairbench/internal/sqldb"
	"github.com/fairbench/fairbench/internal/testserver"
	"github.com/fairbench/fairbench/internal/workload"
	"github.com/fairbench/fairbench/internal/workload/workloadtest"
)

func TestMain(m *testing.M) { testserver.Main(m) }

const testCustomers, testEvents = 2000, 20000

var small = map[string]string{"customers": strconv.Itoa(testCustomers), "events": strconv.Itoa(testEvents)}

func newJob(t *testing.T, tg sqldb.Target, wl string, set map[string]string) *job.Job {
	t.Helper()
	return workloadtest.Job(t, tg, wl, set, 3)
}

func TestOptionsAndSharedDataset(t *testing.T) {
	for _, wl := range []string{ingest, join} {
		for _, tc := range []struct {
			set     map[string]string
			wantErr string
		}{
			{map[string]string{}, ""},
			{map[string]string{"customers": "0"}, "--customers must be at least 1"},
			{map[string]string{"events": "0"}, "--events must be at least 1"},
			{map[string]string{"events": "1e6"}, "--events must be a whole number"},
		} {
			_, err := job.New(sqldb.Target{Kind: sqldb.Postgres}, wl, tc.set, randgen.DefaultConfig("uniform"), 1)
			if (err == nil) != (tc.wantErr == "") || err != nil && !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%s %v: error %v, want %q", wl, tc.set, err, tc.wantErr)
			}
		}
	}
	a, _ := workload.Lookup(ingest)
	b, _ := workload.Lookup(join)
	if ka, kb := a.DatasetKey(a.WithDefaults(small)), b.DatasetKey(b.WithDefaults(small)); ka != kb {
		t.Fatalf("dataset keys differ: %q and %q; a suite would prepare twice", ka, kb)
	}
	if a.DatasetKey(a.WithDefaults(nil)) == b.DatasetKey(b.WithDefaults(small)) {
		t.Fatal("different sizes share a dataset key")
	}
}

func run(t *testing.T, j *job.Job) *result.Result {
	t.Helper()
	return workloadtest.Run(t, j, 8, 1500*time.Millisecond)
}

func TestEventsOnRealServers(t *testing.T) {
	defer func(n int) { loadChunk = n }(loadChunk)
	loadChunk = 3000 // several jobs per table, so loading runs in parallel
	fingerprints := map[string]string{}
	for _, kind := range testserver.Kinds() {
		t.Run(kind, func(t *testing.T) {
			tg := testserver.Database(t, kind)
			ctx := context.Background()
			jj := newJob(t, tg, join, small)
			workloadtest.Prepare(t, jj, 3)
			c := workloadtest.Conn(t, tg)
			loaded := workloadtest.Rows(t, c, "SELECT COUNT(*), MIN(id), MAX(id), MIN(customer_id), MAX(customer_id), COUNT(DISTINCT action) FROM events")[0]
			if want := []string{strconv.Itoa(testEvents), "1", strconv.Itoa(testEvents)}; strings.Join(loaded[:3], " ") != strings.Join(want, " ") {
				t.Fatalf("events count/min/max id = %v, want %v", loaded[:3], want)
			}
			lo, _ := strconv.Atoi(loaded[3])
			hi, _ := strconv.Atoi(loaded[4])
			if lo < 1 || hi > testCustomers || loaded[5] != strconv.Itoa(len(actions)) {
				t.Fatalf("customer ids %s..%s and %s actions, want within 1..%d and all %d", loaded[3], loaded[4], loaded[5], testCustomers, len(actions))
			}
			// The same seed gives the same events on every engine.
			fingerprints[kind] = strings.Join(workloadtest.Rows(t, c, "SELECT SUM(customer_id), SUM(CASE WHEN action = 'login' THEN id ELSE 0 END) FROM events")[0], " ")
			if got := workloadtest.Rows(t, c, "SELECT COUNT(*) FROM customers")[0][0]; got != strconv.Itoa(testCustomers) {
				t.Fatalf("customers: %s rows", got)
			}
			workloadtest.PrepareAgainRefused(t, jj, 1)
			if err := jj.Workload.Check(ctx, jj.Env(1, false, nil, nil)); err != nil {
				t.Fatalf("check after prepare: %v", err)
			}

			res := run(t, jj)
			if res.Errors == 0 && res.Queries.Read != res.Transactions {
				t.Fatalf("%d reads for %d joins", res.Queries.Read, res.Transactions)
			}
			ji := newJob(t, tg, ingest, small)
			res = run(t, ji)
			if res.Errors == 0 && res.Queries.Write != res.Transactions {
				t.Fatalf("%d writes for %d inserts", res.Queries.Write, res.Transactions)
			}
			// The counted inserts, and at most one per client (8) that finished after the measured
			// window closed, which the runner does not count.
			after := workloadtest.Rows(t, c, "SELECT COUNT(*), MAX(id) FROM events")[0]
			rows, _ := strconv.ParseInt(after[0], 10, 64)
			if want := testEvents + res.Transactions; rows < want || rows > want+8 {
				t.Fatalf("events has %d rows after %d inserts on %d preloaded, want %d to %d", rows, res.Transactions, testEvents, want, want+8)
			}
			if maxID, _ := strconv.ParseInt(after[1], 10, 64); maxID <= testEvents {
				t.Fatalf("max(id) = %d: ingested events did not get ids after the preload", maxID)
			}
			// The join reads the same tables after ingestion too, and both checks pass.
			run(t, jj)
			if err := ji.Workload.Check(ctx, ji.Env(1, false, nil, nil)); err != nil {
				t.Fatalf("check after the runs: %v", err)
			}

			wrong := newJob(t, tg, ingest, map[string]string{"customers": "5000", "events": strconv.Itoa(testEvents)})
			if _, err := wrong.Run(ctx, runner.Config{Threads: 1, Duration: 100 * time.Millisecond}); err == nil || !strings.Contains(err.Error(), "prepared with --customers 2000") {
				t.Fatalf("run with another --customers: %v, want a refusal", err)
			}

			// A customer deleted behind the foreign key's back.
			if c.Kind().MySQLFamily() {
				workloadtest.Exec(t, c, "SET foreign_key_checks = 0")
			} else {
				workloadtest.Exec(t, c, "SET session_replication_role = replica") // the test server's user is a superuser
			}
			victim := workloadtest.Rows(t, c, "SELECT customer_id FROM events WHERE id = 7")[0][0]
			workloadtest.Exec(t, c, "DELETE FROM customers WHERE id = "+victim)
			err := ji.Workload.Check(ctx, ji.Env(1, false, nil, nil))
			if err == nil || !strings.Contains(err.Error(), "reference a customer that does not exist") ||
				!strings.Contains(err.Error(), "customers has 1999 rows, prepared with 2000") {
				t.Fatalf("check after deleting customer %s: %v, want the orphaned events and the count named", victim, err)
			}
			workloadtest.Exec(t, c, "DELETE FROM events WHERE customer_id = "+victim)
			workloadtest.Exec(t, c, "INSERT INTO customers (id, name, address) VALUES ("+victim+", 'back', 'again')")
			err = ji.Workload.Check(ctx, ji.Env(1, false, nil, nil))
			if err == nil || !strings.Contains(err.Error(), "of the 20000 preloaded events (ids 1..20000) are there") || strings.Contains(err.Error(), "does not exist") {
				t.Fatalf("check after deleting preloaded events: %v, want the preload named alone", err)
			}

			workloadtest.Cleanup(t, ji, c, tableNames...)
		})
	}
	for _, fp := range fingerprints {
		if fp != fingerprints["postgres"] {
			t.Errorf("preloaded events differ between engines: %v", fingerprints)
			break
		}
	}
}

// Loading with one connection or several gives the same rows.
func TestLoadDoesNotDependOnThreads(t *testing.T) {
	defer func(n int) { loadChunk = n }(loadChunk)
	loadChunk = 1500
	var sums []string
	for _, threads := range []int{1, 4} {
		tg := testserver.Database(t, "postgres")
		j := newJob(t, tg, ingest, map[string]string{"customers": "300", "events": "6000"})
		workloadtest.Prepare(t, j, threads)
		c := workloadtest.Conn(t, tg)
		sums = append(sums, strings.Join(workloadtest.Rows(t, c, "SELECT SUM(customer_id * id), COUNT(DISTINCT customer_id) FROM events")[0], " "))
	}
	if sums[0] != sums[1] {
		t.Fatalf("1 and 4 loading connections gave different events: %v", sums)
	}
}

func TestRefusesForeignTables(t *testing.T) {
	for _, kind := range testserver.Kinds() {
		t.Run(kind, func(t *testing.T) {
			tg := testserver.Database(t, kind)
			c := workloadtest.Conn(t, tg)
			workloadtest.Exec(t, c, "CREATE TABLE events (id int PRIMARY KEY, note varchar(20))")
			workloadtest.Exec(t, c, "INSERT INTO events VALUES (1, 'precious')")
			j := newJob(t, tg, ingest, small)
			workloadtest.ForeignTableLeftAlone(t, c, j, "events", "customers", "SELECT note FROM events", "precious")
		})
	}
}
