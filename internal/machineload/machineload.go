// Package machineload measures what else the machine does while fairbench measures: the CPU that
// processes other than fairbench and the server under test use, and the CPU the hypervisor steals.
// A verdict taken on a busy machine is not evidence (two compares at once each measured about half
// their TPS alone), so every interval records both and a result says when it was measured busy.
package machineload

import (
	"context"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/fairbench/fairbench/internal/procfs"
	"github.com/fairbench/fairbench/internal/result"
)

// BusyPct is the share of the machine's CPU that others may use, on average over a measured
// window, before its result is marked busy.
const BusyPct = 10.0

// StealLimitPct is the share of the machine's CPU the hypervisor may steal, on average over a
// measured window, before compare measures the step again (Stolen). Measured here
// (docs/measurements.md, "What a round's noise is made of"): over five quick-suite comparisons,
// steal explained 81% of the insert rounds' spread (up to 28% of the machine in a window, in a
// third of the insert windows, alike on every engine), and the rounds under 5% spread half as
// much; read-only windows stayed under it.
const StealLimitPct = 5.0

// Stolen says whether the hypervisor stole more than StealLimitPct of the machine over the
// window m sums up.
func Stolen(m *result.MachineLoad) bool { return m != nil && m.StealPctMean > StealLimitPct }

// StolenRetries is how many times a window is measured again after the hypervisor stole from
// it: a third of the insert windows were stolen from here, so two more leave about one step in
// thirty measured under steal, and it says so.
const StolenRetries = 2

// Unstolen measures, and again, up to StolenRetries times, while the hypervisor stole more than
// StealLimitPct of the machine over the window: such a window measures the host's other tenants
// as much as the engine (the rounds' largest noise here), alike for every engine, so compare's
// steps and capacity's rates are all held to it. The rule looks at the machine, never at the
// figure measured. The windows set aside stay in the result (machine.set_aside); again hears of
// each before it is measured again. A window that failed or was cut short is never measured
// again: what went wrong is the result.
func Unstolen(ctx context.Context, measure func(context.Context) (*result.Result, error), again func(result.SetAsideWindow)) (*result.Result, error) {
	var aside []result.SetAsideWindow
	for try := 0; ; try++ {
		res, err := measure(ctx)
		if res == nil || err != nil || !res.Complete || !Stolen(res.Machine) || try == StolenRetries || ctx.Err() != nil {
			if res != nil && res.Machine != nil && len(aside) > 0 {
				res.Machine.SetAside, res.Machine.StealLimitPct = aside, StealLimitPct
			}
			return res, err
		}
		m := res.Machine
		w := result.SetAsideWindow{StealPctMean: m.StealPctMean, StealPctMax: m.StealPctMax, TPS: res.TPS}
		aside = append(aside, w)
		if again != nil {
			again(w)
		}
	}
}

// Sampler takes the machine's CPU account at each interval's end.
type Sampler struct {
	// root is the oldest fairbench process above this one (compare, whose client-host shards and
	// servers are all its descendants), or this process.
	root int
	// server lists the server's processes where fairbench knows them (a throwaway server; nil for
	// a server given by DSN, whose CPU is then the interval's server_cpu_pct).
	server func() []int
	last   snapshot
}

// snapshot is the machine's CPU ticks (/proc/stat) and those of fairbench's own processes and
// the server's, at one moment.
type snapshot struct {
	total, busy, steal uint64
	ours               uint64
	ok                 bool
}

// New starts a sampler; server (may be nil) lists the server's processes.
func New(server func() []int) *Sampler {
	s := &Sampler{server: server, root: fairbenchRoot()}
	s.last = s.take()
	return s
}

// Reset takes the baseline again: where measurement really starts (after the settle's flush and
// the warm-up), as the server's monitor does.
func (s *Sampler) Reset() { s.last = s.take() }

// OnInterval records, in iv, the CPU others used and the steal since the last call, as percent
// of the whole machine. Call it after the server's monitor has filled iv.ServerCPUPct.
func (s *Sampler) OnInterval(iv *result.Interval) {
	now := s.take()
	prev := s.last
	s.last = now
	if !now.ok || !prev.ok || now.total <= prev.total {
		return
	}
	total := float64(now.total - prev.total)
	busy := float64(now.busy - prev.busy)
	ours := float64(max(now.ours, prev.ours) - prev.ours)
	others := busy - ours
	if s.server == nil {
		others -= iv.ServerCPUPct / 100 * total // measured apart: a server fairbench did not start
	}
	iv.OthersCPUPct = round1(max(0, others) / total * 100)
	iv.StealPct = round1(float64(now.steal-prev.steal) / total * 100)
}

