package servermetrics

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/fairbench/fairbench/internal/sqldb"
	"github.com/fairbench/fairbench/internal/sqldb/fakeconn"
)

// A server of another product of the protocol, without the view the settings come from: a
// tolerant monitor records them as not available and the run goes on; a plain one (a server
// fairbench started, where a missing view is a fault) fails; a server that does not answer fails
// either way.
func TestTolerantMonitor(t *testing.T) {
	ctx := context.Background()
	noView := errors.New(`relation "pg_settings" does not exist`)
	for _, tc := range []struct {
		name     string
		tolerant bool
		down     bool
		wantErr  bool
	}{
		{"tolerant", true, false, false},
		{"plain", false, false, true},
		{"tolerant, server down", true, true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := fakeconn.New(sqldb.Postgres)
			c.Fail["pg_settings"] = noView
			if tc.down {
				c.Fail["SELECT 1"] = errors.New("connection reset by peer")
			}
			m := NewMonitor(c, nil)
			if tc.tolerant {
				m = m.Tolerant()
			}
			err := m.Start(ctx)
			if (err != nil) != tc.wantErr {
				t.Fatalf("Start: %v, want error %v", err, tc.wantErr)
			}
			if err != nil {
				return
			}
			if err := m.MeasureStart(ctx); err != nil {
				t.Fatalf("MeasureStart: %v", err)
			}
			srv, err := m.Finish(ctx, 100)
			if err != nil {
				t.Fatalf("Finish: %v", err)
			}
			if len(srv.NotAvailable) == 0 || !strings.Contains(strings.Join(srv.NotAvailable, "; "), `relation "pg_settings" does not exist`) {
				t.Errorf("not available: %q", srv.NotAvailable)
			}
		})
	}
}

// slowCounters answers the counters' last read (pg_stat_user_tables) after delay: a saturated
// server answering the window's first read late.
type slowCounters struct {
	*fakeconn.Conn
	delay time.Duration
}

func (s *slowCounters) wait(sql string) {
	if strings.Contains(sql, "pg_stat_user_tables") {
		time.Sleep(s.delay)
	}
}

func (s *slowCounters) Query(ctx context.Context, sql string, args ...any) ([][]string, error) {
	s.wait(sql)
	return s.Conn.Query(ctx, sql, args...)
}

func (s *slowCounters) QueryAs(ctx context.Context, class sqldb.Class, sql string, args ...any) ([][]string, error) {
	s.wait(sql)
	return s.Conn.QueryAs(ctx, class, sql, args...)
}

// Counters the server answered late as the window opened would cover only part of it: the
// result says they were not available, and the run stands; answered in time, or as slowly as the
// idle server answered them at Start (a far server), they are given.
func TestLateCountersNotGiven(t *testing.T) {
	ctx := context.Background()
	slow := CountersLateLimit + 100*time.Millisecond
	for _, tc := range []struct {
		name        string
		idle, delay time.Duration
		late        bool
	}{
		{"in time", 0, 0, false},
		{"late", 0, slow, true},
		{"a far server, slow throughout", slow, slow, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			conn := &slowCounters{Conn: fakeconn.New(sqldb.Postgres), delay: tc.idle}
			conn.Rows["SELECT current_setting('server_version_num')"] = [][]string{{"180000"}}
			conn.Rows["SELECT COALESCE(SUM(n_dead_tup)"] = [][]string{{"5", "1"}}
			conn.Rows["SELECT blks_read"] = [][]string{{"1", "2", "3", "4", "5", "6", "7", "8", "9"}}
			conn.Rows["SELECT COALESCE(SUM(pg_total_relation_size"] = [][]string{{"8192"}}
			m := NewMonitor(conn, nil)
			if err := m.Start(ctx); err != nil {
				t.Fatal(err)
			}
			conn.delay = tc.delay
			if err := m.MeasureStart(ctx); err != nil {
				t.Fatalf("MeasureStart: %v", err)
			}
			conn.delay = 0
			srv, err := m.Finish(ctx, 100)
			if err != nil {
				t.Fatalf("Finish: %v", err)
			}
			said := strings.Contains(strings.Join(srv.NotAvailable, "; "), "answered their first read")
			if said != tc.late || (srv.Counters == nil) != tc.late {
				t.Errorf("not available %q, counters %v: want late %v", srv.NotAvailable, srv.Counters, tc.late)
			}
		})
	}
}
