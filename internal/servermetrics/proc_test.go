package servermetrics

import (
	"math"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fairbench/fairbench/internal/procfs"
)

const (
	// A PostgreSQL postmaster, from a real /proc/PID/stat.
	statPostmaster = "13597 (postgres) S 1 13597 13597 0 -1 4194304 10444 486593 0 2 2 19 7139 5301 20 0 1 0 67463 364765184 8972 18446744073709551615 94709287628800 94709293042089 140731624517232 0 0 0 0 24129536 84487 1 0 0 17 0 0 0 0 0 0 94709295507632 94709295724938 94709634490368 140731624520068 140731624520200 140731624520200 140731624521684 0\n"
	// comm is whatever the process set, spaces and parentheses included.
	statOddComm = "4242 (my (odd) proc) R 1 4242 4242 0 -1 4194304 100 0 0 0 1234 567 0 0 20 0 8 0 999999 1000 10 18446744073709551615 0 0 0 0 0 0 0 0 0 0 0 0 17 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n"
	statZombie  = "777 (postgres) Z 13597 13597 13597 0 -1 4227084 80 0 0 0 31 9 0 0 20 0 1 0 70000 0 0 18446744073709551615 0 0 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0 0 0 0 0 0 0 0 0\n"

	statusPostmaster = `Name:	postgres
Umask:	0077
State:	S (sleeping)
Tgid:	13597
Pid:	13597
PPid:	1
VmPeak:	  356216 kB
VmSize:	  356216 kB
VmHWM:	   36028 kB
VmRSS:	   36028 kB
RssAnon:	    2308 kB
RssFile:	   16240 kB
RssShmem:	   17480 kB
Threads:	1
`
	statusZombie = `Name:	postgres
State:	Z (zombie)
Tgid:	777
Pid:	777
Threads:	1
`
	ioSample = `rchar: 74317810
wchar: 912455428
syscr: 13407
syscw: 77240
read_bytes: 233472
write_bytes: 13768019968
cancelled_write_bytes: 8409088
`
	smapsRollupSample = `562339656000-7ffea27d0000 ---p 00000000 00:00 0                          [rollup]
Rss:               36028 kB
Pss:               20610 kB
Pss_Dirty:         11423 kB
Pss_Anon:            568 kB
Pss_File:           9186 kB
Pss_Shmem:         10855 kB
Shared_Clean:      10120 kB
Shared_Dirty:      14192 kB
Private_Clean:      6120 kB
Private_Dirty:      5596 kB
Swap:                  0 kB
SwapPss:               0 kB
Locked:                0 kB
`
)

func TestParseStat(t *testing.T) {
	tests := []struct {
		name   string
		in     string
		want   procStat
		wantOK bool
	}{
		{"postmaster", statPostmaster, procStat{state: 'S', ppid: 1, utime: 2, stime: 19, cutime: 7139, cstime: 5301, start: 67463}, true},
		{"comm with spaces and parentheses", statOddComm, procStat{state: 'R', ppid: 1, utime: 1234, stime: 567, start: 999999}, true},
		{"zombie", statZombie, procStat{state: 'Z', ppid: 13597, utime: 31, stime: 9, start: 70000}, true},
		{"no trailing newline", strings.TrimSuffix(statPostmaster, "\n"), procStat{state: 'S', ppid: 1, utime: 2, stime: 19, cutime: 7139, cstime: 5301, start: 67463}, true},
		{"truncated before starttime", "1 (init) S 0 1 1 0 -1 0 0 0 0 0 5 6 0 0 20 0", procStat{}, false},
		{"no comm", "1 init S 0 1 1", procStat{}, false},
		{"garbage in utime", "1 (x) S 0 1 1 0 -1 0 0 0 0 0 x 6 0 0 20 0 1 0 5 0", procStat{}, false},
		{"empty", "", procStat{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := parseStat([]byte(tt.in))
			if ok != tt.wantOK || got != tt.want {
				t.Errorf("parseStat = %+v, %v; want %+v, %v", got, ok, tt.want, tt.wantOK)
			}
		})
	}
}

func TestParseStatusRSS(t *testing.T) {
	tests := []struct {
		name   string
		in     string
		want   int64
		wantOK bool
	}{
		{"postmaster", statusPostmaster, 36028 * 1024, true},
		{"zombie has no VmRSS", statusZombie, 0, false},
		{"VmRSS on the last line without newline", "Name:\tx\nVmRSS:\t 12 kB", 12 * 1024, true},
		{"a prefix of another key does not match", "VmRSSX:\t 99 kB\n", 0, false},
		{"empty", "", 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := parseStatusRSS([]byte(tt.in))
			if ok != tt.wantOK || got != tt.want {
				t.Errorf("parseStatusRSS = %d, %v; want %d, %v", got, ok, tt.want, tt.wantOK)
			}
		})
	}
}

