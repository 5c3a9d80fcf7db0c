package events

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/fairbench/fairbench/internal/sqldb"
	"github.com/fairbench/fairbench/internal/sqldb/fakeconn"
	"github.com/fairbench/fairbench/internal/workload"
	"github.com/fairbench/fairbench/internal/workload/workloadtest"
)

func worker(t *testing.T, name string, c *fakeconn.Conn) (workload.Worker, error) {
	t.Helper()
	return workloadtest.Worker(t, name, map[string]string{"customers": "50", "events": "400"}, c, 9)
}

func metaConn(customers, events string) *fakeconn.Conn {
	c := fakeconn.New(sqldb.MySQL)
	c.Rows["SELECT name, value FROM events_meta"] = [][]string{{"customers", customers}, {"preloaded_events", events}}
	return c
}

// Ingest is one autocommitted INSERT of an event of a known action for an existing customer;
// join one SELECT of a preloaded event by id, which must find its one row.
func TestOneStatementEach(t *testing.T) {
	cases := []struct {
		name, sql string
		max       int64
		read      int64
	}{{ingest, sqlIngest, 50, 0}, {join, sqlJoin, 400, 1}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			conn := metaConn("50", "400")
			wk, err := worker(t, c.name, conn)
			if err != nil {
				t.Fatal(err)
			}
			kinds := map[string]bool{}
			for range 300 {
				sent, q := workloadtest.Transaction(t, wk, conn)
				if len(sent) != 1 || sent[0].SQL != c.sql {
					t.Fatalf("sent %+v, want one %q", sent, c.sql)
				}
				if id := sent[0].Args[0].(int64); id < 1 || id > c.max {
					t.Errorf("id %d outside 1..%d", id, c.max)
				}
				if c.name == ingest {
					a := sent[0].Args[1].(string)
					if !slices.Contains(actions, a) {
						t.Errorf("action %q is none of the event types", a)
					}
					kinds[a] = true
				}
				if q.Reads != c.read || q.Writes != 1-c.read {
					t.Errorf("counted %+v", q)
				}
			}
			if c.name == ingest && len(kinds) != len(actions) {
				t.Errorf("300 events drew %d of the %d actions", len(kinds), len(actions))
			}
		})
	}
	// A preloaded event whose row is gone stops the run, naming why.
	conn := metaConn("50", "400")
	conn.Rows["SELECT e.id"] = [][]string{}
	wk, err := worker(t, join, conn)
	if err != nil {
		t.Fatal(err)
	}
	if err := wk.Transaction(context.Background(), &workload.Txn{}); err == nil || !strings.Contains(err.Error(), "want 1") {
		t.Errorf("a missing event: %v", err)
	}
}

// Tables prepared with other sizes are refused before the run, naming the options.
func TestPreparedSizesChecked(t *testing.T) {
	if _, err := worker(t, join, metaConn("50", "999")); err == nil || !strings.Contains(err.Error(), "--customers 50 --events 999") {
		t.Errorf("events prepared with 999 run as 400: %v", err)
	}
}
