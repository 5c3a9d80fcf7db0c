package engine

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fairbench/fairbench/internal/cgroup"
	"github.com/fairbench/fairbench/internal/engine/discovery"
	"github.com/fairbench/fairbench/internal/engine/profile"
)

// checkInOwnCgroup asserts that every process of the server (chrooted MySQL too) is in the
// server's own cgroup, which sits beneath the test's own cgroup in every hierarchy.
func checkInOwnCgroup(t *testing.T, srv *Server, pids []int) *cgroup.Group {
	t.Helper()
	g, why := srv.Cgroup()
	if os.Geteuid() != 0 {
		return nil
	}
	if g == nil {
		t.Errorf("no cgroup for the server as root: %v", why)
		return nil
	}
	in := g.Procs()
	for _, pid := range pids {
		if !slices.Contains(in, pid) {
			t.Errorf("server pid %d is not in its cgroup %v (which holds %v)", pid, g.Dirs, in)
		}
	}
	self, _ := os.ReadFile("/proc/self/cgroup")
	for c, dir := range g.Dirs {
		ctl := c
		if c == cgroup.Unified {
			ctl = ""
		}
		own, _ := cgroup.PathIn(string(self), ctl)
		if own != "/" && !strings.HasSuffix(filepath.Dir(dir), filepath.Clean(own)) {
			t.Errorf("%s cgroup %s is not directly beneath this process's own (%s)", c, dir, own)
		}
	}
	st, err := g.Stats()
	if err != nil || (!st.HasCPU && !st.HasMemory) {
		t.Errorf("cgroup stats: %+v, %v", st, err)
	}
	if st.HasMemory && st.MemUsage <= 0 {
		t.Errorf("cgroup charges the running server no memory: %+v", st)
	}
	return g
}

// The reaping test's child: it starts a server, prints its record and waits to be killed.
func TestMain(m *testing.M) {
	if os.Getenv("FAIRBENCH_REAP_CHILD") != "" {
		inst, err := discovery.Find(os.Getenv("FAIRBENCH_REAP_CHILD"), "")
		if err != nil {
			os.Exit(3)
		}
		srv, err := Start(context.Background(), inst, profile.Profile{}, os.Getenv("FAIRBENCH_REAP_DIR"))
		if err != nil {
			os.Stderr.WriteString(err.Error())
			os.Exit(4)
		}
		os.Stdout.WriteString(srv.record + "\n")
		time.Sleep(time.Hour)
	}
	os.Exit(m.Run())
}

// startReapChild runs this test binary as a fairbench that starts a server of kind in dir and
// prints its record's path, the line returned; the caller kills it.
func startReapChild(t *testing.T, kind, dir string) (*exec.Cmd, string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "FAIRBENCH_REAP_CHILD="+kind, "FAIRBENCH_REAP_DIR="+dir)
	cmd.Stderr = os.Stderr
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("child did not start its %s: %v", kind, err)
	}
	return cmd, line
}

// A fairbench killed with SIGKILL leaves its server running; the next ReapStale removes the
// server, its data directory, its cgroup and its record, and leaves live owners' servers alone.
func TestReapKilledOwner(t *testing.T) {
	integration(t)
	inst, err := discovery.Find(discovery.Postgres, "")
	if err != nil {
		if inst, err = discovery.Find(discovery.MariaDB, ""); err != nil {
			t.Skip("no engine installed")
		}
	}
	// A live owner's server (this process's) must survive the reaping.
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	mine, err := Start(ctx, inst, profile.Profile{}, workDir(t, ""))
	if err != nil {
		t.Fatal(err)
	}
	defer mine.Stop()

	cmd, line := startReapChild(t, inst.Kind, workDir(t, ""))
	recPath := strings.TrimSpace(line)
	b, _ := os.ReadFile(recPath)
	var rec record
	if err := json.Unmarshal(b, &rec); err != nil {
		t.Fatalf("record %s: %v", recPath, err)
	}
	// While the child lives, its server is another fairbench's, which compare notes; this
	// process's own server is not (other test packages' servers may be listed too).
	others := strings.Join(OthersLive(), "; ")
	if !strings.Contains(others, fmt.Sprintf("(port %d)", rec.Port)) || strings.Contains(others, fmt.Sprintf("(port %d)", mine.Port)) {
		t.Errorf("OthersLive() = %q, want the child's server on port %d and not this process's on %d", others, rec.Port, mine.Port)
	}
	_ = cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	if !stillAlive(procInfo{pid: rec.ServerPID, start: rec.ServerStart}) {
		t.Fatalf("the killed child's server (pid %d) is not running: nothing to reap", rec.ServerPID)
	}

	reaped, err := ReapStale()
	if err != nil {
		t.Errorf("ReapStale: %v", err)
	}
	if !slices.ContainsFunc(reaped, func(l string) bool { return strings.Contains(l, rec.RunDir) }) {
		t.Errorf("reaped %q, want the killed child's server in %s", reaped, rec.RunDir)
	}
	if stillAlive(procInfo{pid: rec.ServerPID, start: rec.ServerStart}) {
		t.Errorf("server pid %d still runs after reaping", rec.ServerPID)
	}
	for _, p := range append([]string{rec.RunDir, recPath}, rec.Cgroups...) {
		if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s still there after reaping", p)
		}
	}
	if os.Geteuid() == 0 && len(rec.Cgroups) == 0 {
		t.Error("the child's server had no cgroup")
	}
	if err := mine.probe(ctx); err != nil {
		t.Errorf("a live owner's server was touched: %v", err)
	}
}
