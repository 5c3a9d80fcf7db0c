package engine

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/fairbench/fairbench/internal/cgroup"
	"github.com/fairbench/fairbench/internal/engine/discovery"
	"github.com/fairbench/fairbench/internal/engine/profile"
)

// A server confined to one CPU (compare --server-cpus 1) runs every process on that CPU only, as
// the kernel reports it in /proc/PID/status, chrooted MySQL included; its cpuset group goes with
// the server.
func TestServerConfinedToCPUs(t *testing.T) {
	integration(t)
	if os.Geteuid() != 0 {
		t.Skip("confining a server needs root (a cgroup)")
	}
	for _, kind := range []string{discovery.Postgres, discovery.MySQL} {
		t.Run(kind, func(t *testing.T) {
			inst, err := discovery.Find(kind, "")
			if err != nil {
				t.Skipf("%s is not installed: %v", kind, err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			prof := profile.Profile{BufferPoolBytes: 128 * mib, MaxConnections: 50, RedoBytes: 256 * mib, CPUs: 1}
			srv, err := Start(ctx, inst, prof, workDir(t, ""))
			if err != nil {
				t.Fatal(err)
			}
			defer srv.Stop()
			want := cgroup.CPUList(ServerCPUs(1))
			pids := srv.PIDs()
			if len(pids) == 0 {
				t.Fatal("the server has no processes")
			}
			checked := 0
			for _, pid := range pids {
				got, alive := cpusAllowed(t, pid)
				if !alive {
					continue // a short-lived process (an autovacuum worker) that ended since the listing
				}
				checked++
				if got != want {
					t.Errorf("server pid %d: Cpus_allowed_list %q, want %q", pid, got, want)
				}
			}
			if checked == 0 {
				t.Fatalf("none of the server's processes %v could be read", pids)
			}
			g, _ := srv.Cgroup()
			if err := srv.Stop(); err != nil {
				t.Fatal(err)
			}
			if left := g.Leftovers(); len(left) > 0 {
				t.Errorf("cgroup directories left after stop: %v", left)
			}
		})
	}
}

// cpusAllowed is the process's Cpus_allowed_list, and false when the process no longer exists.
func cpusAllowed(t *testing.T, pid int) (string, bool) {
	t.Helper()
	b, err := os.ReadFile("/proc/" + itoa(pid) + "/status")
	if errors.Is(err, fs.ErrNotExist) {
		return "", false
	}
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "Cpus_allowed_list:"); ok {
			return strings.TrimSpace(v), true
		}
	}
	t.Fatalf("no Cpus_allowed_list in /proc/%d/status", pid)
	return "", false
}
