package runner

import (
	"context"
	"fmt"
	"io"
	"slices"
	"syscall"
	"time"

	"github.com/fairbench/fairbench/internal/result"
)

// interruptGrace is how long a Ctrl-C waits for clients to finish their transaction before it
// abandons them, so a frozen server never holds the user for more than about a second.
const interruptGrace = 500 * time.Millisecond

// endGrace is how long the end of a run waits for clients still in a transaction: long enough
// for any healthy transaction, short against the run. The floor is 2 s, not 1: on hot rows a
// PostgreSQL transaction can wait deadlock_timeout (1 s) before the deadlock is found, then retry
// and commit with an fsync, so a 1 s grace marked short healthy runs incomplete.
func endGrace(d time.Duration) time.Duration {
	return min(5*time.Second, max(2*time.Second, d/10))
}

// measurement is the reporter's side of a run: the clock, the warm-up, the intervals, the ramp's
// steps and the end.
type measurement struct {
	cfg      *Config
	cs       *clients
	kinds    []string // the workload's transaction types, if it has them
	finite   bool     // the clients run fixed lists (workload.FixedList)
	ramp     *rampState
	rampStop string
	active   int // clients let in so far
	ivs      *intervals
	started  bool      // the measured window began (the warm-up was over)
	start    time.Time // of the measured window
	end      time.Time // of the measured window
	cpuStart time.Duration
	stall    *StallError
}

// run warms up, measures until the end or a stop, stops the clients and waits for them (within
// a grace). It returns why the run stopped early, or nil. A transaction counts when it ends
// inside the measured window: one still running at the end is not counted, so transactions a
// stalled server answers late never inflate the window's rate.
func (m *measurement) run(ctx context.Context, measureFrom time.Time) error {
	reason := m.warmUp(ctx, measureFrom)
	if reason == nil {
		if !m.started {
			m.begin()
		}
		reason = m.window(ctx)
	}
	m.cs.measuring.Store(false)
	m.end = time.Now()
	m.cs.halt()
	grace, limit := interruptGrace, interruptGrace
	if reason == nil {
		grace = endGrace(m.cfg.Duration) + maxPause(m.cs.list)
		limit = graceLimit * grace
	}
	stuck := waitFor(m.cs.list, grace, limit)
	if len(stuck) > 0 {
		m.stall = &StallError{Clients: len(stuck), Grace: grace, Wall: time.Since(m.start)}
		if m.cfg.OnStall != nil {
			m.stall.Evidence = m.cfg.OnStall()
		}
	}
	m.cs.abandon(stuck)
	return reason
}

// warmUp runs the clients, uncounted, until measureFrom.
func (m *measurement) warmUp(ctx context.Context, measureFrom time.Time) error {
	if m.cfg.Warmup <= 0 {
		return nil
	}
	// Shards on several hosts begin measuring at one StartAt: a Go timer can fire milliseconds
	// late on a busy machine, so it wakes early and the pacer's precise wait finishes the job.
	early := time.Duration(0)
	if !m.cfg.StartAt.IsZero() {
		early = startAtMargin
	}
	t := time.NewTimer(time.Until(measureFrom) - early)
	defer t.Stop()
	select {
	case <-t.C:
		if early > 0 {
			waitUntil(measureFrom, &m.cs.stop)
		}
		return nil
	case <-ctx.Done():
		return ErrInterrupted
	case <-m.cs.fatalCh:
		return errFatal
	}
}

// startAtMargin is how early the warm-up's timer wakes before a StartAt.
const startAtMargin = 20 * time.Millisecond

// errFatal stands for a client's fatal error until Run replaces it with the error itself.
var errFatal = fmt.Errorf("a client failed")

// begin starts counting: the measured window starts now, after any warm-up bookkeeping. Without
// a warm-up Run calls it before the clients start, so none of their first transactions is lost.
func (m *measurement) begin() {
	// The window opens when counting does: reading the server's counters (Observer.MeasureStart) takes a
	// round trip or more, and the shards of one run must open their windows at one instant.
	m.cs.measuring.Store(true)
	m.start = time.Now()
	m.cs.outages.begin(m.start)
	observers(m.cfg.Observers).measureStart()
	m.started = true
	m.cpuStart = cpuTime()
	if m.ramp != nil {
		m.ramp.stepStart = m.start
	}
	m.ivs = newIntervals(m.tallies(), m.start, m.cfg.Observers, m.kinds)
}

// window cuts an interval every ReportInterval until Duration is over (the last interval is cut
// after the clients have stopped), a ramp stops, ctx is cancelled or a client fails. Interval
// ends are set from the window's start, so a late reporter does not shift the ones after; the
// last is stretched to the end rather than leaving a sliver of an interval.
func (m *measurement) window(ctx context.Context) error {
	every, end := m.cfg.ReportInterval, m.start.Add(m.cfg.Duration)
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		k := time.Since(m.start)/every + 1
		boundary := m.start.Add(k * every)
		final := end.Sub(boundary) < every/10
		if final {
			boundary = end
		}
		timer.Reset(time.Until(boundary))
		select {
		case <-timer.C:
		case <-ctx.Done():
			return ErrInterrupted
		case <-m.cs.fatalCh:
			return errFatal
		case <-m.cs.listsDone:
			return nil
		}
		if final {
			m.rampStop = "time"
			return nil
		}
		if m.cut() {
			return nil
		}
	}
}

