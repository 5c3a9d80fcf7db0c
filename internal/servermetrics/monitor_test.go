package servermetrics

import (
	"context"
	"errors"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fairbench/fairbench/internal/result"
	"github.com/fairbench/fairbench/internal/sqldb"
)

// fakeConn answers the monitor's queries like a MariaDB server whose counters grow by a fixed
// step per read, so Monitor can be tested without a server.
type fakeConn struct {
	mu    sync.Mutex
	kind  sqldb.Kind
	reads int64
	fail  bool
}

func (f *fakeConn) Kind() sqldb.Kind { return f.kind }
func (f *fakeConn) Prepare(context.Context, string) (sqldb.Stmt, error) {
	return nil, errors.New("not supported")
}
func (f *fakeConn) Exec(context.Context, string) error { return nil }
func (f *fakeConn) Close() error                       { return nil }

func (f *fakeConn) Query(_ context.Context, q string, _ ...any) ([][]string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.fail {
		return nil, errors.New("connection lost")
	}
	n := func(base, step int64) string { return itoa(base + step*f.reads) }
	switch {
	case strings.HasPrefix(q, "SHOW GLOBAL VARIABLES"):
		return [][]string{{"innodb_buffer_pool_size", "134217728"}, {"tx_isolation", "REPEATABLE-READ"}}, nil
	case strings.HasPrefix(q, "SHOW GLOBAL STATUS"):
		f.reads++
		return [][]string{
			{"Innodb_buffer_pool_read_requests", n(1000, 500)},
			{"Innodb_buffer_pool_reads", n(10, 20)},
			{"Innodb_os_log_written", n(5000, 4000)},
			{"Com_commit", n(0, 100)},
			{"Innodb_history_list_length", n(7, 1)},
		}, nil
	case strings.Contains(q, "INNODB_METRICS"):
		return [][]string{{"trx_rseg_history_len", n(40, 1)}, {"lock_deadlocks", "2"}}, nil
	case strings.Contains(q, "information_schema.tables"):
		return [][]string{{"65536"}}, nil
	}
	return nil, errors.New("unexpected query: " + q)
}

func itoa(v int64) string { return strconv.FormatInt(v, 10) }

func TestMonitorLocal(t *testing.T) {
	ctx := context.Background()
	conn := &fakeConn{kind: sqldb.MariaDB}
	self := os.Getpid()
	m := NewMonitor(conn, func() []int { return []int{self} })
	if err := m.Start(ctx); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	ivs := make([]result.Interval, 3)
	wg.Add(1)
	go func() { // the runner's reporter goroutine
		defer wg.Done()
		for i := range ivs {
			spin(20 * time.Millisecond)
			m.OnInterval(&ivs[i])
		}
	}()
	wg.Wait()
	srv, err := m.Finish(ctx, 100)
	if err != nil {
		t.Fatal(err)
	}
	for i, iv := range ivs {
		if iv.ServerRSSMB <= 0 || iv.ServerCPUPct <= 0 {
			t.Errorf("interval %d: cpu %v%%, rss %v MB", i, iv.ServerCPUPct, iv.ServerRSSMB)
		}
	}
	if !srv.Local || srv.CPUUserS+srv.CPUSystemS <= 0 || srv.CPUPct <= 0 || srv.RSSIdleMB <= 0 || srv.RSSPeakMB < srv.RSSIdleMB {
		t.Errorf("process figures: %+v", srv)
	}
	if srv.DiskSource != DiskSourceProcIO {
		t.Errorf("DiskSource = %q", srv.DiskSource)
	}
	if srv.Settings["innodb_buffer_pool_size"] != "134217728" || srv.Settings["transaction_isolation"] != "REPEATABLE-READ" {
		t.Errorf("Settings = %v", srv.Settings)
	}
	// One counter read at Start and one at Finish: one step of each.
	want := map[string]int64{KeyBufferReads: 20, KeyBufferHits: 480, "innodb_buffer_pool_read_requests": 500,
		KeyWALBytes: 4000, "com_commit": 100, KeyHistoryListLength: 42, KeyDeadlocks: 0}
	for k, v := range want {
		if srv.Counters[k] != v {
			t.Errorf("Counters[%s] = %d, want %d (all: %v)", k, srv.Counters[k], v, srv.Counters)
		}
	}
	if srv.PerTxn[KeyWALBytes] != 40 || srv.PerTxn[KeyBufferReads] != 0.2 {
		t.Errorf("PerTxn = %v", srv.PerTxn)
	}
	if _, ok := srv.PerTxn[KeyHistoryListLength]; ok {
		t.Errorf("a gauge in PerTxn: %v", srv.PerTxn)
	}
	if srv.DataSizeBytes != 65536 {
		t.Errorf("DataSizeBytes = %d", srv.DataSizeBytes)
	}
}

