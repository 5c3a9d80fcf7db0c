package pgbenchscript_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/fairbench/fairbench/internal/testserver"
	"github.com/fairbench/fairbench/internal/workload/workloadtest"

	_ "github.com/fairbench/fairbench/internal/workload/all"
)

func TestMain(m *testing.M) { testserver.Main(m) }

var pgbenchTables = []string{"pgbench_branches", "pgbench_tellers", "pgbench_accounts", "pgbench_history"}

// pgbench's tpcb-like script, as it is, on every engine: every transaction commits (its END
// sent as each engine spells it), and the balances it moves still add up (the tpcb check);
// beside it a script that keeps a row with \gset and branches on it, which runs without an
// error only if the row was kept (pgbench scripts as they are).
func TestScriptsOnEveryEngine(t *testing.T) {
	for _, kind := range []string{"postgres", "mariadb", "mysql"} {
		t.Run(kind, func(t *testing.T) {
			tg := testserver.Database(t, kind)
			c := workloadtest.Conn(t, tg)
			j := workloadtest.Job(t, tg, "pgbench", map[string]string{"scale": "1", "script": "tpcb-like"}, 11)
			workloadtest.Prepare(t, j, 2)
			res := workloadtest.Run(t, j, 2, 1500*time.Millisecond)
			if bk := res.ByKind["tpcb-like"]; bk == nil || bk.Transactions == 0 || res.Errors > 0 {
				t.Fatalf("tpcb-like: %+v, %d errors", bk, res.Errors)
			}
			// Per transaction: 1 read, 4 writes, BEGIN and END, as pgbench counts them.
			if q := res.Queries; q.Read == 0 || q.Write != 4*q.Read || q.Other != 2*q.Read {
				t.Errorf("queries %+v: want 4 writes and 2 others per read", q)
			}
			if dc, err := j.Check(context.Background(), nil); err != nil || !dc.Passed {
				t.Errorf("tpcb check after tpcb-like: %+v, %v", dc, err)
			}
			// pgbench -r's report: each of the seven SQL commands, by line, once per transaction.
			if len(res.ClientStatements) != 7 || !strings.HasPrefix(res.ClientStatements[0].Label, "tpcb-like:5: BEGIN") {
				t.Errorf("client statements %+v: want tpcb-like's seven, BEGIN at line 5 first", res.ClientStatements)
			}
			for _, st := range res.ClientStatements {
				if st.Executions < res.Transactions || st.Failed > res.Retries || st.MeanMS <= 0 {
					t.Errorf("%s: %+v for %d transactions", st.Label, st, res.Transactions)
				}
			}

			mixed := workloadtest.Job(t, tg, "pgbench", map[string]string{"scale": "1", "script": "select-only@2,testdata/gset.sql@1"}, 12)
			res = workloadtest.Run(t, mixed, 2, 1500*time.Millisecond)
			for _, k := range []string{"select-only", "testdata/gset.sql"} {
				if bk := res.ByKind[k]; bk == nil || bk.Transactions == 0 || bk.Errors > 0 {
					t.Errorf("%s: %+v", k, bk)
				}
			}
			if so, gs := res.ByKind["select-only"], res.ByKind["testdata/gset.sql"]; so != nil && gs != nil && so.Transactions < gs.Transactions {
				t.Errorf("weights 2:1 but select-only ran %d and gset.sql %d", so.Transactions, gs.Transactions)
			}
			// The example in docs and examples/: zipfian keys, a \gset without a prefix, a pause.
			ex := workloadtest.Job(t, tg, "pgbench", map[string]string{"scale": "1", "script": "../../examples/pgbench/hot-accounts.sql"}, 13)
			if res = workloadtest.Run(t, ex, 2, time.Second); res.Errors > 0 || res.Queries.Write == 0 {
				t.Errorf("hot-accounts.sql: %d errors, queries %+v", res.Errors, res.Queries)
			}
			workloadtest.Cleanup(t, j, c, pgbenchTables...)
		})
	}
}

// A retried script is the same script again, as pgbench's --max-tries runs it: a script that fails to serialize most of the time is still half of the
// scripts drawn at weight 1:1 (drawing anew on a retry made it about a fifth). PostgreSQL only:
// SET TRANSACTION inside the transaction is its way.
func TestRetryRunsTheSameScript(t *testing.T) {
	tg := testserver.Database(t, "postgres")
	c := workloadtest.Conn(t, tg)
	j := workloadtest.Job(t, tg, "pgbench", map[string]string{"scale": "1", "script": "testdata/hotwrite.sql@1,select-only@1"}, 14)
	workloadtest.Prepare(t, j, 2)
	res := workloadtest.Run(t, j, 8, 2*time.Second)
	w, r := res.ByKind["testdata/hotwrite.sql"], res.ByKind["select-only"]
	if w == nil || r == nil || res.Retries < 100 {
		t.Fatalf("by kind %+v, %d retries: want both scripts and at least 100 retries to test with", res.ByKind, res.Retries)
	}
	// A script that ran out of tries is an error of its kind: still drawn.
	share := float64(w.Transactions+w.Errors) / float64(w.Transactions+w.Errors+r.Transactions+r.Errors)
	t.Logf("hotwrite %d (+%d errors), select-only %d: %.1f%%, %d retries", w.Transactions, w.Errors, r.Transactions, 100*share, res.Retries)
	if share < 0.45 || share > 0.55 {
		t.Errorf("hotwrite.sql is %.1f%% of the scripts drawn with %d retries, want 45-55%% (weight 1 of 2)", 100*share, res.Retries)
	}
	workloadtest.Cleanup(t, j, c, pgbenchTables...)
}
