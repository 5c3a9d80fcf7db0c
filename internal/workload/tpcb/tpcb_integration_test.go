package tpcb

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fairbench/fairbench/internal/job"
	"github.com/fairbench/fairbench/internal/randgen"
	"github.com/fairbench/fairbench/internal/runner"
	"github.com/fairbench/fairbench/internal/sqldb"
	"github.com/fairbench/fairbench/internal/testserver"
	"github.com/fairbench/fairbench/internal/workload/workloadtest"
)

func TestMain(m *testing.M) { testserver.Main(m) }

func newJob(t *testing.T, tg sqldb.Target, set map[string]string) *job.Job {
	t.Helper()
	return workloadtest.Job(t, tg, name, set, 11)
}

func TestOptions(t *testing.T) {
	tg := sqldb.Target{Kind: sqldb.Postgres}
	for _, tc := range []struct {
		set     map[string]string
		wantErr string
	}{
		{map[string]string{}, ""},
		{map[string]string{"scale": "0"}, "--scale must be at least 1"},
		{map[string]string{"scale": "x"}, "--scale must be a whole number"},
		{map[string]string{"scale": "30000"}, "at most 20000"},
		{map[string]string{"fillfactor": "5"}, "--fillfactor must be at least 10"},
		{map[string]string{"fillfactor": "101"}, "between 10 and 100"},
	} {
		_, err := job.New(tg, name, tc.set, randgen.DefaultConfig("uniform"), 1)
		if (err == nil) != (tc.wantErr == "") || err != nil && !strings.Contains(err.Error(), tc.wantErr) {
			t.Errorf("%v: error %v, want %q", tc.set, err, tc.wantErr)
		}
	}
}

// The whole life of the pgbench tables on each engine: pgbench -i's rows, pgbench's statements
// per transaction, the balance invariants after a concurrent run, a check that catches a teller
// changed by hand, and a cleanup that removes them.
func TestTPCBOnRealServers(t *testing.T) {
	for _, kind := range testserver.Kinds() {
		t.Run(kind, func(t *testing.T) {
			tg := testserver.Database(t, kind)
			ctx := context.Background()
			j := newJob(t, tg, map[string]string{"scale": "2"})
			workloadtest.Prepare(t, j, 2)
			c := workloadtest.Conn(t, tg)
			checkLoadedLikePgbench(t, c, 2)

			workloadtest.PrepareAgainRefused(t, j, 1)

			res := workloadtest.Run(t, j, 8, 1500*time.Millisecond)
			if res.Retries == 0 && res.Errors == 0 {
				n := res.Transactions
				if res.Queries.Read != n || res.Queries.Write != 4*n || res.Queries.Other != 2*n {
					t.Fatalf("queries r/w/o = %d/%d/%d for %d transactions, want 1/4/2 each",
						res.Queries.Read, res.Queries.Write, res.Queries.Other, n)
				}
			}
			// Every committed transaction left exactly one history row: the counted ones, and at most
			// one per thread that finished after the measured window closed (the runner does not
			// count those).
			got, _ := strconv.ParseInt(workloadtest.Rows(t, c, "SELECT COUNT(*) FROM pgbench_history")[0][0], 10, 64)
			if got < res.Transactions || got > res.Transactions+8 {
				t.Fatalf("pgbench_history has %d rows after %d transactions, want %d to %d", got, res.Transactions, res.Transactions, res.Transactions+8)
			}
			if err := j.Workload.Check(ctx, j.Env(1, false, nil, nil)); err != nil {
				t.Fatalf("check after the run: %v", err)
			}
			wrong := newJob(t, tg, map[string]string{"scale": "3"})
			if _, err := wrong.Run(ctx, runner.Config{Threads: 1, Duration: 100 * time.Millisecond}); err == nil || !strings.Contains(err.Error(), "prepared with --scale 2, not --scale 3") {
				t.Fatalf("run with another --scale: %v, want a refusal", err)
			}

			workloadtest.Exec(t, c, "UPDATE pgbench_tellers SET tbalance = tbalance + 7 WHERE tid = 3")
			err := j.Workload.Check(ctx, j.Env(1, false, nil, nil))
			if err == nil || !strings.Contains(err.Error(), "sum(tbalance)") || strings.Contains(err.Error(), "sum(bbalance)") {
				t.Fatalf("check after changing a teller: %v, want it to name sum(tbalance) alone", err)
			}
			workloadtest.Exec(t, c, "DELETE FROM pgbench_accounts WHERE aid = 5")
			if err := j.Workload.Check(ctx, j.Env(1, false, nil, nil)); err == nil || !strings.Contains(err.Error(), "pgbench_accounts rows = 199999, expected 200000") {
				t.Fatalf("check after deleting an account: %v, want the row count named", err)
			}

			workloadtest.Cleanup(t, j, c, tableNames...)
			if err := j.Workload.Check(ctx, j.Env(1, false, nil, nil)); err == nil || !strings.Contains(err.Error(), "fairbench prepare --workload tpcb") {
				t.Fatalf("check without tables: %v, want a hint to prepare", err)
			}
		})
	}
}

