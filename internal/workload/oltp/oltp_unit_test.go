package oltp

import (
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/fairbench/fairbench/internal/sqldb"
	"github.com/fairbench/fairbench/internal/sqldb/fakeconn"
	"github.com/fairbench/fairbench/internal/workload/workloadtest"
)

const (
	pointSelect = "SELECT c FROM sbtest WHERE id=?"
	simpleRange = "SELECT c FROM sbtest WHERE id BETWEEN ? AND ?"
	sumRange    = "SELECT SUM(k) FROM sbtest WHERE id BETWEEN ? AND ?"
	orderRange  = "SELECT c FROM sbtest WHERE id BETWEEN ? AND ? ORDER BY c"
	distinct    = "SELECT DISTINCT c FROM sbtest WHERE id BETWEEN ? AND ? ORDER BY c"
	indexUpd    = "UPDATE sbtest SET k=k+1 WHERE id=?"
	nonIndexUpd = "UPDATE sbtest SET c=? WHERE id=?"
	deleteRow   = "DELETE FROM sbtest WHERE id=?"
	insertRow   = "INSERT INTO sbtest (id, k, c, pad) VALUES (?, ?, ?, ?)"
	autoInsert  = "INSERT INTO sbtest (k, c, pad) VALUES (?, ?, ?)"
)

// The unit layer's check of sysbench compatibility: each workload's transaction sends
// sysbench 1.0's statements (oltp_common.lua), in its order and counts (each group of
// statements on a table drawn for it, every table in turn), with keys within the table, and counts them as sysbench does. No server: the
// fake connection records what would have been sent; that the SQL runs is the integration
// tests' part.
func TestTransactionShape(t *testing.T) {
	const tables, rows = 2, 1000
	reads := slices.Concat(slices.Repeat([]string{pointSelect}, 10), []string{simpleRange, sumRange, orderRange, distinct})
	cases := []struct {
		name               string
		want               []string
		read, write, other int64
	}{
		{"oltp_read_write", slices.Concat([]string{"BEGIN"}, reads, []string{indexUpd, nonIndexUpd, deleteRow, insertRow, "COMMIT"}), 14, 4, 2},
		{"oltp_read_only", slices.Concat([]string{"BEGIN"}, reads, []string{"COMMIT"}), 14, 0, 2},
		{"oltp_point_select", []string{pointSelect}, 1, 0, 0},
		{"oltp_insert", []string{autoInsert}, 0, 1, 0},
	}
	table := regexp.MustCompile(`sbtest(\d+)`)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			conn := fakeconn.New(sqldb.Postgres)
			wk, err := workloadtest.Worker(t, c.name, map[string]string{"tables": "2", "table-size": "1000"}, conn, 1)
			if err != nil {
				t.Fatal(err)
			}
			seen := map[string]bool{}
			for range 50 {
				sent, q := workloadtest.Transaction(t, wk, conn)
				var got []string
				names := map[string]bool{}
				for _, call := range sent {
					if m := table.FindStringSubmatch(call.SQL); m != nil {
						names[m[0]] = true
					}
					got = append(got, table.ReplaceAllString(call.SQL, "sbtest"))
					checkKeys(t, call, rows)
				}
				if !slices.Equal(got, c.want) {
					t.Fatalf("statements %q\nwant %q", got, c.want)
				}
				for n := range names {
					seen[n] = true
				}
				if q.Reads != c.read || q.Writes != c.write || q.Other() != c.other {
					t.Errorf("counted %d reads, %d writes, %d other; sysbench counts %d, %d, %d", q.Reads, q.Writes, q.Other(), c.read, c.write, c.other)
				}
			}
			if len(seen) != tables {
				t.Errorf("50 transactions used tables %v, want all %d", seen, tables)
			}
		})
	}
}

// checkKeys: every key argument of a statement on id lies within the table's rows; a range's
// end may lie beyond them, as in sysbench, and an insert's k is a value, not a key.
func checkKeys(t *testing.T, call fakeconn.Call, rows int) {
	t.Helper()
	if call.SQL == "BEGIN" || call.SQL == "COMMIT" {
		return
	}
	for i, a := range call.Args {
		n, ok := asInt(a)
		if !ok || (i > 0 && (len(call.Args) == 4 || strings.Contains(call.SQL, "BETWEEN"))) {
			continue
		}
		if n < 1 || n > rows {
			t.Errorf("%s with argument %d = %d, outside the table's keys 1..%d", call.SQL, i, n, rows)
		}
	}
}

func asInt(a any) (int, bool) {
	switch v := a.(type) {
	case int:
		return v, true
	case int64:
		return int(v), true
	}
	return 0, false
}
