package runner

import (
	"math/rand/v2"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"
)

// A pacer says when a client's next transaction is due: at once (closed loop), at the next
// arrival of a shared schedule (open loop), or after a pause of its own. Latency is counted
// from the due time, so an open-loop transaction that waited behind a stall shows it instead of
// silently lowering the load (coordinated omission).
//
// Which clients run at all is the ramp's business (their gates, ramp.go), and which connection a
// client uses is the client's: a "stages" load (one client added per stage, each request after a
// random 0-40 ms wait, clients sharing a fixed pool of connections) is a ramp with add=1, a pacer
// that returns after its random wait, and clients that take a connection from a shared pool per
// transaction instead of owning one.
type pacer interface {
	// next blocks the calling client until its next transaction is due and returns that time
	// (zero for "now", which saves a clock read); ok is false when the run stopped while it waited.
	next(cl *client) (due time.Time, ok bool)
	// open is true when due times come from a schedule, so the lag behind them is worth recording.
	open() bool
}

// newPacer picks the pacing policy for cfg.
func newPacer(cfg *Config, start time.Time, stop *atomic.Bool) pacer {
	if cfg.Rate > 0 {
		return newPoisson(cfg.Rate, start, stop, cfg.Seed)
	}
	if r := cfg.Ramp; r != nil && r.Stages {
		return stagePacer{min: r.DelayMin, max: r.DelayMax, stop: stop}
	}
	return closedLoop{}
}

// closedLoop starts each transaction as soon as the previous one is done.
type closedLoop struct{}

func (closedLoop) next(*client) (time.Time, bool) { return time.Time{}, true }
func (closedLoop) open() bool                     { return false }

// poisson is an open loop: arrivals at rate per second for all clients together, with
// exponential gaps, each taken by the next free client. The schedule is one atomic counter: a
// client claims the arrival it holds and moves it on by a gap drawn from its own generator
// (independent exponential gaps make a Poisson process whoever draws them), so taking an arrival
// costs one atomic add, no lock and no channel.
type poisson struct {
	start   time.Time
	due     atomic.Int64 // the next unclaimed arrival, in ns after start
	meanGap float64      // ns
	stop    *atomic.Bool
}

func newPoisson(rate float64, start time.Time, stop *atomic.Bool, seed uint64) *poisson {
	p := &poisson{start: start, meanGap: float64(time.Second) / rate, stop: stop}
	p.due.Store(p.gap(rand.New(rand.NewPCG(seed, 0x5eed))))
	return p
}

func (p *poisson) gap(rng *rand.Rand) int64 { return int64(rng.ExpFloat64() * p.meanGap) }

func (p *poisson) open() bool { return true }

func (p *poisson) next(cl *client) (time.Time, bool) {
	g := p.gap(cl.rng)
	due := p.start.Add(time.Duration(p.due.Add(g) - g))
	if time.Until(due) <= spinMargin || !cl.batch {
		return due, waitUntil(due, p.stop)
	}
	// Asleep under SCHED_BATCH a client wakes without preempting whatever runs, which on a busy
	// machine starts it a scheduler slice late; it waits under the normal policy and takes
	// SCHED_BATCH back for the statement. Measured at load average 45 on this 2-core VM
	// (bench/open-loop-lag.sh, 2,000/s, 8 threads): median lag 0.23 ms waiting under batch,
	// 0.05 ms under normal. Two system calls, for a transaction that had time to wait.
	setThreadScheduling(SchedNormal)
	ok := waitUntil(due, p.stop)
	setThreadScheduling(SchedBatch)
	return due, ok
}

// Waiting for an arrival: Go's timers wake a sleeper up to a millisecond late here (the runtime
// polls its timers with a millisecond timeout when idle), which at 2,000 arrivals a second was
// most of a 0.8 ms reported latency for a 0.1 ms query. The client thread is locked to its OS
// thread, so it sleeps in clock_nanosleep itself (with its timer slack cut to 1 ns, see
// sched.go) to spinMargin before the arrival and spins the rest on the clock. Measured on this
// 2-core VM: nanosleep wakes 23-27 µs late (time.Sleep 700 µs), so a 30 µs margin starts
// transactions within about 0.1 µs of their arrival for about 7 µs of spinning each.
const (
	spinMargin = 30 * time.Microsecond
	// sleepSlice bounds one sleep, so a client waiting for a far arrival notices the end of the run.
	sleepSlice = 10 * time.Millisecond
)

// waitUntil returns when t has come (true) or the run stopped first (false).
func waitUntil(t time.Time, stop *atomic.Bool) bool {
	for {
		d := time.Until(t)
		if d <= 0 {
			return true
		}
		if stop.Load() {
			return false
		}
		if d > spinMargin {
			nanosleep(min(d-spinMargin, sleepSlice))
		}
	}
}

// nanosleep blocks the calling OS thread for d, through the scheduler (a syscall it can hand the
// thread's P away from), without a Go timer.
func nanosleep(d time.Duration) {
	ts := syscall.NsecToTimespec(int64(d))
	const clockMonotonic = 1
	syscall.Syscall6(syscall.SYS_CLOCK_NANOSLEEP, clockMonotonic, 0, uintptr(unsafe.Pointer(&ts)), 0, 0, 0)
}
