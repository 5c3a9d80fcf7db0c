package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/fairbench/fairbench/internal/engine"
	"github.com/fairbench/fairbench/internal/engine/discovery"
	"github.com/fairbench/fairbench/internal/engine/profile"
	"github.com/fairbench/fairbench/internal/testserver"
)

// A PostgreSQL whose whole data directory, WAL included, is on a 150 MiB tmpfs. 2 x 1,000,000
// sysbench rows need at least 380 MiB: prepare refuses them before creating a table (exit 2,
// both sizes named). 2 x 270,000 need at least 103 MiB, under the 110 MiB free, and pass that
// check, but take more with their page headers, index and WAL: the load fills the disk; the
// server PANICs on its WAL and drops every connection (or, at times, first refuses to extend a
// table file). prepare says the disk is full, in one line with exit status 2, not a bare "use of
// closed network connection" with exit 1.
func TestPrepareFillsTheServersDisk(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("mounting a tmpfs needs root")
	}
	inst := testserver.Installation(t, discovery.Postgres)
	// Not t.TempDir, whose parent only root may enter: the server runs as postgres.
	dir, err := os.MkdirTemp("", "fb-full-disk-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Remove(dir) })
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=150m,mode=0755", "tmpfs", dir).CombinedOutput(); err != nil {
		t.Fatalf("mount a tmpfs: %v: %s", err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", dir).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v: %s", dir, err, out)
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	prof := profile.Default()
	// The profile's 1 GiB max_wal_size, as compare and serve run it: the WAL grows into the last
	// free space, and the server PANICs.
	prof.BufferPoolBytes, prof.MaxConnections = 64<<20, 20
	srv, err := engine.Start(ctx, inst, prof, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Stop()
	code, _, stderr := run("prepare", "--target", srv.DSN, "--workload", "oltp_read_write", "--tables", "2", "--table-size", "1000000")
	if code != 2 || !strings.Contains(stderr, "needs at least") || !strings.Contains(stderr, "free") {
		t.Fatalf("exit %d, stderr %q: want 2 and the space needed and free named, before any load", code, stderr)
	}
	code, _, stderr = run("prepare", "--target", srv.DSN, "--workload", "oltp_read_write", "--tables", "2", "--table-size", "270000")
	// Which comes first varies: the WAL's PANIC (the connections dropped, the free space then
	// measured here) or a table file that cannot grow (SQLSTATE 53100, answered).
	if code != 2 || !strings.Contains(stderr, "ran out of disk space") {
		t.Fatalf("exit %d, stderr %q: want 2 and the full disk named", code, stderr)
	}
	t.Logf("%s", stderr)
	if lines := strings.Split(strings.TrimSpace(stderr), "\n"); len(lines) != 2 || !strings.HasPrefix(lines[0], "Preparing ") {
		t.Errorf("stderr %q: want the preparing line and one line of error", stderr)
	}
}

// diagnoseLoadFailure's cases that need no full disk: Ctrl-C, a statement's own error, and a
// lost connection on a server whose disk cannot be looked at (not a throwaway one here).
func TestExplainLoadFailure(t *testing.T) {
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	lost := fmt.Errorf("loading sbtest1: %w", io.ErrUnexpectedEOF)
	other := errors.New("loading sbtest1: syntax error")
	for _, c := range []struct {
		name string
		ctx  context.Context
		err  error
		want string
	}{
		{"interrupted", cancelled, lost, "prepare interrupted"},
		{"interrupted, context error", cancelled, context.Canceled, "the data set is unfinished"},
		{"a statement's error stays", context.Background(), other, "syntax error"},
		{"lost, disk not known", context.Background(), lost, "the server dropped the connection during the load"},
		{"lost, disk with room", context.Background(), lost, "crashed or was stopped"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := ""
			if c.name == "lost, disk with room" {
				dir = t.TempDir()
			}
			got := diagnoseLoadFailure(c.ctx, c.err, dir)
			if got == nil || !strings.Contains(got.Error(), c.want) || !errors.Is(got, c.err) {
				t.Errorf("%v: want %q, wrapping %v", got, c.want, c.err)
			}
		})
	}
}
