package compare

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fairbench/fairbench/internal/engine"
	"github.com/fairbench/fairbench/internal/engine/discovery"
	"github.com/fairbench/fairbench/internal/engine/profile"
	"github.com/fairbench/fairbench/internal/result"
	"github.com/fairbench/fairbench/internal/runspec"
	"github.com/fairbench/fairbench/internal/suite"
	"github.com/fairbench/fairbench/internal/testserver"
)

const tinySuite = `
name: tiny
description: two short steps on a small data set
threads: 2
time: 2s
options: {tables: "2", table-size: "2000"}
steps:
  - workload: oltp_read_write
  - workload: oltp_point_select
`

func engines(t *testing.T) []string {
	testserver.Integration(t)
	kinds := []string{discovery.Postgres, discovery.MariaDB}
	if _, err := discovery.Find(discovery.MySQL, ""); err == nil || strings.Contains(os.Getenv("FAIRBENCH_REQUIRE_ENGINES"), "mysql") {
		kinds = append(kinds, discovery.MySQL)
	}
	for _, k := range kinds[:2] {
		if _, err := discovery.Find(k, ""); err != nil {
			t.Skipf("%s not installed: %v", k, err)
		}
	}
	return kinds
}

// workDir is where the servers' data directories go; the postgres user must be able to enter it.
func workDir(t *testing.T) string {
	d, err := os.MkdirTemp("/tmp", "fairbench-compare-test-")
	if err != nil {
		t.Fatal(err)
	}
	_ = os.Chmod(d, 0o755)
	t.Cleanup(func() { os.RemoveAll(d) })
	return d
}

func options(t *testing.T, kinds []string) *Options {
	s, err := suite.Parse([]byte(tinySuite), "tiny.yaml")
	if err != nil {
		t.Fatal(err)
	}
	prof := profile.Default()
	prof.BufferPoolBytes = 256 << 20
	prof.RedoBytes = 256 << 20
	return &Options{Engines: kinds, Suite: s, OutDir: t.TempDir(), Profile: prof, WorkDir: workDir(t), Seed: 1, Command: "go test"}
}

// onLine calls do once, when a progress line containing match is written.
type onLine struct {
	match string
	do    func()
	once  sync.Once
}

func (w *onLine) Write(p []byte) (int, error) {
	if strings.Contains(string(p), w.match) {
		w.once.Do(w.do)
	}
	return len(p), nil
}