// Summary is the measured window's account: others' and steal's mean and peak, and whether the
// window was busy. nil where no interval was sampled.
func Summary(ivs []result.Interval) *result.MachineLoad {
	n := len(ivs)
	m := &result.MachineLoad{BusyPct: BusyPct}
	for _, iv := range ivs {
		m.OthersCPUPctMean += iv.OthersCPUPct
		m.StealPctMean += iv.StealPct
		m.OthersCPUPctMax = max(m.OthersCPUPctMax, iv.OthersCPUPct)
		m.StealPctMax = max(m.StealPctMax, iv.StealPct)
	}
	if n == 0 {
		return nil
	}
	m.OthersCPUPctMean = round1(m.OthersCPUPctMean / float64(n))
	m.StealPctMean = round1(m.StealPctMean / float64(n))
	m.Busy = m.OthersCPUPctMean > BusyPct
	return m
}

// take reads the machine's ticks and those of fairbench's own process tree and the server's.
func (s *Sampler) take() snapshot {
	var snap snapshot
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return snap
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line)
	if len(f) < 9 || f[0] != "cpu" {
		return snap
	}
	v := make([]uint64, len(f)-1)
	for i := range v {
		v[i], _ = strconv.ParseUint(f[i+1], 10, 64)
	}
	// user nice system idle iowait irq softirq steal (guest time is inside user and nice)
	snap.busy = v[0] + v[1] + v[2] + v[5] + v[6]
	snap.steal = v[7]
	snap.total = snap.busy + v[3] + v[4] + snap.steal
	pids := procfs.Tree(s.root)
	if s.server != nil {
		pids = append(pids, s.server()...)
	}
	snap.ours = ticksOf(pids)
	snap.ok = true
	return snap
}

// ticksOf is the CPU ticks of the processes, each once: their own and their reaped children's.
func ticksOf(pids []int) uint64 {
	seen := map[int]bool{}
	var sum uint64
	for _, pid := range pids {
		if seen[pid] {
			continue
		}
		seen[pid] = true
		if f, ok := procfs.StatFields(pid); ok && len(f) > 14 {
			for _, k := range []int{11, 12, 13, 14} { // utime stime cutime cstime
				t, _ := strconv.ParseUint(f[k], 10, 64)
				sum += t
			}
		}
	}
	return sum
}

// fairbenchRoot is the oldest ancestor of this process that runs the same binary: a shard that
// compare started on a simulated client host counts compare, the other shards and the servers as
// its own, not as others' load.
func fairbenchRoot() int {
	self, err := os.Readlink("/proc/self/exe")
	root := os.Getpid()
	if err != nil {
		return root
	}
	for {
		f, ok := procfs.StatFields(root)
		if !ok || len(f) < 2 {
			return root
		}
		ppid, _ := strconv.Atoi(f[1])
		if ppid <= 1 {
			return root
		}
		if exe, err := os.Readlink("/proc/" + strconv.Itoa(ppid) + "/exe"); err != nil || exe != self {
			return root
		}
		root = ppid
	}
}

func round1(v float64) float64 { return float64(int64(v*10+0.5)) / 10 }

// QuietProbe is how long WaitQuiet samples the machine at a time.
const QuietProbe = 200 * time.Millisecond

// WaitQuiet samples the machine until others use at most BusyPct of its CPU, for at most
// maxWait, and returns the share others used in the last sample (the caller says so when it is
// still above BusyPct: the step then goes on, and its result will be marked busy). server lists
// the server's processes (nil: none), whose idle work is not others'.
func WaitQuiet(ctx context.Context, server func() []int, maxWait time.Duration, waiting func(othersPct float64)) float64 {
	deadline := time.Now().Add(maxWait)
	s := New(server)
	for {
		select {
		case <-ctx.Done():
			return 0
		case <-time.After(QuietProbe):
		}
		var iv result.Interval
		s.OnInterval(&iv)
		if iv.OthersCPUPct <= BusyPct || time.Now().After(deadline) {
			return iv.OthersCPUPct
		}
		if waiting != nil {
			waiting(iv.OthersCPUPct)
		}
	}
}
