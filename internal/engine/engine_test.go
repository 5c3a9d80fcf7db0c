package engine

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fairbench/fairbench/internal/engine/discovery"
	"github.com/fairbench/fairbench/internal/engine/profile"
	"github.com/fairbench/fairbench/internal/result"
	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5"
)

// workDir returns a fresh directory that the postgres user can traverse
// (t.TempDir's parent is mode 0700, which initdb-as-postgres cannot enter).
func workDir(t *testing.T, parent string) string {
	t.Helper()
	d, err := os.MkdirTemp(parent, "fairbench-enginetest-")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(d, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ents, _ := os.ReadDir(d)
		if len(ents) != 0 {
			t.Errorf("work dir %s not empty after Stop: %v", d, ents)
		}
		os.RemoveAll(d)
	})
	return d
}

func TestServers(t *testing.T) {
	integration(t)
	found := map[string]discovery.Installation{}
	var all []discovery.Installation
	for _, in := range discovery.Discover("") {
		all = append(all, in)
		if prev, ok := found[in.Kind]; !ok || result.CompareVersions(in.Version, prev.Version) > 0 {
			found[in.Kind] = in
		}
	}
	cases := []struct {
		name, kind string
		parent     string // where the work dir goes; "" = os.TempDir()
		binlog     bool
	}{
		// The binlog flags differ between the two (MySQL defaults it on,
		// MariaDB off), so both directions are started for real.
		{"mariadb-binlog", discovery.MariaDB, "", true},
		{"mysql-binlog", discovery.MySQL, "", true},
		// /dev/shm is another filesystem than the MySQL root, so this
		// exercises the bind mount that keeps MySQL's data in the work dir.
		{"mysql-bind-mount", discovery.MySQL, "/dev/shm", false},
	}
	// Every installed version starts, from the host or its Debian root.
	for _, in := range all {
		t.Run(in.Name(), func(t *testing.T) {
			t.Parallel()
			prof := profile.Profile{BufferPoolBytes: 128 * mib, MaxConnections: 50, RedoBytes: 256 * mib}
			testServer(t, in, prof, workDir(t, ""))
		})
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			inst, ok := found[c.kind]
			if !ok {
				t.Skipf("%s is not installed", c.kind)
			}
			if c.parent != "" {
				if _, err := os.Stat(c.parent); err != nil || inst.Root == "" || sameFilesystem(c.parent, inst.Root) {
					t.Skipf("no second filesystem to bind-mount from")
				}
			}
			prof := profile.Profile{BufferPoolBytes: 128 * mib, MaxConnections: 50, RedoBytes: 256 * mib, Binlog: c.binlog}
			testServer(t, inst, prof, workDir(t, c.parent))
		})
	}
}