// runClean runs the comparison, checks it left nothing behind, and reads its results.
func runClean(t *testing.T, o *Options) []*result.Result {
	t.Helper()
	if err := Run(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	nothingLeftBehind(t, o)
	results, err := result.ReadDir(filepath.Join(o.OutDir, "results"))
	if err != nil {
		t.Fatal(err)
	}
	return results
}

// nothingLeftBehind: no server running and no data directory, whatever happened.
func nothingLeftBehind(t *testing.T, o *Options) {
	t.Helper()
	if r := engine.Running(); len(r) != 0 {
		t.Errorf("%d servers still running", len(r))
	}
	left, _ := os.ReadDir(o.WorkDir)
	if len(left) != 0 {
		t.Errorf("work dir not empty: %v", left)
	}
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range procs {
		b, _ := os.ReadFile(p)
		if strings.Contains(string(b), o.WorkDir) {
			t.Errorf("a process still uses the work dir: %s", strings.ReplaceAll(string(b), "\x00", " "))
		}
	}
}

func TestCompareEndToEnd(t *testing.T) {
	kinds := engines(t)
	o := options(t, kinds)
	// The suite's description is shown when it starts, so a reader knows what is being run.
	described := false
	o.Log = &onLine{match: "== suite tiny: two short steps on a small data set", do: func() { described = true }}
	results := runClean(t, o)
	if !described {
		t.Error("the suite's description was not shown")
	}
	if len(results) != 2*len(kinds) {
		t.Fatalf("%d results, want %d", len(results), 2*len(kinds))
	}
	for _, r := range results {
		if !r.Complete || r.TPS <= 0 || r.Server == nil || r.Server.CPUUserS+r.Server.CPUSystemS <= 0 || len(r.Server.Settings) == 0 {
			t.Errorf("%s %s: complete=%v tps=%.1f server=%+v", r.Engine.Kind, r.Workload.Name, r.Complete, r.TPS, r.Server)
		}
	}
	for _, r := range results {
		if r.Workload.Name == "oltp_read_write" {
			serverMetricsPresent(t, r)
		}
	}
	md, err := os.ReadFile(filepath.Join(o.OutDir, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range kinds {
		if !strings.Contains(string(md), k) {
			t.Errorf("report.md does not mention %s", k)
		}
	}
	if _, err := os.Stat(filepath.Join(o.OutDir, "report.html")); err != nil {
		t.Error(err)
	}
	if _, err := os.Stat(filepath.Join(o.OutDir, "environment.json")); err != nil {
		t.Error(err)
	}
}

// A failure in the middle stops the server, removes its data, and keeps what was measured.
func TestCompareFailureCleansUp(t *testing.T) {
	kinds := engines(t)[:2]
	o := options(t, kinds)
	// Fails on the second engine, after its first step.
	o.beforeStep = func(done int) error {
		if done >= 3 {
			return fmt.Errorf("failing on purpose after %d steps", done)
		}
		return nil
	}
	err := Run(context.Background(), o)
	if err == nil || !strings.Contains(err.Error(), "on purpose") {
		t.Fatalf("err = %v, want the forced failure", err)
	}
	nothingLeftBehind(t, o)
	results, _ := result.ReadDir(filepath.Join(o.OutDir, "results"))
	if len(results) != 3 {
		t.Fatalf("%d results kept, want the 3 measured before the failure", len(results))
	}
	if _, err := os.Stat(filepath.Join(o.OutDir, "report.md")); err != nil {
		t.Errorf("no report of what was measured: %v", err)
	}
}

// Ctrl-C in the middle of a step: the step's partial result is written marked incomplete.
func TestCompareInterrupted(t *testing.T) {
	kinds := engines(t)[:1]
	o := options(t, kinds)
	o.Suite.Steps = o.Suite.Steps[:1]
	o.Suite.Run.Time = runspec.Ptr(30 * time.Second)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// Interrupt 1.5 s into the step, however long the server took to start on a busy machine.
	o.Log = &onLine{match: "threads", do: func() { time.AfterFunc(1500*time.Millisecond, cancel) }}
	if err := Run(ctx, o); err == nil {
		t.Fatal("want an error from the interrupted run")
	}
	nothingLeftBehind(t, o)
	results, _ := result.ReadDir(filepath.Join(o.OutDir, "results"))
	if len(results) != 1 || results[0].Complete || results[0].Transactions == 0 {
		t.Fatalf("want one incomplete result with what was measured, got %d", len(results))
	}
}

// serverMetricsPresent: every server-side figure of a read-write run is there and non-zero where
// the work must have produced it.
func serverMetricsPresent(t *testing.T, r *result.Result) {
	t.Helper()
	s := r.Server
	name := r.Engine.Kind
	checks := []struct {
		what string
		ok   bool
	}{
		{"local", s.Local},
		{"server CPU seconds", s.CPUUserS+s.CPUSystemS > 0},
		{"server CPU %", s.CPUPct > 0},
		// Memory comes from the server's cgroup where one could be made, else from /proc.
		{"memory idle", s.MemIdleMB > 0 || s.RSSIdleMB > 0},
		{"memory peak at least idle", (s.MemIdleMB > 0 && s.MemPeakMB >= s.MemIdleMB) || s.RSSPeakMB > s.RSSIdleMB},
		{"disk writes (durable commits)", s.DiskWriteBytes > 0},
		{"data size", s.DataSizeBytes > 0},
		{"pages requested per transaction", s.PerTxn["buffer_hits"]+s.PerTxn["buffer_reads"] > 0},
		{"WAL/redo bytes per write transaction", s.PerTxn["wal_bytes"] > 0},
		{"client CPU", r.ClientCPUS > 0},
		{"per-interval server CPU", len(r.Intervals) > 0 && r.Intervals[0].ServerCPUPct > 0},
		{"per-interval server memory", len(r.Intervals) > 0 && (r.Intervals[0].ServerMemMB > 0 || r.Intervals[0].ServerRSSMB > 0)},
		{"settings", len(s.Settings) > 0 && len(s.Profile) > 0},
	}
	for _, c := range checks {
		if !c.ok {
			t.Errorf("%s oltp_read_write: %s missing or zero (server %+v)", name, c.what, s)
		}
	}
}

// Two releases of PostgreSQL in one comparison, one of them from a Debian root under chroot: an
// upgrade study. Each release gets its own results, its own report column and an upgrade row.
func TestCompareVersions(t *testing.T) {
	testserver.Integration(t)
	var pgs []discovery.Installation
	for _, in := range discovery.Discover("") {
		if in.Kind == discovery.Postgres {
			pgs = append(pgs, in)
		}
	}
	if len(pgs) < 2 || pgs[len(pgs)-1].Root == "" {
		if strings.Contains(os.Getenv("FAIRBENCH_REQUIRE_ENGINES"), "postgres@") {
			t.Fatalf("two PostgreSQL releases, one in a Debian root, are required; installed: %v", pgs)
		}
		t.Skip("needs two PostgreSQL releases, one in a Debian root: scripts/install-engines.sh --versions postgres@18")
	}
	older, newer := pgs[0], pgs[len(pgs)-1]
	o := options(t, []string{newer.Name(), older.Name()})
	if err := Run(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	nothingLeftBehind(t, o)
	// The private /dev/shm of a PostgreSQL in a root lives in the server's own mount namespace:
	// it must never show on the host, during the run or after. (Other mounts in the root may
	// be other runs' on a shared machine.)
	mounts, _ := os.ReadFile("/proc/self/mountinfo")
	if strings.Contains(string(mounts), filepath.Join(newer.Root, "dev/shm")) {
		t.Errorf("the server's /dev/shm in %s shows on the host", newer.Root)
	}
	for _, name := range []string{older.Name(), newer.Name()} {
		for _, w := range []string{"oltp_read_write", "oltp_point_select"} {
			r, err := result.Read(filepath.Join(o.OutDir, "results", name+"-"+w+".json"))
			if err != nil {
				t.Fatal(err)
			}
			if !r.Complete || r.TPS <= 0 || r.Engine.Name() != name || r.Server == nil || r.Server.CPUUserS+r.Server.CPUSystemS <= 0 {
				t.Errorf("%s %s: complete=%v tps=%.1f engine=%s", name, w, r.Complete, r.TPS, r.Engine.Name())
			}
			// What the newer release took in another form is recorded with its results.
			if name == newer.Name() && len(r.Server.Translations) == 0 {
				t.Errorf("%s: no translations recorded", name)
			}
		}
	}
	md, err := os.ReadFile(filepath.Join(o.OutDir, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"| " + older.Name() + " | " + newer.Name() + " |", "Upgrade " + older.Name() + " → " + newer.Name(),
		"| " + newer.Name() + " | lc_collate | "} { // the parity audit's translated settings
		if !strings.Contains(string(md), want) {
			t.Errorf("report.md lacks %q", want)
		}
	}
}

// compare --device: each server on a loop device of its own, so its disk figures are the device's
// (the cgroup's beside them), and no loop device, mount or file is left, also after a failure.
func TestCompareOnDevice(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("a loop device needs root")
	}
	kinds := engines(t)[:1]
	for _, fail := range []bool{false, true} {
		t.Run(fmt.Sprintf("failing=%v", fail), func(t *testing.T) {
			o := options(t, kinds)
			o.DeviceBytes = 1 << 30
			if fail {
				o.beforeStep = func(done int) error {
					if done >= 1 {
						return fmt.Errorf("failing on purpose after %d steps", done)
					}
					return nil
				}
			}
			err := Run(context.Background(), o)
			if (err != nil) != fail {
				t.Fatalf("err = %v", err)
			}
			nothingLeftBehind(t, o)
			loops, _ := filepath.Glob("/sys/block/loop*/loop/backing_file")
			for _, f := range loops {
				if b, _ := os.ReadFile(f); strings.HasPrefix(string(b), o.WorkDir) {
					t.Errorf("loop device left behind: %s -> %s", f, b)
				}
			}
			results, _ := result.ReadDir(filepath.Join(o.OutDir, "results"))
			if len(results) == 0 {
				t.Fatal("no results")
			}
			for _, r := range results {
				s := r.Server
				if s == nil || !strings.HasPrefix(s.DiskSource, "block device loop") || (r.Workload.Name == "oltp_read_write" && s.DiskWriteBytes <= 0) {
					t.Fatalf("%s: disk figures not from the device: %+v", r.Workload.Name, s)
				}
				if s.DiskCgroup != nil && s.DiskCgroup.WriteBytes > s.DiskWriteBytes*11/10 {
					t.Errorf("%s: the cgroup counted %d bytes written, the device %d", r.Workload.Name, s.DiskCgroup.WriteBytes, s.DiskWriteBytes)
				}
			}
		})
	}
}