func TestParseIO(t *testing.T) {
	tests := []struct {
		name         string
		in           string
		wantR, wantW int64
		wantOK       bool
	}{
		// read_bytes/write_bytes, not rchar/wchar, and not cancelled_write_bytes.
		{"full", ioSample, 233472, 13768019968, true},
		{"zeros", "rchar: 6976\nwchar: 0\nsyscr: 10\nsyscw: 0\nread_bytes: 0\nwrite_bytes: 0\ncancelled_write_bytes: 0\n", 0, 0, true},
		{"missing write_bytes", "read_bytes: 5\n", 5, 0, false},
		{"empty", "", 0, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, w, ok := parseIO([]byte(tt.in))
			if ok != tt.wantOK || (ok && (r != tt.wantR || w != tt.wantW)) {
				t.Errorf("parseIO = %d, %d, %v; want %d, %d, %v", r, w, ok, tt.wantR, tt.wantW, tt.wantOK)
			}
		})
	}
}

func TestParseSmapsRollupPSS(t *testing.T) {
	tests := []struct {
		name   string
		in     string
		want   int64
		wantOK bool
	}{
		// Pss, not Pss_Anon/Pss_Dirty/SwapPss.
		{"rollup", smapsRollupSample, 20610 * 1024, true},
		{"only the Pss_ lines", "Pss_Anon:  5 kB\nPss_File:  6 kB\nSwapPss:  7 kB\n", 0, false},
		{"empty", "", 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := parseSmapsRollupPSS([]byte(tt.in))
			if ok != tt.wantOK || got != tt.want {
				t.Errorf("parseSmapsRollupPSS = %d, %v; want %d, %v", got, ok, tt.want, tt.wantOK)
			}
		})
	}
}

