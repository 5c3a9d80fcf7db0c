// Package testserver gives integration tests real database servers: one throwaway server per
// engine per test binary, started on first use with the fairness profile and stopped by Main,
// and a fresh database per test so tests cannot see each other's tables.
package testserver

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/fairbench/fairbench/internal/engine"
	"github.com/fairbench/fairbench/internal/engine/discovery"
	"github.com/fairbench/fairbench/internal/engine/profile"
	"github.com/fairbench/fairbench/internal/sqldb"
	"github.com/fairbench/fairbench/internal/throttle"
)

var (
	mu      sync.Mutex
	servers = map[string]*started{}
	dbSeq   atomic.Int64
)

type started struct {
	srv *engine.Server
	err error
}

// Main runs the package's tests and then stops every server they started.
func Main(m *testing.M) {
	stopOnSignal()
	code := m.Run()
	if err := engine.StopAll(); err != nil {
		fmt.Fprintln(os.Stderr, "testserver: stopping servers:", err)
		code = 1
	}
	os.Exit(code)
}

// stopOnSignal stops the servers when the test binary is interrupted (Ctrl-C on make test, a CI
// runner's SIGTERM): the binary would otherwise die with them running, and only the next server
// start's reaper would remove them (seen: a CI run stopped by hand left three).
func stopOnSignal() {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	go func() {
		sig := <-ch
		fmt.Fprintf(os.Stderr, "testserver: %v: stopping the servers\n", sig)
		if err := engine.StopAll(); err != nil {
			fmt.Fprintln(os.Stderr, "testserver: stopping servers:", err)
		}
		os.Exit(1)
	}()
}

// required lists the engines that must be present (CI sets FAIRBENCH_REQUIRE_ENGINES), so a
// missing install fails loudly instead of skipping every test that needs it.
func required(kind string) bool {
	for _, k := range strings.Split(os.Getenv("FAIRBENCH_REQUIRE_ENGINES"), ",") {
		if strings.TrimSpace(k) == kind {
			return true
		}
	}
	return false
}

// Integration skips t in the unit layer (go test -short, make unit): a test that starts a real
// server, or needs one installed, says so first, so that the tests without a server answer in
// under a minute, as any user, on a machine with no engine installed.
func Integration(t testing.TB) {
	t.Helper()
	if testing.Short() {
		t.Skip("starts a real server: not in the unit layer (go test -short)")
	}
}

// Server returns the shared server of kind, starting it on first use.
func Server(t testing.TB, kind string) *engine.Server {
	t.Helper()
	Integration(t)
	mu.Lock()
	defer mu.Unlock()
	s, ok := servers[kind]
	if !ok {
		s = &started{}
		inst, err := find(kind)
		if err != nil {
			s.err = err
		} else {
			prof := profile.Default()
			prof.BufferPoolBytes = 256 << 20
			prof.RedoBytes = 256 << 20
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			s.srv, s.err = engine.Start(ctx, inst, prof, "")
			cancel()
		}
		servers[kind] = s
	}
	if s.err != nil {
		if required(kind) {
			t.Fatalf("%s is required but cannot start: %v", kind, s.err)
		}
		t.Skipf("%s not available: %v", kind, s.err)
	}
	return s.srv
}

// Installation is what Server would start for kind, for a test that starts a server of its own
// (on a device of its own, with other settings); it skips or fails as Server does when kind is
// not installed.
func Installation(t testing.TB, kind string) discovery.Installation {
	t.Helper()
	Integration(t)
	inst, err := find(kind)
	if err != nil {
		if required(kind) {
			t.Fatalf("%s is required but not installed: %v", kind, err)
		}
		t.Skipf("%s not available: %v", kind, err)
	}
	return inst
}

// OnDevice starts a server of kind of the test's own with its data directory on a loop device of
// its own (ext4 with its journal, as mkfs.ext4 makes it), so the device's counters are that
// server's alone. Cleanup stops the server, removes the device and fails the test if anything of
// either is left, also when the test failed. Needs root: the test is skipped without it.
func OnDevice(t testing.TB, kind string) (*engine.Server, *throttle.Device) {
	t.Helper()
	Integration(t)
	if os.Geteuid() != 0 {
		t.Skip("a loop device needs root")
	}
	inst := Installation(t, kind)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	dev, err := throttle.NewDevice(ctx, throttle.DeviceOptions{SizeBytes: 2 << 30})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := dev.Close(); err != nil {
			t.Error(err)
		}
		if l := dev.Leftovers(); len(l) > 0 {
			t.Errorf("left behind: %v", l)
		}
	})
	prof := profile.Default()
	prof.BufferPoolBytes = 128 << 20
	prof.RedoBytes = 128 << 20
	srv, err := engine.Start(ctx, inst, prof, dev.Dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := srv.Stop(); err != nil {
			t.Error(err)
		}
	})
	return srv, dev
}

// find picks the server a test of kind gets: the host's own package for a bare kind when the
// host has one (Debian 12: PostgreSQL 15, MariaDB 10.11), so tests run on the same release on
// every machine whatever roots an install added; a root's otherwise (MySQL), or the release
// asked for ("postgres@18").
func find(kind string) (discovery.Installation, error) {
	if !strings.Contains(kind, "@") {
		// With the clusters (galera, postgres-ha), which are built of the host's servers.
		for _, inst := range discovery.DiscoverWithClusters("") {
			if inst.Kind == kind && inst.Root == "" {
				return inst, nil
			}
		}
	}
	return discovery.Find(kind, "")
}

// Database creates an empty database on the kind's shared server and returns a target for it;
// the database is dropped when the test ends.
func Database(t testing.TB, kind string) sqldb.Target {
	t.Helper()
	srv := Server(t, kind)
	base, err := sqldb.ParseTarget(srv.DSN)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	admin, err := sqldb.Open(ctx, base)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	name := fmt.Sprintf("fbtest_%d_%d", os.Getpid(), dbSeq.Add(1))
	if err := admin.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		c, err := sqldb.Open(ctx, base)
		if err != nil {
			t.Errorf("dropping %s: %v", name, err)
			return
		}
		defer c.Close()
		if base.Kind == sqldb.Postgres {
			_ = c.Exec(ctx, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '"+name+"' AND pid <> pg_backend_pid()")
		}
		if err := c.Exec(ctx, "DROP DATABASE "+name); err != nil {
			t.Errorf("dropping %s: %v", name, err)
		}
	})
	tg := base
	tg.Database = name
	return tg
}

// Kinds are the engines integration tests run against: PostgreSQL and MariaDB always, MySQL
// when its root is installed (or required).
func Kinds() []string { return []string{discovery.Postgres, discovery.MariaDB, discovery.MySQL} }

// LoadAverage is the machine's one-minute load average: timing tests skip, saying why, on a
// machine loaded far past its CPUs, where they would measure the load rather than fairbench.
func LoadAverage(t testing.TB) float64 {
	t.Helper()
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		t.Fatal(err)
	}
	var load float64
	if _, err := fmt.Sscan(string(b), &load); err != nil {
		t.Fatal(err)
	}
	return load
}

// Conn is a connection to a fresh database (Database) on the shared server of kind, closed when
// the test ends.
func Conn(t testing.TB, kind string) sqldb.Conn {
	t.Helper()
	c, err := sqldb.Open(context.Background(), Database(t, kind))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}
