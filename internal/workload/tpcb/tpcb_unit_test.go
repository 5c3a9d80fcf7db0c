package tpcb

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/fairbench/fairbench/internal/sqldb"
	"github.com/fairbench/fairbench/internal/sqldb/fakeconn"
	"github.com/fairbench/fairbench/internal/workload"
	"github.com/fairbench/fairbench/internal/workload/workloadtest"
)

func fakeWorker(t *testing.T, scale string, conn *fakeconn.Conn) (workload.Worker, error) {
	t.Helper()
	return workloadtest.Worker(t, name, map[string]string{"scale": scale}, conn, 3)
}

// pgbench's tpcb-like script, statement by statement, with one delta moving the account, the
// teller, the branch and the history together, and every id within the scale's rows.
func TestTransactionIsPgbenchs(t *testing.T) {
	conn := fakeconn.New(sqldb.Postgres)
	conn.Rows["SELECT COUNT(*) FROM pgbench_branches"] = [][]string{{"2"}}
	wk, err := fakeWorker(t, "2", conn)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"BEGIN", sqlUpdAccount, sqlSelAccount, sqlUpdTeller, sqlUpdBranch, sqlInsHistory, "COMMIT"}
	for range 100 {
		sent, q := workloadtest.Transaction(t, wk, conn)
		var got []string
		for _, c := range sent {
			got = append(got, c.SQL)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("statements %q, want pgbench's %q", got, want)
		}
		delta, aid := sent[1].Args[0], sent[1].Args[1]
		tid, bid := sent[3].Args[1], sent[4].Args[1]
		if sent[3].Args[0] != delta || sent[4].Args[0] != delta || sent[2].Args[0] != aid ||
			!slices.Equal(sent[5].Args, []any{tid, bid, aid, delta}) {
			t.Errorf("the transaction's values disagree: %+v", sent)
		}
		for _, c := range []struct {
			v   any
			max int64
		}{{aid, 200000}, {tid, 20}, {bid, 2}} {
			if n := c.v.(int64); n < 1 || n > c.max {
				t.Errorf("id %d outside 1..%d at scale 2", n, c.max)
			}
		}
		if d := delta.(int64); d < -5000 || d > 5000 {
			t.Errorf("delta %d outside pgbench's -5000..5000", d)
		}
		if q.Reads != 1 || q.Writes != 4 || q.Other() != 2 {
			t.Errorf("counted %+v, want 1 read, 4 writes, 2 other", q)
		}
	}
}

// Tables prepared at another scale are refused before the run, naming the scale to pass; a
// missing table is named as such.
func TestScaleChecked(t *testing.T) {
	conn := fakeconn.New(sqldb.Postgres)
	conn.Rows["SELECT COUNT(*) FROM pgbench_branches"] = [][]string{{"5"}}
	_, err := fakeWorker(t, "2", conn)
	if err == nil || !strings.Contains(err.Error(), "--scale 5") {
		t.Errorf("tables of scale 5 run at scale 2: %v", err)
	}
	conn = fakeconn.New(sqldb.Postgres)
	conn.Fail["pgbench_branches"] = errors.New(`relation "pgbench_branches" does not exist`)
	if _, err := fakeWorker(t, "2", conn); err == nil {
		t.Error("a missing table was not reported")
	}
}