func testServer(t *testing.T, inst discovery.Installation, prof profile.Profile, dir string) {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	t0 := time.Now()
	srv, err := Start(ctx, inst, prof, dir)
	if err != nil {
		t.Fatalf("Start(%v): %v", inst, err)
	}
	t.Cleanup(func() { srv.Stop() })
	t.Logf("%s %s ready on port %d in %s (data %s)", srv.Kind, srv.Version, srv.Port, time.Since(t0).Round(time.Millisecond), srv.DataDir)

	if want := prof.ForServer(inst.Kind, inst.Version); !reflect.DeepEqual(srv.Applied, want) {
		t.Errorf("Applied = %v, want profile settings %v", srv.Applied, want)
	}
	if _, err := os.Stat(filepath.Join(srv.DataDir)); err != nil {
		t.Errorf("data dir: %v", err)
	}
	if inst.Root == "" && !strings.HasPrefix(srv.DataDir, dir+"/") {
		t.Errorf("data dir %s not under work dir %s", srv.DataDir, dir)
	}
	if inst.Root != "" && !strings.HasPrefix(srv.DataDir, dir+"/") && !sameFilesystem(srv.DataDir, dir) {
		t.Errorf("mysql data dir %s is on another filesystem than the work dir %s", srv.DataDir, dir)
	}

	u, err := url.Parse(srv.DSN)
	if err != nil || u.Scheme != map[string]string{discovery.Postgres: "postgres", discovery.MySQL: "mysql", discovery.MariaDB: "mariadb"}[inst.Kind] ||
		u.Hostname() != "127.0.0.1" || u.Port() != fmt.Sprint(srv.Port) || u.Path != "/fairbench" {
		t.Fatalf("bad DSN for %s on port %d", srv.Kind, srv.Port)
	}

	var version string
	var closeDB func()
	if inst.Kind == discovery.Postgres {
		conn, err := pgx.Connect(ctx, srv.DSN)
		if err != nil {
			t.Fatalf("connect %s on port %d: %v", srv.Kind, srv.Port, err)
		}
		closeDB = func() { conn.Close(context.Background()) }
		if err := conn.QueryRow(ctx, "SELECT version()").Scan(&version); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(version, "PostgreSQL") {
			t.Errorf("version() = %q, want PostgreSQL", version)
		}
		var sb string
		if err := conn.QueryRow(ctx, "SHOW shared_buffers").Scan(&sb); err != nil || sb != "128MB" {
			t.Errorf("shared_buffers = %q (%v), want 128MB", sb, err)
		}
		// Every applied setting, as the server reports it, or where a translation says.
		translated := map[string]bool{}
		for _, tr := range srv.Translations() {
			translated[tr.Setting] = true
		}
		var coll, ctype string
		if err := conn.QueryRow(ctx, "SELECT datcollate, datctype FROM pg_database WHERE datname = current_database()").Scan(&coll, &ctype); err != nil || coll != "C" || ctype != "C" {
			t.Errorf("datcollate, datctype = %q, %q (%v), want C", coll, ctype, err)
		}
		for k, want := range srv.Applied {
			if translated[k] && strings.HasPrefix(k, "lc_") {
				continue // no longer a server setting; checked in pg_database above
			}
			var got string
			if err := conn.QueryRow(ctx, "SHOW "+k).Scan(&got); err != nil || got != want {
				t.Errorf("SHOW %s = %q (%v), want %q", k, got, err, want)
			}
		}
		var n int
		if _, err := conn.Exec(ctx, "CREATE TABLE t (id int primary key)"); err != nil {
			t.Fatal(err)
		}
		if err := conn.QueryRow(ctx, "INSERT INTO t VALUES (1), (2) RETURNING (SELECT count(*) FROM t)").Scan(&n); err != nil {
			t.Fatal(err)
		}
	} else {
		cfg := mysql.NewConfig()
		cfg.User, cfg.Net, cfg.Addr, cfg.DBName = u.User.Username(), "tcp", u.Host, strings.TrimPrefix(u.Path, "/")
		cfg.Passwd, _ = u.User.Password()
		db, err := sql.Open("mysql", cfg.FormatDSN())
		if err != nil {
			t.Fatal(err)
		}
		closeDB = func() { db.Close() }
		if err := db.QueryRowContext(ctx, "SELECT version()").Scan(&version); err != nil {
			t.Fatalf("query %s on port %d: %v", srv.Kind, srv.Port, err)
		}
		if isMaria := strings.Contains(version, "MariaDB"); isMaria != (inst.Kind == discovery.MariaDB) {
			t.Errorf("%s: version() = %q", inst.Kind, version)
		}
		var pool int64
		var logBin int
		if err := db.QueryRowContext(ctx, "SELECT @@innodb_buffer_pool_size, @@log_bin").Scan(&pool, &logBin); err != nil {
			t.Fatal(err)
		}
		wantLogBin := 0
		if prof.Binlog {
			wantLogBin = 1
		}
		if pool != 128*mib || logBin != wantLogBin {
			t.Errorf("innodb_buffer_pool_size = %d, log_bin = %d; want %d, %d", pool, logBin, 128*mib, wantLogBin)
		}
		norm := func(v string) string {
			switch v = strings.ToUpper(v); v {
			case "ON", "TRUE", "YES":
				return "1"
			case "OFF", "FALSE", "NO":
				return "0"
			}
			return v
		}
		for k, want := range srv.Applied {
			var got string
			q := "SELECT @@" + k
			if c, ok := strings.CutPrefix(k, "performance_schema_consumer_"); ok {
				// A start-up option with no variable: the consumer's row says whether it took.
				q = "SELECT enabled FROM performance_schema.setup_consumers WHERE name = '" + c + "'"
			}
			if err := db.QueryRowContext(ctx, q).Scan(&got); err != nil || norm(got) != norm(want) {
				t.Errorf("@@%s = %q (%v), want %q", k, got, err, want)
			}
		}
		if _, err := db.ExecContext(ctx, "CREATE TABLE t (id int primary key)"); err != nil {
			t.Fatal(err)
		}
		if _, err := db.ExecContext(ctx, "INSERT INTO t VALUES (1), (2)"); err != nil {
			t.Fatal(err)
		}
	}
	defer closeDB()
	t.Logf("version() = %s", version)
	checkClosedToStrangers(t, srv)

	// The connection stays open across Stop: shutdown must not wait for
	// clients, and backends are part of the tree that has to die.
	pids := srv.PIDs()
	if len(pids) == 0 {
		t.Fatal("PIDs() empty for a running server")
	}
	var tree []procInfo
	for _, pid := range pids {
		if p, ok := readProc(pid); ok {
			tree = append(tree, p)
		}
	}
	if inst.Kind == discovery.Postgres && len(pids) < 3 {
		t.Errorf("postgres tree %v: want postmaster plus children", pids)
	}
	if tree[0].pgrp == syscall.Getpgrp() {
		t.Errorf("server runs in the test's process group %d: a Ctrl-C would reach it", tree[0].pgrp)
	}
	found := false
	for _, s := range Running() {
		found = found || s == srv
	}
	if !found {
		t.Error("running server missing from Running()")
	}
	g := checkInOwnCgroup(t, srv, pids)
	checkRootShm(t, srv, pids[0])

	t1 := time.Now()
	if err := srv.Stop(); err != nil {
		t.Errorf("Stop: %v", err)
	}
	t.Logf("stopped in %s", time.Since(t1).Round(time.Millisecond))
	if err := srv.Stop(); err != nil {
		t.Errorf("second Stop: %v", err)
	}
	if c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", srv.Port), time.Second); err == nil {
		c.Close()
		t.Errorf("port %d still accepts connections after Stop", srv.Port)
	}
	if _, err := os.Stat(srv.DataDir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("data dir %s still there after Stop (%v)", srv.DataDir, err)
	}
	for _, p := range tree {
		if stillAlive(p) {
			t.Errorf("pid %d survived Stop", p.pid)
		}
	}
	if len(srv.PIDs()) != 0 {
		t.Error("PIDs() non-empty after Stop")
	}
	for _, s := range Running() {
		if s == srv {
			t.Error("stopped server still in Running()")
		}
	}
	if _, err := os.Stat(srv.hostRun); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("run dir %s left behind", srv.hostRun)
	}
	if srv.mountPoint != "" {
		if _, err := os.Stat(srv.mountPoint); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("mount point %s left in the root", srv.mountPoint)
		}
		mounts, _ := os.ReadFile("/proc/self/mountinfo")
		if strings.Contains(string(mounts), srv.mountPoint) {
			t.Error("bind mount left behind")
		}
	}
	if !strings.Contains(srv.Logs(), "\n") {
		t.Error("Logs() empty after Stop; it should keep the tail")
	}
	if g != nil && len(g.Leftovers()) > 0 {
		t.Errorf("cgroup left behind: %v", g.Leftovers())
	}
	if _, err := os.Stat(srv.record); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("server record %s left behind", srv.record)
	}
}

