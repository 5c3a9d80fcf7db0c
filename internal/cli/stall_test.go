package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/fairbench/fairbench/internal/result"
	"github.com/fairbench/fairbench/internal/sqldb"
	"github.com/fairbench/fairbench/internal/testserver"
)

// A real PostgreSQL frozen with SIGSTOP during `run --time 2s`: fairbench ends at the time plus
// the grace plus at most a second for the server's figures, not after the figures' 10 s limit
// too, and the result written is incomplete with the stall named.
func TestRunOnAFrozenServerEndsAtItsTime(t *testing.T) {
	srv := testserver.Server(t, "postgres")
	tg := testserver.Database(t, "postgres")
	base := []string{"--target", withPassword(tg, tg.Password), "--workload", "oltp_point_select", "--tables", "1", "--table-size", "1000"}
	if code, out, errOut := run(append([]string{"prepare"}, base...)...); code != 0 {
		t.Fatalf("prepare: exit %d\n%s%s", code, out, errOut)
	}
	var ice freezer
	defer ice.thaw()
	// Frozen once the clients have run point selects (pg_stat_statements counts executions, not
	// the prepares that pg_stat_activity would show), so that the stall is one of measured
	// clients and not of connecting ones (which is a connect timeout, bad input), however long a
	// loaded machine takes to start the run.
	watch, err := sqldb.Open(context.Background(), tg)
	if err != nil {
		t.Fatal(err)
	}
	defer watch.Close()
	const calls = "SELECT coalesce(sum(calls), 0) FROM pg_stat_statements WHERE query LIKE 'SELECT c FROM sbtest1%'"
	before, err := watch.Query(context.Background(), calls)
	if err != nil {
		t.Fatal(err)
	}
	freezeDone := make(chan struct{})
	go func() {
		defer close(freezeDone)
		for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			rows, err := watch.Query(context.Background(), "SELECT ("+calls+") >= $1::bigint + 20", before[0][0])
			if err == nil && len(rows) == 1 && rows[0][0] == "t" {
				break
			}
		}
		ice.freeze(srv.PIDs())
	}()
	out := filepath.Join(t.TempDir(), "r.json")
	began := time.Now()
	code, _, errOut := run(append([]string{"run", "--threads", "2", "--time", "2s", "--flush=false", "--out", out}, base...)...)
	wall := time.Since(began)
	<-freezeDone
	ice.thaw()
	if code != 1 || !strings.Contains(errOut, "grace") {
		t.Fatalf("exit %d, stderr %q: want 1 and the stall named", code, errOut)
	}
	// 2 s measured, 2 s of grace, 1 s for the figures, and room for a loaded machine.
	if wall > 7*time.Second {
		t.Errorf("run took %v on a frozen server, want its 2 s, the grace and a second", wall)
	}
	r, err := result.Read(out)
	if err != nil {
		t.Fatal(err)
	}
	if r.Complete || !strings.Contains(r.Error, "the server stalled") {
		t.Errorf("result complete=%v error %q: want incomplete with the stall named", r.Complete, r.Error)
	}
	// The evidence that it was the server: it stopped answering the wait sampler too.
	if !strings.Contains(r.Error, "wait sampler") || !strings.Contains(r.Error, "it stopped answering") {
		t.Errorf("result error %q: want the server's silence to the wait sampler as the evidence", r.Error)
	}
}

// capture on a frozen PostgreSQL (SIGSTOP before it starts) ends at its --timeout with one line
// naming it, exit 1, and writes nothing, instead of waiting until Ctrl-C.
func TestCaptureOnAFrozenServerEndsAtItsTimeout(t *testing.T) {
	srv := testserver.Server(t, "postgres")
	tg := testserver.Database(t, "postgres")
	out := filepath.Join(t.TempDir(), "frozen.yaml")
	frozen := srv.PIDs()
	for _, pid := range frozen {
		_ = syscall.Kill(pid, syscall.SIGSTOP)
	}
	defer func() {
		for _, pid := range frozen {
			_ = syscall.Kill(pid, syscall.SIGCONT)
		}
	}()
	began := time.Now()
	code, _, errOut := run("capture", "--target", withPassword(tg, tg.Password), "--out", out, "--timeout", "2s")
	took := time.Since(began)
	if code != 1 || !strings.Contains(errOut, "capture stopped after --timeout 2s, nothing written") || strings.Count(strings.TrimSpace(errOut), "\n") > 0 {
		t.Errorf("exit %d, %q: want exit 1 and one line naming the timeout", code, errOut)
	}
	if took > 6*time.Second {
		t.Errorf("capture took %v on a frozen server with --timeout 2s", took)
	}
	if _, err := os.Stat(out); err == nil {
		t.Errorf("%s was written", out)
	}
}

// freezer stops a server's processes (SIGSTOP) and lets them go on (SIGCONT), also when the
// test fails between the two: a frozen shared server would hang every test after it.
type freezer struct {
	mu     sync.Mutex
	frozen []int
}

func (f *freezer) freeze(pids []int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.frozen = pids
	for _, pid := range pids {
		_ = syscall.Kill(pid, syscall.SIGSTOP)
	}
}

func (f *freezer) thaw() {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, pid := range f.frozen {
		_ = syscall.Kill(pid, syscall.SIGCONT)
	}
	f.frozen = nil
}