// cut closes one interval, reports it, and feeds the ramp; true when the ramp is done.
func (m *measurement) cut() bool {
	sum, span, iv := m.ivs.cut(m.active)
	if m.cs.pool != nil {
		iv.ConnsInUse = int(m.cs.pool.inUse.Load())
	}
	if m.cfg.Progress != nil {
		printInterval(m.cfg.Progress, iv, sum, span)
	}
	if m.ramp == nil {
		return false
	}
	level, why := m.ramp.observe(m.ivs.merged, sum.txns, sum.errors, m.ivs.last)
	if why != "" {
		m.rampStop = why
		return true
	}
	for ; m.active < level; m.active++ {
		close(m.cs.list[m.active].gate)
	}
	return false
}

// graceLimit bounds the end's wait, in graces, however long the clients keep returning.
const graceLimit = 3

// waitFor waits for every client to return and lists those that did not. It gives up once none
// has returned for grace, or after limit in all: a server working through a queue of lock waits
// (PostgreSQL finds each deadlock only after deadlock_timeout, 1 s) keeps releasing clients and
// is waited for, a frozen one releases none. Transactions that end after the window are not
// counted either way; only whether the run is complete depends on it.
func waitFor(list []*client, grace, limit time.Duration) []*client {
	start := time.Now()
	last := start
	pending := slices.Clone(list)
	for {
		n := len(pending)
		pending = slices.DeleteFunc(pending, func(cl *client) bool {
			select {
			case <-cl.done:
				return true
			default:
				return false
			}
		})
		now := time.Now()
		if len(pending) < n {
			last = now
		}
		if len(pending) == 0 {
			return nil
		}
		if now.Sub(last) >= grace || now.Sub(start) >= limit {
			return pending
		}
		select {
		case <-pending[0].done:
		case <-time.After(2 * time.Millisecond):
		}
	}
}

// maxPause is the longest on-purpose pause any client took in one transaction (TPC-C's think
// times): a client in such a pause is not stuck on the server, so the end waits for it.
func maxPause(list []*client) time.Duration {
	var p time.Duration
	for _, cl := range list {
		p = max(p, cl.tally.pause())
	}
	return p
}

// finish closes the last interval at the end, records the ramp and folds the tallies into res.
func (m *measurement) finish(res *result.Result, sh shape) error {
	var measured time.Duration
	if m.started {
		measured = m.end.Sub(m.start)
		n := len(m.ivs.list)
		tail, tailHist := m.ivs.cutLast(m.active, m.end, m.cfg.ReportInterval/10)
		if len(m.ivs.list) > n && m.cfg.Progress != nil {
			printInterval(m.cfg.Progress, &m.ivs.list[n], tail, m.ivs.lastLen)
		}
		res.Intervals = m.ivs.list
		if m.ramp != nil && m.rampStop == "time" {
			m.ramp.observe(tailHist, tail.txns, tail.errors, m.end)
		}
		res.ClientCPUS = (cpuTime() - m.cpuStart).Seconds()
		res.Measured = &result.Window{From: m.start.UTC(), To: m.end.UTC()}
	}
	res.ClientScheduling = m.cs.policy
	if m.cs.fellBack.Load() {
		res.ClientScheduling = SchedNormal
	}
	if m.ramp != nil {
		res.Ramp = m.ramp.finish(m.end, m.rampStop)
		res.Threads = m.active
		res.Label = "ramp"
	}
	if err := fold(res, m.tallies(), sh, measured); err != nil {
		return err
	}
	if m.started {
		m.availability(res)
	}
	m.judge(res, measured)
	return nil
}

// judge marks a result that measured too little to mean anything, and says so on the progress
// output, where a reader would otherwise take its summary's rate as a figure.
func (m *measurement) judge(res *result.Result, measured time.Duration) {
	if m.finite {
		return // its figures are its transactions' own times, not a rate a short window makes noise
	}
	why := tooLittle(res, measured, !m.started)
	ok := why == ""
	res.Meaningful = &ok
	if ok {
		return
	}
	res.NotMeaningful = why
	res.TPS, res.QPS = 0, 0
	for _, k := range res.ByKind {
		k.TPS = 0
	}
	if m.cfg.Progress != nil {
		fmt.Fprintf(m.cfg.Progress, "not a figure: this run %s; its rate is left out\n", why)
	}
}

func (m *measurement) tallies() []*tally {
	out := make([]*tally, len(m.cs.list))
	for i, cl := range m.cs.list {
		out[i] = cl.tally
	}
	return out
}

// printInterval writes sysbench's interval line, with p99 beside p95 and retries for reconnects.
func printInterval(w io.Writer, iv *result.Interval, sum counts, span time.Duration) {
	s := max(span.Seconds(), 1e-9)
	fmt.Fprintf(w, "[ %.0fs ] thds: %d tps: %.2f qps: %.2f (r/w/o: %.2f/%.2f/%.2f) lat (ms,95%%/99%%): %.2f/%.2f err/s: %.2f retry/s: %.2f\n",
		iv.T, iv.Threads, iv.TPS, iv.QPS, float64(sum.reads)/s, float64(sum.writes)/s, float64(sum.other)/s,
		iv.P95MS, iv.P99MS, float64(iv.Errors)/s, float64(iv.Retries)/s)
}

// cpuTime is this process's user+system CPU, the client's cost of the benchmark.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