// A start that fails must say why (the server's own log) and remove what it
// created.
func TestStartFailureCleansUp(t *testing.T) {
	integration(t)
	inst, err := discovery.Find(discovery.Postgres, "")
	if err != nil {
		t.Skip(err)
	}
	t.Parallel()
	// PostgreSQL rejects a 64 TiB shared_buffers, so the postmaster exits
	// right after initdb succeeded; the reason is only in its log.
	prof := profile.Profile{BufferPoolBytes: 64 << 40, MaxConnections: 10, RedoBytes: 64 * mib}
	dir := workDir(t, "")
	_, err = Start(context.Background(), inst, prof, dir)
	if err == nil {
		StopAll()
		t.Fatal("Start with a 64 TiB buffer pool succeeded")
	}
	if !strings.Contains(err.Error(), "exited during start-up") || !strings.Contains(err.Error(), `parameter "shared_buffers"`) {
		t.Errorf("error does not carry the server log: %v", err)
	}

	// A cancelled context stops initdb and cleans up as well.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Start(ctx, inst, profile.Default(), dir); !errors.Is(err, context.Canceled) {
		t.Errorf("Start with cancelled context: %v", err)
	}
	if _, err := Start(context.Background(), discovery.Installation{Kind: discovery.Postgres, Binary: "/nonexistent/postgres"}, profile.Default(), dir); err == nil || !strings.Contains(err.Error(), "install-engines.sh") {
		t.Errorf("Start with a missing binary: %v", err)
	}
}