func TestCPUPercent(t *testing.T) {
	t0 := time.Unix(1000, 0)
	n := float64(runtime.NumCPU())
	tests := []struct {
		name string
		a, b Sample
		want float64
	}{
		{"one core busy for the whole span", Sample{At: t0, CPUUser: 10}, Sample{At: t0.Add(2 * time.Second), CPUUser: 11, CPUSystem: 1}, 100 / n},
		{"user and system both count", Sample{At: t0, CPUUser: 1, CPUSystem: 1}, Sample{At: t0.Add(time.Second), CPUUser: 1.25, CPUSystem: 1.25}, 50 / n},
		{"no time passed", Sample{At: t0}, Sample{At: t0, CPUUser: 5}, 0},
		{"samples reversed", Sample{At: t0.Add(time.Second)}, Sample{At: t0, CPUUser: 5}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := CPUPercent(tt.a, tt.b); got < tt.want-1e-9 || got > tt.want+1e-9 {
				t.Errorf("CPUPercent = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestClockTicks(t *testing.T) {
	// USER_HZ is 100 on every architecture Go supports on Linux except alpha/ia64 (1024).
	if tck := clockTicks(); tck != 100 && tck != 1024 {
		t.Errorf("clockTicks = %d", tck)
	}
}

// burnChild starts a process that spends some CPU and then sleeps until killed.
func burnChild(t *testing.T) *exec.Cmd {
	t.Helper()
	cmd := exec.Command("sh", "-c", "i=0; while [ $i -lt 300000 ]; do i=$((i+1)); done; exec sleep 60")
	if err := cmd.Start(); err != nil {
		t.Skipf("cannot start sh: %v", err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	// Wait until the busy loop is over: the process has exec'ed sleep.
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		if b, err := os.ReadFile("/proc/" + strconv.Itoa(cmd.Process.Pid) + "/comm"); err == nil && strings.TrimSpace(string(b)) == "sleep" {
			// comm changes at exec, before sleep's loader has run: let its last CPU tick land,
			// or a sample taken after the first can see 10 ms more (seen in CI: 0.38 then 0.39).
			time.Sleep(200 * time.Millisecond)
			return cmd
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("child never reached sleep")
	return nil
}

func TestProcessSamplerSelf(t *testing.T) {
	s := NewProcessSampler(func() []int { return []int{os.Getpid(), os.Getpid()} })
	a, err := s.Sample()
	if err != nil {
		t.Fatal(err)
	}
	spin(50 * time.Millisecond)
	b, err := s.Sample()
	if err != nil {
		t.Fatal(err)
	}
	if b.Processes != 1 {
		t.Errorf("Processes = %d, want 1 (a pid listed twice counts once)", b.Processes)
	}
	if b.RSSBytes <= 0 {
		t.Errorf("RSSBytes = %d", b.RSSBytes)
	}
	if s.hasRollup && b.PSSBytes <= 0 {
		t.Errorf("PSSBytes = %d", b.PSSBytes)
	}
	if d := (b.CPUUser + b.CPUSystem) - (a.CPUUser + a.CPUSystem); d <= 0 {
		t.Errorf("CPU did not grow over 50ms of spinning: %v", d)
	}
	if !b.At.After(a.At) || CPUPercent(a, b) <= 0 {
		t.Errorf("CPUPercent = %v", CPUPercent(a, b))
	}
}

// spin burns d of this process's own CPU time, not of wall time: on a busy machine (or one
// whose hypervisor steals CPU) d of wall time can hold less than one 10 ms clock tick of CPU,
// and /proc then shows none.
func spin(d time.Duration) {
	start := processCPU()
	x := 0
	for processCPU()-start < d {
		for i := 0; i < 10000; i++ {
			x++
		}
	}
	_ = x
}

func processCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func TestProcessSamplerVanishedAndNewPids(t *testing.T) {
	child := burnChild(t)
	pid := child.Process.Pid
	list := []int{pid}
	s := NewProcessSampler(func() []int { return list })

	first, err := s.Sample()
	if err != nil {
		t.Fatal(err)
	}
	if first.Processes != 1 || first.CPUUser+first.CPUSystem <= 0 {
		t.Fatalf("child sample: %+v", first)
	}

	// Left the list but still running, then back: its lifetime must not be counted twice.
	list = nil
	dropped, _ := s.Sample()
	list = []int{pid}
	back, err := s.Sample()
	if err != nil {
		t.Fatal(err)
	}
	if dropped.CPUUser != first.CPUUser || back.CPUUser != first.CPUUser || back.CPUSystem != first.CPUSystem {
		t.Errorf("CPU user first/dropped/back = %v/%v/%v, want all equal", first.CPUUser, dropped.CPUUser, back.CPUUser)
	}
	if dropped.Processes != 0 || dropped.RSSBytes != 0 {
		t.Errorf("an unlisted process still counted: %+v", dropped)
	}

	// Exits: its CPU stays in the totals.
	child.Process.Kill()
	child.Wait()
	gone, err := s.Sample()
	if err != nil {
		t.Fatal(err)
	}
	if gone.Processes != 0 || gone.RSSBytes != 0 {
		t.Errorf("an ended process still counted live: %+v", gone)
	}
	if gone.CPUUser != first.CPUUser || gone.CPUSystem != first.CPUSystem || gone.ReadBytes < first.ReadBytes || gone.WriteBytes < first.WriteBytes {
		t.Errorf("totals went backwards when the process ended: %+v then %+v", first, gone)
	}

	// A new pid counts from zero: all of its CPU is added.
	list = []int{pid, os.Getpid()}
	withSelf, _ := s.Sample()
	if withSelf.Processes != 1 {
		t.Errorf("Processes = %d, want 1", withSelf.Processes)
	}
	if withSelf.CPUUser+withSelf.CPUSystem <= gone.CPUUser+gone.CPUSystem {
		t.Errorf("a new process's CPU was not added: %+v then %+v", gone, withSelf)
	}
}

// A child that ends between samples hands its CPU to the parent that reaps it: the totals then
// equal the parent's own plus reaped children's CPU, with the child's last-seen CPU counted once.
func TestProcessSamplerReapedChildHandsOver(t *testing.T) {
	burn := "i=0; while [ $i -lt 400000 ]; do i=$((i+1)); done"
	cmd := exec.Command("sh", "-c", "sh -c '"+burn+"'; exec sleep 60")
	if err := cmd.Start(); err != nil {
		t.Skipf("cannot start sh: %v", err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	root := cmd.Process.Pid
	s := NewProcessSampler(func() []int { return procfs.Tree(root) })

	sawChild := false
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		smp, err := s.Sample()
		if err != nil {
			t.Fatal(err)
		}
		if smp.Processes == 2 && smp.CPUUser+smp.CPUSystem > 0 {
			sawChild = true
		}
		if b, err := os.ReadFile("/proc/" + strconv.Itoa(root) + "/comm"); err == nil && strings.TrimSpace(string(b)) == "sleep" {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if !sawChild {
		t.Skip("the child ended before it was sampled with CPU")
	}
	s.Sample()
	last, err := s.Sample()
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(root) + "/stat")
	if err != nil {
		t.Fatal(err)
	}
	st, ok := parseStat(b)
	if !ok {
		t.Fatal("cannot parse the parent's stat")
	}
	tck := float64(clockTicks())
	wantUser, wantSys := float64(st.utime+st.cutime)/tck, float64(st.stime+st.cstime)/tck
	if st.cutime+st.cstime == 0 {
		t.Fatal("the reaped child's CPU is not in the parent's cutime")
	}
	if math.Abs(last.CPUUser-wantUser) > 1e-9 || math.Abs(last.CPUSystem-wantSys) > 1e-9 {
		t.Errorf("CPU user/sys = %v/%v, want the parent's own+children's %v/%v", last.CPUUser, last.CPUSystem, wantUser, wantSys)
	}
}

// BenchmarkSample measures one pass over the current process tree (this process and its
// children), and over the same tree with 16 idle children added, which shows the per-process
// cost that scales with a server's backends; FAIRBENCH_TEST_PG / FAIRBENCH_TEST_MARIADB add a
// real server's processes. "rss" is a pass without PSS (most passes: see pssCostFactor), "pss" one
// that also reads smaps_rollup. At one sample per second, ns/op is the fraction of one CPU:
// 1e6 ns/op = 0.1%.
//
// Measured on the development machine (AMD EPYC VM, Linux 6.18, go1.26; small /proc reads cost
// 6-13 µs each there, syscall-heavy as VMs are), go test -bench Sample -benchtime 2s:
//
//	tree                          rss          pss (worst case: every pass)
//	self (1 process)              ~30 µs/op    ~0.2 ms/op
//	self+16 (17 processes)        ~0.5 ms/op   ~1.4 ms/op
//	postgres (6, shared_buffers 256MB)  ~0.2 ms/op   ~4.4 ms/op (~0.55 ms per process)
//	mariadbd (1)                  ~30 µs/op    ~2.4 ms/op
//
// So one sample per second costs about 0.003% of one CPU per server process (0.3% for a
// 100-backend PostgreSQL), plus PSS, which the sampler rations to at most 0.5% of one CPU.
func BenchmarkSample(b *testing.B) {
	self := os.Getpid()
	trees := []struct {
		name string
		pids func() []int
	}{
		{"self", func() []int { return procfs.Tree(self) }},
		{"self+16", func() []int { return procfs.Tree(self) }},
	}
	if os.Getenv("FAIRBENCH_TEST_PG") != "" {
		trees = append(trees, struct {
			name string
			pids func() []int
		}{"postgres", func() []int { return pidsNamed("postgres") }})
	}
	if os.Getenv("FAIRBENCH_TEST_MARIADB") != "" {
		trees = append(trees, struct {
			name string
			pids func() []int
		}{"mariadbd", func() []int { return pidsNamed("mariadbd", "mysqld") }})
	}
	for _, tree := range trees {
		if tree.name == "self+16" {
			for range 16 {
				cmd := exec.Command("sleep", "600")
				if err := cmd.Start(); err != nil {
					b.Skip(err)
				}
				defer func() { cmd.Process.Kill(); cmd.Wait() }()
			}
		}
		for _, pss := range []bool{false, true} {
			mode := "rss"
			if pss {
				mode = "pss"
			}
			b.Run(tree.name+"/"+mode, func(b *testing.B) { benchSample(b, tree.pids, pss) })
		}
	}
}

func benchSample(b *testing.B, pids func() []int, pss bool) {
	// The tree is resolved once: the cost measured is the sampler's, not the pid func's.
	list := pids()
	if len(list) == 0 {
		b.Skip("no processes")
	}
	s := NewProcessSampler(func() []int { return list })
	s.hasRollup = s.hasRollup && pss
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		s.nextPSS = time.Time{}
		if _, err := s.Sample(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(list)), "procs")
}

// pidsNamed scans /proc for processes whose comm is one of names.
func pidsNamed(names ...string) []int {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var out []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/comm")
		if err != nil {
			continue
		}
		comm := strings.TrimSpace(string(b))
		for _, n := range names {
			if comm == n {
				out = append(out, pid)
			}
		}
	}
	return out
}

// The kernel adds a reaped child's disk I/O to its parent's /proc/PID/io, as it does its CPU to
// cutime/cstime, so a child seen with its I/O before it exits must not be counted again when it
// shows up in its parent's figures. Each child (and the dd it runs, one level further down)
// writes and fsyncs a file, reads it back with O_DIRECT (so the read reaches the disk), and lives
// on long enough to be sampled with its I/O before it exits.
func TestProcessSamplerReapedChildDiskIO(t *testing.T) {
	const children, mb = 4, 4
	dir := t.TempDir()
	if !diskIOCounted(t, dir) {
		t.Skipf("writes to %s are not counted in /proc/self/io (tmpfs?)", dir)
	}
	script := `for i in $(seq ` + strconv.Itoa(children) + `); do
		sh -c 'sleep 0.1
			dd if=/dev/zero of="$1" bs=1M count=` + strconv.Itoa(mb) + ` conv=fsync status=none || exit 1
			dd if="$1" of=/dev/null bs=1M iflag=direct status=none || exit 1
			sleep 0.3' sh "$0/f$i" || exit 1
	done
	exec sleep 60`
	cmd := exec.Command("sh", "-c", script, dir)
	if err := cmd.Start(); err != nil {
		t.Skipf("cannot start sh: %v", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	defer func() {
		cmd.Process.Kill()
		<-exited
	}()
	root := cmd.Process.Pid
	s := NewProcessSampler(func() []int { return procfs.Tree(root) })
	first, err := s.Sample()
	if err != nil {
		t.Fatal(err)
	}

	sawChildIO := false
	deadline := time.Now().Add(60 * time.Second)
	for {
		smp, err := s.Sample()
		if err != nil {
			t.Fatal(err)
		}
		sawChildIO = sawChildIO || (smp.Processes > 1 && smp.WriteBytes > first.WriteBytes)
		if b, err := os.ReadFile("/proc/" + strconv.Itoa(root) + "/comm"); err == nil && strings.TrimSpace(string(b)) == "sleep" {
			break
		}
		select {
		case err := <-exited:
			t.Skipf("the script failed (no O_DIRECT here?): %v", err)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatal("the children did not finish")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if !sawChildIO {
		t.Skip("no child was sampled with its I/O before it exited")
	}
	s.Sample()
	last, err := s.Sample()
	if err != nil {
		t.Fatal(err)
	}
	if last.DiskPartial {
		t.Skip("some /proc/PID/io was unreadable")
	}

	want := int64(children * mb << 20)
	for _, c := range []struct {
		name      string
		got, want int64
	}{
		{"written", last.WriteBytes - first.WriteBytes, want},
		{"read", last.ReadBytes - first.ReadBytes, want},
	} {
		if math.Abs(float64(c.got-c.want)) > 0.1*float64(c.want) {
			t.Errorf("bytes %s = %d, want %d ±10%% (%.2fx)", c.name, c.got, c.want, float64(c.got)/float64(c.want))
		}
	}

	// The same hand-over for CPU: with every child reaped, the totals are the root's own plus
	// its reaped descendants' CPU.
	b, err := os.ReadFile("/proc/" + strconv.Itoa(root) + "/stat")
	if err != nil {
		t.Fatal(err)
	}
	st, ok := parseStat(b)
	if !ok {
		t.Fatal("cannot parse the root's stat")
	}
	tck := float64(clockTicks())
	wantUser, wantSys := float64(st.utime+st.cutime)/tck, float64(st.stime+st.cstime)/tck
	if math.Abs(last.CPUUser-wantUser) > 1e-9 || math.Abs(last.CPUSystem-wantSys) > 1e-9 {
		t.Errorf("CPU user/sys = %v/%v, want the root's own+children's %v/%v", last.CPUUser, last.CPUSystem, wantUser, wantSys)
	}
}

// diskIOCounted tells whether a write to dir reaches write_bytes in /proc/self/io.
func diskIOCounted(t *testing.T, dir string) bool {
	t.Helper()
	selfWrite := func() int64 {
		b, err := os.ReadFile("/proc/self/io")
		if err != nil {
			t.Skipf("no /proc/self/io: %v", err)
		}
		_, w, ok := parseIO(b)
		if !ok {
			t.Skip("cannot parse /proc/self/io")
		}
		return w
	}
	f, err := os.CreateTemp(dir, "probe")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w0 := selfWrite()
	if _, err := f.Write(make([]byte, 1<<20)); err != nil {
		t.Fatal(err)
	}
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
	return selfWrite()-w0 >= 1<<20
}
