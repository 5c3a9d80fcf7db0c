package servermetrics

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fairbench/fairbench/internal/result"
	"github.com/fairbench/fairbench/internal/sqldb"
	"github.com/fairbench/fairbench/internal/testserver"
)

func TestMain(m *testing.M) { testserver.Main(m) }

// Integration tests run against real throwaway servers started by testserver; the process
// figures come from those servers' own process trees.
var integrationServers = []struct {
	name, env, setting string
}{
	{"postgres", "postgres", "shared_buffers"},
	{"mariadb", "mariadb", "innodb_buffer_pool_size"},
	{"mysql", "mysql", "innodb_buffer_pool_size"},
}

func serverPIDs(t *testing.T, kind string) func() []int {
	return testserver.Server(t, kind).PIDs
}

// openTest connects to the kind's shared test server (env names the kind).
func openTest(t *testing.T, env string) sqldb.Conn {
	t.Helper()
	target, err := sqldb.ParseTarget(testserver.Server(t, env).DSN)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := sqldb.Open(ctx, target)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// workRows is enough work that the server's CPU, counted in 10 ms clock ticks, visibly moves on
// a fast machine: 1,000 rows took under one tick and made the CPU assertions flaky.
const workRows = 20000

// doWork writes and reads workRows rows in a table of its own, on its own connection, and closes it.
// The table is a regular one, not TEMPORARY: temporary tables skip the WAL (PostgreSQL) and the
// redo log (InnoDB), which is half of what is being checked.
func doWork(t *testing.T, env string) {
	t.Helper()
	ctx := context.Background()
	c := openTest(t, env)
	defer c.Close()
	table := fmt.Sprintf("fb_metrics_test_%d", rand.Uint32())
	q := sqldb.QuoteIdent(c.Kind(), table)
	if err := c.Exec(ctx, "CREATE TABLE "+q+" (id INT PRIMARY KEY, pad VARCHAR(100) NOT NULL)"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		d := openTest(t, env)
		if err := d.Exec(context.Background(), "DROP TABLE IF EXISTS "+q); err != nil {
			t.Errorf("dropping %s: %v", table, err)
		}
	})
	var sb strings.Builder
	for i := range workRows {
		if i%1000 == 0 {
			sb.Reset()
			sb.WriteString("INSERT INTO " + q + " (id, pad) VALUES ")
		} else {
			sb.WriteString(", ")
		}
		fmt.Fprintf(&sb, "(%d, '%s')", i, strings.Repeat("x", 90))
		if i%1000 == 999 {
			if err := c.Exec(ctx, sb.String()); err != nil {
				t.Fatal(err)
			}
		}
	}
	rows, err := c.Query(ctx, "SELECT id, pad FROM "+q)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != workRows {
		t.Fatalf("read %d rows, want %d", len(rows), workRows)
	}
	// DataSize must see the table while it exists.
	size, err := DataSize(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	if size < 8192 {
		t.Errorf("DataSize = %d with a 1000-row table present", size)
	}
}

func TestIntegrationSettings(t *testing.T) {
	for _, srv := range integrationServers {
		t.Run(srv.name, func(t *testing.T) {
			c := openTest(t, srv.env)
			got, err := Settings(context.Background(), c)
			if err != nil {
				t.Fatal(err)
			}
			if got[srv.setting] == "" {
				t.Errorf("Settings has no %s: %v", srv.setting, got)
			}
			if c.Kind().MySQLFamily() {
				if got["transaction_isolation"] == "" || got["version"] == "" {
					t.Errorf("Settings lacks transaction_isolation or version: %v", got)
				}
				if _, ok := got["tx_isolation"]; ok {
					t.Errorf("tx_isolation should be folded into transaction_isolation: %v", got)
				}
			} else {
				// Units resolved as SHOW prints them, e.g. 128MB, not 16384 (8kB pages).
				if v := got["shared_buffers"]; !strings.HasSuffix(v, "B") {
					t.Errorf("shared_buffers = %q, want a size with its unit", v)
				}
				if got["server_version"] == "" {
					t.Errorf("Settings lacks server_version: %v", got)
				}
			}
			t.Logf("%v", got)
		})
	}
}

func TestIntegrationCounters(t *testing.T) {
	for _, srv := range integrationServers {
		t.Run(srv.name, func(t *testing.T) {
			ctx := context.Background()
			c := openTest(t, srv.env)
			before, err := Counters(ctx, c)
			if err != nil {
				t.Fatal(err)
			}
			doWork(t, srv.env)
			// PostgreSQL publishes a backend's statistics when it exits, moments after the client
			// closes, and its WAL and database statistics separately, so the after-read is retried
			// until every figure asserted below has arrived, or briefly.
			settled := func(d map[string]int64) bool {
				return d[KeyBufferHits]+d[KeyBufferReads] > 0 && d[KeyWALBytes] > 0 &&
					(c.Kind().MySQLFamily() || d["tup_inserted"] >= 1000)
			}
			var delta map[string]int64
			deadline := time.Now().Add(5 * time.Second)
			for {
				after, err := Counters(ctx, c)
				if err != nil {
					t.Fatal(err)
				}
				delta = Delta(before, after)
				if settled(delta) || time.Now().After(deadline) {
					break
				}
				time.Sleep(50 * time.Millisecond)
			}
			t.Logf("delta: %v", delta)
			if delta[KeyBufferHits]+delta[KeyBufferReads] <= 0 {
				t.Errorf("buffer_hits+buffer_reads = %d after reading 1000 rows", delta[KeyBufferHits]+delta[KeyBufferReads])
			}
			if delta[KeyWALBytes] <= 0 {
				t.Errorf("wal_bytes = %d after inserting 1000 rows", delta[KeyWALBytes])
			}
			for _, k := range []string{KeyPagesWritten, KeyDeadlocks} {
				if _, ok := delta[k]; !ok {
					t.Errorf("delta lacks %s", k)
				}
			}
			if c.Kind().MySQLFamily() {
				if _, ok := delta[KeyHistoryListLength]; !ok {
					t.Errorf("delta lacks %s", KeyHistoryListLength)
				}
			} else if delta["tup_inserted"] < 1000 {
				t.Errorf("tup_inserted = %d, want >= 1000", delta["tup_inserted"])
			}
		})
	}
}

func TestIntegrationProcessSampler(t *testing.T) {
	for _, srv := range integrationServers {
		t.Run(srv.name, func(t *testing.T) {
			openTest(t, srv.env) // skip when the server is not configured
			pids := serverPIDs(t, srv.env)
			s := NewProcessSampler(pids)
			a, err := s.Sample()
			if err != nil {
				t.Fatal(err)
			}
			doWork(t, srv.env)
			b, err := s.Sample()
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("before %+v\nafter  %+v", a, b)
			if b.RSSBytes <= 0 || b.CPUUser+b.CPUSystem <= 0 || b.Processes == 0 {
				t.Errorf("sample: %+v", b)
			}
			if b.CPUUser < a.CPUUser || b.CPUSystem < a.CPUSystem || b.ReadBytes < a.ReadBytes || b.WriteBytes < a.WriteBytes {
				t.Errorf("totals went backwards: %+v then %+v", a, b)
			}
		})
	}
}

func TestIntegrationMonitor(t *testing.T) {
	for _, srv := range integrationServers {
		t.Run(srv.name, func(t *testing.T) {
			ctx := context.Background()
			c := openTest(t, srv.env)
			pids := serverPIDs(t, srv.env)
			m := NewMonitor(c, pids)
			if err := m.Start(ctx); err != nil {
				t.Fatal(err)
			}
			// OnInterval runs on the runner's goroutine.
			done := make(chan result.Interval)
			go func() {
				var iv result.Interval
				m.OnInterval(&iv)
				done <- iv
			}()
			doWork(t, srv.env)
			iv := <-done
			var iv2 result.Interval
			m.OnInterval(&iv2)
			srvRes, err := m.Finish(ctx, 10)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("interval %+v\nserver %+v", iv2, srvRes)
			if srvRes.Settings[srv.setting] == "" {
				t.Errorf("no %s in Settings", srv.setting)
			}
			if srvRes.Counters[KeyWALBytes] <= 0 || srvRes.PerTxn[KeyWALBytes] <= 0 {
				t.Errorf("wal_bytes: counter %d, per txn %v", srvRes.Counters[KeyWALBytes], srvRes.PerTxn[KeyWALBytes])
			}
			if pids == nil {
				if srvRes.Local {
					t.Error("Local without pids")
				}
				return
			}
			if !srvRes.Local || srvRes.RSSIdleMB <= 0 || srvRes.RSSPeakMB < srvRes.RSSIdleMB || iv.ServerRSSMB <= 0 || iv2.ServerRSSMB <= 0 {
				t.Errorf("process figures missing: %+v, intervals %+v %+v", srvRes, iv, iv2)
			}
			if srvRes.CPUUserS+srvRes.CPUSystemS <= 0 {
				t.Errorf("no server CPU for 1000 inserts: %+v", srvRes)
			}
		})
	}
}

// PostgreSQL runs a backend per connection, and the kernel adds an exited backend's disk I/O to
// the postmaster's own /proc/PID/io when the postmaster reaps it. Backends sampled with their
// I/O and then gone must be counted once: the sampler's growth must match the kernel's own view
// of the tree, where every process that left is inside the postmaster's figures, so the growth
// is the sum over the processes there at the end less the sum over those there at the start.
func TestIntegrationProcessSamplerBackendsComeAndGo(t *testing.T) {
	ctx := context.Background()
	tg := testserver.Database(t, "postgres")
	pids := serverPIDs(t, "postgres")
	if pids == nil || len(pids()) == 0 {
		t.Skip("no local server processes")
	}
	s := NewProcessSampler(pids)
	before := treeIO(t, pids())
	a, err := s.Sample()
	if err != nil {
		t.Fatal(err)
	}
	var backends []int
	for i := range 3 {
		c, err := sqldb.Open(ctx, tg)
		if err != nil {
			t.Fatal(err)
		}
		rows, err := c.Query(ctx, "SELECT pg_backend_pid()")
		if err != nil {
			t.Fatal(err)
		}
		pid, _ := strconv.Atoi(rows[0][0])
		backends = append(backends, pid)
		table := fmt.Sprintf("fb_come_and_go_%d", i)
		if err := c.Exec(ctx, "CREATE TABLE "+table+" (id INT PRIMARY KEY, pad VARCHAR(100) NOT NULL)"); err != nil {
			t.Fatal(err)
		}
		// One commit, so one WAL flush, per statement.
		for j := range 20 {
			q := fmt.Sprintf("INSERT INTO %s SELECT g, repeat('x', 90) FROM generate_series(%d, %d) g", table, j*100, j*100+99)
			if err := c.Exec(ctx, q); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := s.Sample(); err != nil { // sees the backend with its bytes
			t.Fatal(err)
		}
		c.Close()
	}
	deadline := time.Now().Add(10 * time.Second)
	for _, pid := range backends {
		for procExists(pid) {
			if time.Now().After(deadline) {
				t.Fatalf("backend %d did not exit", pid)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	// A reaping that lands just after the postmaster was read shows in the next sample.
	if _, err := s.Sample(); err != nil {
		t.Fatal(err)
	}
	b, err := s.Sample()
	if err != nil {
		t.Fatal(err)
	}
	after := treeIO(t, pids())
	if b.DiskPartial {
		t.Skip("some /proc/PID/io was unreadable")
	}
	var wantRead, wantWrite int64
	for _, e := range after {
		wantRead += e.read
		wantWrite += e.write
	}
	for _, e := range before {
		wantRead -= e.read
		wantWrite -= e.write
	}
	if wantWrite == 0 {
		t.Skip("the server's writes are not counted in /proc/PID/io (data on tmpfs?)")
	}
	t.Logf("sampler read/write %d/%d, kernel %d/%d", b.ReadBytes-a.ReadBytes, b.WriteBytes-a.WriteBytes, wantRead, wantWrite)
	for _, c := range []struct {
		name      string
		got, want int64
	}{
		{"written", b.WriteBytes - a.WriteBytes, wantWrite},
		{"read", b.ReadBytes - a.ReadBytes, wantRead},
	} {
		// The server is shared with the package's other tests, whose backends and autovacuum
		// workers may exit inside this window; ±35% still catches the double count this guards
		// against (2.2x), and the floor covers a background write between two reads of a process.
		if math.Abs(float64(c.got-c.want)) > max(0.35*float64(c.want), 256<<10) {
			t.Errorf("bytes %s = %d, want %d ±35%% (%.2fx)", c.name, c.got, c.want, float64(c.got)/float64(max(c.want, 1)))
		}
	}
}

type procIO struct{ read, write int64 }

// treeIO reads each process's disk I/O straight from /proc.
func treeIO(t *testing.T, pids []int) []procIO {
	t.Helper()
	var out []procIO
	for _, pid := range pids {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/io")
		if err != nil {
			continue
		}
		r, w, ok := parseIO(b)
		if !ok {
			t.Fatalf("cannot parse /proc/%d/io", pid)
		}
		out = append(out, procIO{r, w})
	}
	return out
}

func procExists(pid int) bool {
	_, err := os.Stat("/proc/" + strconv.Itoa(pid))
	return err == nil
}

// With the server's cgroup the monitor takes CPU, memory and disk from the kernel's accounting
// of the group, says so, and needs no /proc sampling; the writes of committed rows reach the
// data directory's disk, and the memory is the group's (shared buffers counted once).
func TestIntegrationMonitorCgroup(t *testing.T) {
	for _, srv := range integrationServers {
		t.Run(srv.name, func(t *testing.T) {
			ctx := context.Background()
			s := testserver.Server(t, srv.env)
			g, why := s.Cgroup()
			if g == nil {
				t.Skipf("no cgroup: %v", why)
			}
			c := openTest(t, srv.env)
			m := NewMonitor(c, s.PIDs).WithCgroup(g, s.DataDisk()).WithDataDir(s.DataDir)
			if m.sampler != nil && len(g.Missing) == 0 {
				t.Error("the /proc sampler still runs although the cgroup covers everything")
			}
			if err := m.Start(ctx); err != nil {
				t.Fatal(err)
			}
			doWork(t, srv.env)
			var iv result.Interval
			m.OnInterval(&iv)
			res, err := m.Finish(ctx, 20)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("interval %+v\nserver cpu %s, mem %s, disk %s %s: %+v", iv, res.CPUSource, res.MemorySource, res.DiskDevice, res.DiskSource, res)
			for name, src := range map[string]string{"cpu": res.CPUSource, "memory": res.MemorySource, "disk": res.DiskSource} {
				if !strings.HasPrefix(src, "cgroup v") {
					t.Errorf("%s source = %q, want the cgroup", name, src)
				}
			}
			if res.CPUUserS+res.CPUSystemS <= 0 || iv.ServerCPUPct <= 0 {
				t.Errorf("no CPU: %+v, interval %+v", res, iv)
			}
			if res.MemIdleMB <= 0 || res.MemLoadMB < res.MemIdleMB/2 || res.MemAnonLoadMB <= 0 || iv.ServerMemMB <= 0 {
				t.Errorf("memory figures missing: %+v, interval %+v", res, iv)
			}
			if s.DataDisk() != "" && (res.DiskWriteBytes < 8192 || res.DiskWriteOps <= 0 || iv.ServerDiskWriteBytes <= 0) {
				t.Errorf("%d committed rows wrote %d bytes in %d operations to %s", workRows, res.DiskWriteBytes, res.DiskWriteOps, res.DiskDevice)
			}
			if res.HostPerTxn["disk_write_bytes"] <= 0 || res.HostPerTxn["cpu_ms"] <= 0 {
				t.Errorf("per-transaction host figures: %v", res.HostPerTxn)
			}
			if res.DataDirBytes < res.DataSizeBytes {
				t.Errorf("data directory %d bytes on disk, less than the tables' %d", res.DataDirBytes, res.DataSizeBytes)
			}
		})
	}
}