// StopAll is what the signal handler calls; not parallel, because it stops
// every server of this process, other tests' included.
func TestStopAll(t *testing.T) {
	integration(t)
	insts := discovery.Discover("")
	if len(insts) == 0 {
		t.Skip("no engine installed")
	}
	inst := insts[len(insts)-1]
	srv, err := Start(context.Background(), inst, profile.Profile{BufferPoolBytes: 128 * mib, RedoBytes: 64 * mib}, workDir(t, ""))
	if err != nil {
		t.Fatal(err)
	}
	var tree []procInfo
	for _, pid := range srv.PIDs() {
		if p, ok := readProc(pid); ok {
			tree = append(tree, p)
		}
	}
	if err := StopAll(); err != nil {
		t.Errorf("StopAll: %v", err)
	}
	if len(Running()) != 0 {
		t.Errorf("Running() after StopAll = %v", Running())
	}
	if anyAlive(tree) {
		t.Error("server processes alive after StopAll")
	}
	if _, err := os.Stat(srv.DataDir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("data dir left after StopAll: %v", err)
	}
	if err := srv.Stop(); err != nil {
		t.Errorf("Stop after StopAll: %v", err)
	}
}

// Another process can bind the port between picking and the server's bind;
// Start must notice from the server log and retry on a new port. Not
// parallel: it swaps the package's port picker.
func TestPortTakenRetry(t *testing.T) {
	integration(t)
	inst, err := discovery.Find(discovery.MariaDB, "")
	if err != nil {
		if inst, err = discovery.Find(discovery.Postgres, ""); err != nil {
			t.Skip(err)
		}
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	taken := l.Addr().(*net.TCPAddr).Port
	calls := 0
	pickPort := func() (int, error) {
		calls++
		if calls == 1 {
			return taken, nil
		}
		return ReservePort()
	}

	srv, err := start(context.Background(), inst, profile.Profile{BufferPoolBytes: 128 * mib, RedoBytes: 64 * mib}, workDir(t, ""), pickPort)
	if err != nil {
		t.Fatalf("Start did not recover from a taken port: %v", err)
	}
	defer srv.Stop()
	if calls != 2 || srv.Port == taken {
		t.Errorf("port picked %d times, server on %d (taken %d)", calls, srv.Port, taken)
	}
}

// checkRootShm: a server in a Debian root sees a tmpfs on /dev/shm, as on the host, not the
// root's plain directory; on that directory MariaDB 11.8 took its redo log for persistent memory
// and wrote it through a shared memory map that it never flushed, so commits did not wait for
// the disk. No server may map its redo log writable.
func checkRootShm(t *testing.T, srv *Server, pid int) {
	t.Helper()
	if srv.inst.Root == "" {
		return
	}
	mounts, err := os.ReadFile(fmt.Sprintf("/proc/%d/mounts", pid))
	if err != nil {
		t.Fatalf("the server's mounts: %v", err)
	}
	shm := false
	for _, line := range strings.Split(string(mounts), "\n") {
		f := strings.Fields(line)
		shm = shm || len(f) > 2 && f[1] == "/dev/shm" && f[2] == "tmpfs"
	}
	if !shm {
		t.Errorf("/dev/shm is no tmpfs for %s in %s:\n%s", srv.Kind, srv.inst.Root, mounts)
	}
	maps, err := os.ReadFile(fmt.Sprintf("/proc/%d/maps", pid))
	if err != nil {
		t.Fatalf("the server's memory maps: %v", err)
	}
	for _, line := range strings.Split(string(maps), "\n") {
		if f := strings.Fields(line); len(f) > 5 && strings.HasPrefix(f[1], "rw") && strings.Contains(f[5], "ib_logfile") {
			t.Errorf("%s maps its redo log writable (%s): its commits would not wait for the disk", srv.Kind, line)
		}
	}
}

// Servers of one release initialise at once (compare's parallel tests, galera's nodes): a
// starting mariadbd deletes every temporary-table file in its tmpdir, so inits that shared /tmp
// removed each other's and aborted. Each MariaDB release, three at a time (MySQL's init got the
// same private tmpdir, but this test does not exercise it).
func TestConcurrentInit(t *testing.T) {
	integration(t)
	for _, in := range discovery.Discover("") {
		if in.Kind != discovery.MariaDB {
			continue
		}
		t.Run(in.Name(), func(t *testing.T) {
			const n = 3
			errs := make(chan error, n)
			for range n {
				go func() {
					srv, err := Start(context.Background(), in, profile.Profile{BufferPoolBytes: 64 * mib, RedoBytes: 64 * mib, MaxConnections: 20}, workDir(t, ""))
					if err == nil {
						err = srv.Stop()
					}
					errs <- err
				}()
			}
			for range n {
				if err := <-errs; err != nil {
					t.Errorf("one of %d servers starting at once: %v", n, err)
				}
			}
		})
	}
}