func TestMonitorRemote(t *testing.T) {
	ctx := context.Background()
	conn := &fakeConn{kind: sqldb.MySQL}
	m := NewMonitor(conn, nil)
	if err := m.Start(ctx); err != nil {
		t.Fatal(err)
	}
	var iv result.Interval
	m.OnInterval(&iv)
	if iv.ServerCPUPct != 0 || iv.ServerRSSMB != 0 {
		t.Errorf("a remote server got process figures: %+v", iv)
	}
	srv, err := m.Finish(ctx, 10)
	if err != nil {
		t.Fatal(err)
	}
	if srv.Local || srv.CPUPct != 0 || srv.RSSPeakMB != 0 || srv.MemLoadMB != 0 || srv.DiskWriteBytes != 0 {
		t.Errorf("a remote server got process figures: %+v", srv)
	}
	for _, src := range []string{srv.CPUSource, srv.MemorySource, srv.DiskSource} {
		if src != SourceRemote {
			t.Errorf("a remote server's host figures are marked %q, want %q", src, SourceRemote)
		}
	}
	if srv.Counters[KeyWALBytes] != 4000 || srv.DataSizeBytes != 65536 {
		t.Errorf("engine figures: %+v", srv)
	}
}

func TestMonitorFinishKeepsWhatItHas(t *testing.T) {
	ctx := context.Background()
	conn := &fakeConn{kind: sqldb.MariaDB}
	self := os.Getpid()
	m := NewMonitor(conn, func() []int { return []int{self} })
	if _, err := m.Finish(ctx, 1); err == nil {
		t.Error("Finish before Start succeeded")
	}
	if err := m.Start(ctx); err != nil {
		t.Fatal(err)
	}
	conn.mu.Lock()
	conn.fail = true
	conn.mu.Unlock()
	srv, err := m.Finish(ctx, 1)
	if err == nil {
		t.Error("no error with the connection gone")
	}
	if srv == nil || srv.RSSPeakMB <= 0 || srv.Counters != nil {
		t.Errorf("want process figures and no counters, got %+v", srv)
	}
}

func TestMonitorMeasureStart(t *testing.T) {
	ctx := context.Background()
	conn := &fakeConn{kind: sqldb.MariaDB}
	m := NewMonitor(conn, nil)
	if err := m.MeasureStart(ctx); err == nil {
		t.Error("MeasureStart before Start succeeded")
	}
	conn.reads = 0
	if err := m.Start(ctx); err != nil {
		t.Fatal(err)
	}
	// The warm-up: two counter steps that must not count.
	conn.reads += 2
	if err := m.MeasureStart(ctx); err != nil {
		t.Fatal(err)
	}
	srv, err := m.Finish(ctx, 100)
	if err != nil {
		t.Fatal(err)
	}
	if srv.Counters["com_commit"] != 100 {
		t.Errorf("com_commit = %d, want one step (100): the warm-up was counted", srv.Counters["com_commit"])
	}
}

func TestMarkUndercounted(t *testing.T) {
	tests := []struct {
		name         string
		device       string
		written, wal int64
		undercounted bool
	}{
		{"writes cover the WAL", "254:0 vda", 30 << 20, 20 << 20, false},
		{"a quarter of the WAL reached the disk", "254:0 vda", 5 << 20, 20 << 20, true},
		{"too little WAL to judge", "254:0 vda", 0, 512 << 10, false},
		{"no device figures", "", 0, 20 << 20, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := &result.Server{DiskDevice: tc.device, DiskWriteBytes: tc.written, DiskSource: "cgroup v1 x",
				Counters: map[string]int64{KeyWALBytes: tc.wal}}
			markUndercounted(srv)
			if srv.DiskUndercounted != tc.undercounted {
				t.Errorf("undercounted = %v, want %v (%s)", srv.DiskUndercounted, tc.undercounted, srv.DiskSource)
			}
		})
	}
}
