package machineload

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/fairbench/fairbench/internal/result"
)

// A process outside fairbench that burns a CPU shows as others' CPU (about half of this 2-core
// machine per spinning process, 100/NumCPU percent), and fairbench's own spinning does not.
func TestOthersCPU(t *testing.T) {
	if runtime.NumCPU() > 16 {
		t.Skip("one spinning process is too small a share of this machine to tell from noise")
	}
	share := 100 / float64(runtime.NumCPU())

	// fairbench's own work (this process's) is counted as ours, whatever else the machine does
	// meanwhile (other test packages may keep it busy). The spin is 300 ms of this process's CPU
	// time, not of the wall clock: on a 2-core machine shared with other test packages a wall-clock
	// spin got half a CPU once in CI (14 ticks), and the kernel promises the ticks of CPU time only.
	s := New(nil)
	before := s.take()
	spinFor(300 * time.Millisecond)
	after := s.take()
	if ticks := after.ours - before.ours; ticks < 15 {
		t.Errorf("300 ms of this process's own spinning counted as %d ticks of ours, want about 30", ticks)
	}

	// A process this test does not parent: setsid'd away from the tree by a shell that exits.
	hog := exec.Command("sh", "-c", "setsid sh -c 'while :; do :; done' >/dev/null 2>&1 & echo $!")
	out, err := hog.Output()
	if err != nil {
		t.Fatal(err)
	}
	pid := string(out[:len(out)-1])
	defer exec.Command("kill", "-9", pid).Run()
	time.Sleep(200 * time.Millisecond)
	s.Reset()
	time.Sleep(time.Second)
	var busy result.Interval
	s.OnInterval(&busy)

	t.Logf("a foreign hog: others %.1f%% (one CPU is %.0f%%), steal %.1f%%", busy.OthersCPUPct, share, busy.StealPct)
	if busy.OthersCPUPct < share*0.6 {
		t.Errorf("a foreign process spinning one CPU showed as %.1f%% others, want at least about %.0f%%", busy.OthersCPUPct, share)
	}
	m := Summary([]result.Interval{busy, busy})
	if m == nil || !m.Busy || m.OthersCPUPctMean != busy.OthersCPUPct {
		t.Errorf("Summary of busy intervals = %+v, want busy", m)
	}
	if q := Summary([]result.Interval{{OthersCPUPct: 2}, {OthersCPUPct: 4}}); q.Busy || q.OthersCPUPctMean != 3 || q.OthersCPUPctMax != 4 {
		t.Errorf("Summary of quiet intervals = %+v", q)
	}
}

// spinFor spins until this process has used d more of CPU time (user and system), or 10 s of
// the wall clock have passed.
func spinFor(d time.Duration) {
	start, deadline := cpuTime(), time.Now().Add(10*time.Second)
	for cpuTime()-start < d && time.Now().Before(deadline) {
		for range 100000 {
		}
	}
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func TestMain(m *testing.M) {
	if os.Getenv("MACHINELOAD_CHILD") != "" {
		fmt.Print(fairbenchRoot())
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// A fairbench started by a fairbench (compare's client-host shards) takes the parent's tree as
// its own; one started by anything else, its own.
func TestFairbenchRoot(t *testing.T) {
	if got := fairbenchRoot(); got != os.Getpid() {
		t.Errorf("fairbenchRoot() = %d under go test, want this process %d", got, os.Getpid())
	}
	child := exec.Command(os.Args[0], "-test.run=^$")
	child.Env = append(os.Environ(), "MACHINELOAD_CHILD=1")
	out, err := child.Output()
	if err != nil {
		t.Fatal(err)
	}
	if string(out) != strconv.Itoa(os.Getpid()) {
		t.Errorf("a child of the same binary found root %s, want its parent %d", out, os.Getpid())
	}
}

// The probe times dependent loads (not the nanosecond of a loop the compiler emptied or of a
// chain in L1), in a sane range however busy the test machine (its threads may wait for a CPU),
// and quickly enough to stand beside every window.
func TestMemoryNS(t *testing.T) {
	t0 := time.Now()
	ns := MemoryNS()
	if ns < 3 || ns > 20000 {
		t.Errorf("one dependent load from a 64 MiB chain took %.1f ns, want 3-20000", ns)
	}
	if d := time.Since(t0); d > 5*time.Second {
		t.Errorf("the first probe (with the chain's build) took %s", d)
	}
	seen := map[uint32]bool{}
	p := uint32(0)
	for range 1 << 12 {
		if seen[p] {
			t.Fatalf("the chain returned to slot %d after %d steps: not one cycle", p, len(seen))
		}
		seen[p] = true
		if p%lineSlots != 0 {
			t.Fatalf("the chain reached slot %d, not the first of a cache line", p)
		}
		p = chain[p]
	}
}