func checkLoadedLikePgbench(t *testing.T, c sqldb.Conn, scale int) {
	t.Helper()
	for _, tc := range []struct {
		sql  string
		want []string
	}{
		{"SELECT COUNT(*), MIN(bid), MAX(bid), SUM(bbalance), COUNT(filler) FROM pgbench_branches",
			[]string{strconv.Itoa(scale), "1", strconv.Itoa(scale), "0", "0"}},
		{"SELECT COUNT(*), MIN(tid), MAX(tid), SUM(tbalance), COUNT(filler), MAX(bid) FROM pgbench_tellers",
			[]string{strconv.Itoa(10 * scale), "1", strconv.Itoa(10 * scale), "0", "0", strconv.Itoa(scale)}},
		{"SELECT COUNT(*), MIN(aid), MAX(aid), SUM(abalance), COUNT(filler), COUNT(DISTINCT bid) FROM pgbench_accounts",
			[]string{strconv.Itoa(100000 * scale), "1", strconv.Itoa(100000 * scale), "0", strconv.Itoa(100000 * scale), strconv.Itoa(scale)}},
		// pgbench's bid for an account is (aid-1)/100000+1 and its teller's (tid-1)/10+1.
		{"SELECT bid FROM pgbench_accounts WHERE aid IN (100000, 100001) ORDER BY aid", []string{"1"}},
		{"SELECT bid FROM pgbench_tellers WHERE tid = 11", []string{"2"}},
		{"SELECT COUNT(*) FROM pgbench_history", []string{"0"}},
	} {
		rows := workloadtest.Rows(t, c, tc.sql)
		for i, w := range tc.want {
			if rows[0][i] != w {
				t.Fatalf("%s: got %v, want %v", tc.sql, rows[0], tc.want)
			}
		}
	}
	var pks [][]string
	if c.Kind().MySQLFamily() {
		pks = workloadtest.Rows(t, c, "SELECT COUNT(*) FROM information_schema.table_constraints WHERE table_schema = DATABASE() "+
			"AND constraint_type = 'PRIMARY KEY' AND table_name LIKE 'pgbench%'")
	} else {
		pks = workloadtest.Rows(t, c, "SELECT COUNT(*) FROM pg_constraint WHERE contype = 'p' AND conrelid::regclass::text LIKE 'pgbench%'")
	}
	if pks[0][0] != "3" {
		t.Fatalf("%s primary keys on pgbench tables, want 3 (branches, tellers, accounts)", pks[0][0])
	}
}

// fairbench never touches pgbench tables it did not create, such as the ones 'pgbench -i' makes.
func TestRefusesPgbenchsOwnTables(t *testing.T) {
	for _, kind := range testserver.Kinds() {
		t.Run(kind, func(t *testing.T) {
			tg := testserver.Database(t, kind)
			c := workloadtest.Conn(t, tg)
			workloadtest.Exec(t, c, "CREATE TABLE pgbench_tellers (tid int NOT NULL, bid int, tbalance int, filler char(84))")
			workloadtest.Exec(t, c, "INSERT INTO pgbench_tellers VALUES (1, 1, 42, NULL)")
			j := newJob(t, tg, nil)
			workloadtest.ForeignTableLeftAlone(t, c, j, "pgbench_tellers", "pgbench_branches", "SELECT tbalance FROM pgbench_tellers", "42")
		})
	}
}
