package job_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fairbench/fairbench/internal/engine"
	"github.com/fairbench/fairbench/internal/engine/discovery"
	"github.com/fairbench/fairbench/internal/job"
	"github.com/fairbench/fairbench/internal/randgen"
	"github.com/fairbench/fairbench/internal/result"
	"github.com/fairbench/fairbench/internal/runner"
	"github.com/fairbench/fairbench/internal/sqldb"
	"github.com/fairbench/fairbench/internal/testserver"
	_ "github.com/fairbench/fairbench/internal/workload/oltp"
)

func TestMain(m *testing.M) { testserver.Main(m) }

// TestWireAndTransport: a result records the transport and the statements and round trips per
// transaction, the same on every engine for the same workload (oltp_read_only: BEGIN, 10 point
// selects, 4 ranges, COMMIT, one round trip each).
func TestWireAndTransport(t *testing.T) {
	for _, kind := range testserver.Kinds() {
		t.Run(kind, func(t *testing.T) {
			ctx := context.Background()
			j, err := job.New(testserver.Database(t, kind), "oltp_read_only",
				map[string]string{"tables": "1", "table-size": "200"}, randgen.DefaultConfig("uniform"), 1)
			if err != nil {
				t.Fatal(err)
			}
			if err := j.Prepare(ctx, j.Env(1, false, nil, io.Discard)); err != nil {
				t.Fatal(err)
			}
			res, err := j.Run(ctx, runner.Config{Threads: 2, Duration: 700 * time.Millisecond, Warmup: 200 * time.Millisecond,
				MaxTries: 3, ReportInterval: 100 * time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			if res.Engine.Transport != "plaintext" {
				t.Errorf("transport %q, want plaintext (TLS only when the DSN asks)", res.Engine.Transport)
			}
			w := res.Wire
			if w == nil || res.Transactions < 20 {
				t.Fatalf("wire %+v after %d transactions", w, res.Transactions)
			}
			// Threads in a transaction when the window opens or closes shift a few statements.
			if math.Abs(w.StatementsPerTxn-16) > 0.5 || math.Abs(w.RoundTripsPerTxn-16) > 0.5 {
				t.Fatalf("per transaction: %.2f statements, %.2f round trips; want 16 and 16", w.StatementsPerTxn, w.RoundTripsPerTxn)
			}
			t.Logf("%d transactions: %.3f statements, %.3f round trips each", res.Transactions, w.StatementsPerTxn, w.RoundTripsPerTxn)
		})
	}
}

// slowWatcher is a server watcher whose re-reading of the counters as the window opens takes as
// long as a loaded server's can, while the clients already run.
type slowWatcher struct{ rebase time.Duration }

func (w slowWatcher) Start(context.Context) error { return nil }
func (w slowWatcher) MeasureStart(context.Context) error {
	time.Sleep(w.rebase)
	return nil
}
func (w slowWatcher) OnInterval(*result.Interval) {}
func (w slowWatcher) Finish(context.Context, int64) (*result.Server, error) {
	return &result.Server{}, nil
}

// The wire counts start where the window opens, not after the server's watcher is done with
// its own round trips: statements sent meanwhile belong to transactions the window counts.
func TestWireCountsFromTheWindowOpening(t *testing.T) {
	ctx := context.Background()
	j, err := job.New(testserver.Database(t, "postgres"), "oltp_read_only",
		map[string]string{"tables": "1", "table-size": "200"}, randgen.DefaultConfig("uniform"), 1)
	if err != nil {
		t.Fatal(err)
	}
	if err := j.Prepare(ctx, j.Env(1, false, nil, io.Discard)); err != nil {
		t.Fatal(err)
	}
	cfg := runner.Config{Threads: 2, Duration: 800 * time.Millisecond, Warmup: 200 * time.Millisecond, MaxTries: 3, ReportInterval: 100 * time.Millisecond}
	res, err := j.Measured(ctx, cfg, slowWatcher{rebase: 300 * time.Millisecond}, j.Run)
	if err != nil {
		t.Fatal(err)
	}
	if w := res.Wire; w == nil || math.Abs(w.StatementsPerTxn-16) > 0.5 {
		t.Fatalf("wire %+v over %d transactions: want 16 statements each", w, res.Transactions)
	}
}

// TestPrepareOnFullDisk: a load that fills the server's disk says so, typed, so the command line
// can say what to do (exit 2) instead of "connection reset by peer". The tables go to a
// tablespace on an 8 MB tmpfs, so the data files fill it while the WAL has room, and the server
// itself reports the full disk (SQLSTATE 53100). The tmpfs is mounted in the server's own mount
// namespace (it may run under chroot in a private one), where the server sees it.
func TestPrepareOnFullDisk(t *testing.T) {
	ctx := context.Background()
	srv := testserver.Server(t, discovery.Postgres)
	tg := testserver.Database(t, discovery.Postgres)
	admin, err := sqldb.Open(ctx, tg)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	rows, err := admin.Query(ctx, "SHOW data_directory")
	if err != nil {
		t.Fatal(err)
	}
	name := fmt.Sprintf("fb-full-disk-%d", os.Getpid())
	hostDir, innerDir := filepath.Join(srv.DataDir, "..", name), filepath.Join(rows[0][0], "..", name)
	if err := os.Mkdir(hostDir, 0o700); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Remove(hostDir) })
	st, err := os.Stat(srv.DataDir)
	if err != nil {
		t.Fatal(err)
	}
	owner := st.Sys().(*syscall.Stat_t)
	inServerNS := func(args ...string) ([]byte, error) {
		return exec.Command("nsenter", append([]string{"-t", strconv.Itoa(postmaster(t, srv)), "-m", "-r", "--"}, args...)...).CombinedOutput()
	}
	opts := fmt.Sprintf("size=8m,uid=%d,gid=%d,mode=0700", owner.Uid, owner.Gid)
	if out, err := inServerNS("mount", "-t", "tmpfs", "-o", opts, "tmpfs", innerDir); err != nil {
		t.Fatalf("cannot mount a tmpfs where the server sees it: %v: %s", err, out)
	}
	t.Cleanup(func() {
		if out, err := inServerNS("umount", innerDir); err != nil {
			t.Errorf("umount %s: %v: %s", innerDir, err, out)
		}
	})
	space := fmt.Sprintf("fb_small_%d", os.Getpid())
	for _, q := range []string{"CREATE TABLESPACE " + space + " LOCATION '" + innerDir + "'",
		"ALTER DATABASE " + tg.Database + " SET default_tablespace = " + space} {
		if err := admin.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	// Registered after the database's own cleanup, so it runs first: empty the tablespace.
	t.Cleanup(func() {
		c, err := sqldb.Open(ctx, tg)
		if err == nil {
			_ = c.Exec(ctx, "DROP TABLE IF EXISTS sbtest1")
			_ = c.Exec(ctx, "ALTER DATABASE "+tg.Database+" RESET default_tablespace")
			_ = c.Exec(ctx, "DROP TABLESPACE "+space)
			c.Close()
		}
	})
	j, err := job.New(tg, "oltp_read_only", map[string]string{"tables": "1", "table-size": "200000"}, randgen.DefaultConfig("uniform"), 1)
	if err != nil {
		t.Fatal(err)
	}
	err = j.Workload.Prepare(ctx, j.Env(1, false, nil, io.Discard))
	var full *sqldb.DiskFullError
	if !errors.As(err, &full) || !strings.Contains(err.Error(), "out of disk space") {
		t.Fatalf("prepare on a full disk: %v; want a DiskFullError", err)
	}
	t.Log(err)
}

// postmaster is the first process of the server's tree that is postgres itself (the tree's root
// lives as long as the server; backends come and go).
func postmaster(t *testing.T, srv *engine.Server) int {
	t.Helper()
	for _, pid := range srv.PIDs() {
		if comm, err := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid)); err == nil && strings.TrimSpace(string(comm)) == "postgres" {
			return pid
		}
	}
	t.Fatal("no postgres process in the server's tree")
	return 0
}
