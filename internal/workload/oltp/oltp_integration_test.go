package oltp

import (
	"context"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fairbench/fairbench/internal/job"
	"github.com/fairbench/fairbench/internal/sqldb"
	"github.com/fairbench/fairbench/internal/testserver"
	"github.com/fairbench/fairbench/internal/workload/workloadtest"
)

func TestMain(m *testing.M) { testserver.Main(m) }

const testTables, testRows = 2, 2000

// newJob sizes every job to the small test tables, so that all workloads run on what one
// prepare loaded.
func newJob(t *testing.T, tg sqldb.Target, name string, extra map[string]string) *job.Job {
	t.Helper()
	set := map[string]string{"tables": strconv.Itoa(testTables), "table-size": strconv.Itoa(testRows)}
	for k, v := range extra {
		set[k] = v
	}
	return workloadtest.Job(t, tg, name, set, 7)
}

// The whole life of the sysbench tables on each real engine: prepare gives sysbench's rows,
// every workload sends exactly sysbench's statements per transaction, cleanup removes only ours.
func TestOLTPOnRealServers(t *testing.T) {
	for _, kind := range testserver.Kinds() {
		t.Run(kind, func(t *testing.T) {
			tg := testserver.Database(t, kind)
			j := newJob(t, tg, "oltp_read_write", nil)
			workloadtest.Prepare(t, j, 2)
			c := workloadtest.Conn(t, tg)
			checkLoadedLikeSysbench(t, c)

			// Preparing again must refuse rather than touch the tables.
			workloadtest.PrepareAgainRefused(t, j, 2)

			// Workloads that keep the row count first; delete and insert last.
			for _, name := range []string{"oltp_read_write", "oltp_read_only", "oltp_write_only", "oltp_point_select",
				"oltp_update_index", "oltp_update_non_index", "select_random_points", "select_random_ranges", "oltp_90_10",
				"oltp_delete", "oltp_insert"} {
				t.Run(name, func(t *testing.T) { runAndCountQueries(t, tg, name) })
			}

			var tables []string
			for n := 1; n <= testTables; n++ {
				tables = append(tables, tableName(n))
			}
			workloadtest.Cleanup(t, j, c, tables...)
		})
	}
}

func checkLoadedLikeSysbench(t *testing.T, c sqldb.Conn) {
	t.Helper()
	cShape := regexp.MustCompile(`^([0-9]{11}-){9}[0-9]{11}$`)
	padShape := regexp.MustCompile(`^([0-9]{11}-){4}[0-9]{11}$`)
	for n := 1; n <= testTables; n++ {
		rows := workloadtest.Rows(t, c, "SELECT COUNT(*), MIN(id), MAX(id), MIN(k), MAX(k) FROM "+tableName(n))
		want := []string{strconv.Itoa(testRows), "1", strconv.Itoa(testRows)}
		for i, w := range want {
			if rows[0][i] != w {
				t.Fatalf("%s: count/min/max id = %v, want %v", tableName(n), rows[0][:3], want)
			}
		}
		if k, _ := strconv.Atoi(rows[0][4]); k < 1 || k > testRows {
			t.Fatalf("%s: k outside 1..table-size: %v", tableName(n), rows[0][3:])
		}
		for _, r := range workloadtest.Rows(t, c, "SELECT c, pad FROM "+tableName(n)+" WHERE id IN (1, 1000, 2000)") {
			// CHAR(n) values come back blank-padded on PostgreSQL; sysbench's strings are 119 and 59 chars.
			if cv, pv := strings.TrimRight(r[0], " "), strings.TrimRight(r[1], " "); !cShape.MatchString(cv) || !padShape.MatchString(pv) {
				t.Fatalf("%s: c=%q pad=%q do not have sysbench's digit-group shape", tableName(n), cv, pv)
			}
		}
	}
	// The secondary index on k exists, created after the load as sysbench does.
	var idx [][]string
	if c.Kind().MySQLFamily() {
		idx = workloadtest.Rows(t, c, "SELECT COUNT(*) FROM information_schema.statistics WHERE table_schema = DATABASE() AND index_name LIKE 'k\\_%'")
	} else {
		idx = workloadtest.Rows(t, c, "SELECT COUNT(*) FROM pg_indexes WHERE schemaname = current_schema() AND indexname LIKE 'k\\_%'")
	}
	if idx[0][0] != strconv.Itoa(testTables) {
		t.Fatalf("secondary indexes k_N: %s, want %d", idx[0][0], testTables)
	}
}

func runAndCountQueries(t *testing.T, tg sqldb.Target, name string) {
	t.Helper()
	j := newJob(t, tg, name, nil)
	res := workloadtest.Run(t, j, 2, 600*time.Millisecond)
	r, w, o := j.Workload.(*oltp).QueriesPerTransaction()
	if res.Retries == 0 && res.Errors == 0 {
		n := res.Transactions
		if res.Queries.Read != n*int64(r) || res.Queries.Write != n*int64(w) || res.Queries.Other != n*int64(o) {
			t.Fatalf("queries r/w/o = %d/%d/%d for %d transactions, want exactly %d/%d/%d per transaction",
				res.Queries.Read, res.Queries.Write, res.Queries.Other, n, r, w, o)
		}
	}
	if name == "oltp_read_write" && r+w+o != 20 {
		t.Fatalf("oltp_read_write sends %d queries per transaction, sysbench sends 20", r+w+o)
	}
	if res.LatencyMS.P50 <= 0 || res.LatencyMS.Max < res.LatencyMS.P99 || len(res.Intervals) == 0 || res.Histogram == "" {
		t.Fatalf("latency summary incomplete: %+v, %d intervals", res.LatencyMS, len(res.Intervals))
	}
	if name != "oltp_delete" && name != "oltp_insert" {
		if err := j.Workload.Check(context.Background(), j.Env(1, false, nil, nil)); err != nil {
			t.Fatalf("check after %s: %v", name, err)
		}
	}
}

// fairbench never drops a table it did not create, with or without --force.
func TestForeignTablesAreLeftAlone(t *testing.T) {
	for _, kind := range []string{"postgres", "mariadb"} {
		t.Run(kind, func(t *testing.T) {
			tg := testserver.Database(t, kind)
			ctx := context.Background()
			c := workloadtest.Conn(t, tg)
			workloadtest.Exec(t, c, "CREATE TABLE sbtest1 (id INTEGER PRIMARY KEY, note VARCHAR(20))")
			workloadtest.Exec(t, c, "INSERT INTO sbtest1 VALUES (1, 'precious')")
			j := newJob(t, tg, "oltp_point_select", nil)
			for _, force := range []bool{false, true} {
				err := j.Prepare(ctx, j.Env(1, force, nil, nil))
				if err == nil || !strings.Contains(err.Error(), "not created by fairbench") {
					t.Fatalf("prepare (force=%v) over a foreign sbtest1: %v, want a refusal", force, err)
				}
			}
			if err := j.Cleanup(ctx, j.Env(1, false, nil, nil)); err == nil || !strings.Contains(err.Error(), "left sbtest1") {
				t.Fatalf("cleanup: %v, want it to say it left sbtest1 alone", err)
			}
			if rows := workloadtest.Rows(t, c, "SELECT note FROM sbtest1"); len(rows) != 1 || rows[0][0] != "precious" {
				t.Fatalf("the user's table was changed: %v", rows)
			}
		})
	}
}
