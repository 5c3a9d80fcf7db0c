// Package runner drives a workload: it owns the client threads, the clock, the arrival rate,
// retries, interval reports and the counting, so that every workload on every engine is measured
// by the same code.
package runner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/fairbench/fairbench/internal/histogram"
	"github.com/fairbench/fairbench/internal/randgen"
	"github.com/fairbench/fairbench/internal/result"
	"github.com/fairbench/fairbench/internal/sqldb"
	"github.com/fairbench/fairbench/internal/workload"
)

// Config is how to run; the workload says what to run.
type Config struct {
	Threads        int
	Duration       time.Duration // measured time, after the warm-up
	Warmup         time.Duration
	Rate           float64 // transactions per second for all threads together; 0 = closed loop
	ReportInterval time.Duration
	MaxTries       int // attempts per transaction, retries included
	Rand           *randgen.Config
	Seed           uint64 // 0 = from the clock
	// Progress receives one sysbench-like line per interval; nil = silent.
	Progress io.Writer
	// OnInterval is called after each measured interval (server metrics sampling hooks in here).
	OnInterval func(iv *result.Interval)
	// OnMeasureStart is called when the warm-up ends and counting begins, so server-side counters
	// can take their starting point there and per-transaction figures exclude the warm-up.
	OnMeasureStart func()
	// Ramp, when set, starts with Ramp.Add clients and adds more each step up to Ramp.Max (which
	// Threads must equal); Duration is then an upper bound.
	Ramp *Ramp
}

// Connector opens one connection to the server under test.
type Connector func(ctx context.Context) (sqldb.Conn, error)

// counts is what one thread adds up between two interval reports.
type counts struct {
	txns, errors, retries, rollbacks int64
	q                                workload.Queries
}

func (c *counts) add(o *counts) {
	c.txns += o.txns
	c.errors += o.errors
	c.retries += o.retries
	c.rollbacks += o.rollbacks
	c.q.Read += o.q.Read
	c.q.Write += o.q.Write
	c.q.Other += o.q.Other
}

// thread is one client. Its interval slot is shared with the reporter behind mu; the lock is
// uncontended except once per interval, so it costs a few nanoseconds per transaction, far below
// any transaction's latency. Totals are thread-local and read only after the thread has ended.
type thread struct {
	mu       sync.Mutex
	interval counts
	ivHist   *histogram.Histogram

	total     counts
	totalHist *histogram.Histogram
	lagHist   *histogram.Histogram
	// byKind holds per-transaction-type totals for Typed workloads; thread-local like total.
	byKind []kindTotals
	_      [64]byte // keep neighbouring threads' locks off one cache line
}

type kindTotals struct {
	n    counts
	hist *histogram.Histogram
}

// FatalError is a non-retryable failure that stopped the run.
type FatalError struct {
	Thread int
	Err    error
}

func (e *FatalError) Error() string {
	if code := sqldb.ErrorCode(e.Err); code != "" {
		return fmt.Sprintf("thread %d: %v (code %s)", e.Thread, e.Err, code)
	}
	return fmt.Sprintf("thread %d: %v", e.Thread, e.Err)
}
func (e *FatalError) Unwrap() error { return e.Err }

// Run connects the threads, runs the workload for the warm-up and the measured duration, and
// returns the measurements. When ctx is cancelled (Ctrl-C) or a thread fails for good, it stops
// early and returns what it measured with Complete=false and the error.
func Run(ctx context.Context, cfg Config, connect Connector, wl workload.Workload) (*result.Result, error) {
	if cfg.Threads < 1 {
		return nil, fmt.Errorf("--threads must be at least 1")
	}
	if cfg.MaxTries < 1 {
		cfg.MaxTries = 1
	}
	if cfg.ReportInterval <= 0 {
		cfg.ReportInterval = time.Second
	}
	seed := cfg.Seed
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}

	// Connect and prepare every thread before the clock starts: connection set-up is not workload.
	workers := make([]workload.Worker, cfg.Threads)
	conns := make([]sqldb.Conn, cfg.Threads)
	defer func() {
		for _, c := range conns {
			if c != nil {
				c.Close()
			}
		}
	}()
	for i := range workers {
		c, err := connect(ctx)
		if err != nil {
			return nil, err
		}
		conns[i] = c
		w, err := wl.NewWorker(ctx, c, cfg.Rand.New(seed+uint64(i)*0x9e3779b97f4a7c15), i, cfg.Threads)
		if err != nil {
			return nil, err
		}
		workers[i] = w
	}

	var kinds []string
	if typed, ok := wl.(workload.Typed); ok {
		kinds = typed.TransactionKinds()
	}
	threads := make([]*thread, cfg.Threads)
	for i := range threads {
		threads[i] = &thread{ivHist: histogram.New(), totalHist: histogram.New(), lagHist: histogram.New()}
		for range kinds {
			threads[i].byKind = append(threads[i].byKind, kindTotals{hist: histogram.New()})
		}
	}

	// Statements run on a context that is never cancelled: a run ends between transactions, as
	// sysbench's does, so no transaction is cut off half-way and counted wrong.
	stmtCtx := context.WithoutCancel(ctx)
	var stop atomic.Bool
	stopped := make(chan struct{}) // closed with stop, for goroutines that block
	var fatal atomic.Pointer[FatalError]
	start := time.Now()
	measureFrom := start.Add(cfg.Warmup)
	var measuring atomic.Bool
	if cfg.Warmup <= 0 {
		measuring.Store(true)
	}

	var arrivals chan time.Time
	if cfg.Rate > 0 {
		arrivals = make(chan time.Time, 1024)
		go schedule(arrivals, cfg.Rate, start, stopped, seed)
	}

	var cpuAtMeasure time.Duration
	// In a ramp, clients beyond the current step wait at their gate, connected and prepared.
	active := cfg.Threads
	var gates []chan struct{}
	var ramp *rampState
	if cfg.Ramp != nil {
		if cfg.Ramp.Add < 1 || cfg.Ramp.Every <= 0 || cfg.Ramp.Max != cfg.Threads {
			return nil, fmt.Errorf("ramp needs add >= 1, every > 0 and max = threads")
		}
		ramp = newRampState(*cfg.Ramp, time.Now())
		active = ramp.level
		gates = make([]chan struct{}, cfg.Threads)
		for i := active; i < cfg.Threads; i++ {
			gates[i] = make(chan struct{})
		}
	}
	policy := clientScheduling()
	var schedFellBack atomic.Bool
	var wg sync.WaitGroup
	for i := range workers {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			// One OS thread per client, as sysbench has: the connection's reads block in the
			// kernel on this thread (see sqldb's blockingConn), and a goroutine that the Go
			// scheduler moved between threads after each preemption woke on a thread the kernel
			// had no history for, preempting the server more often. Measured: about 10% more
			// oltp_read_only TPS on PostgreSQL at the same client CPU. The thread's scheduling
			// policy is set once here (sched.go says why). The thread is never unlocked, so
			// it ends with the goroutine and its policy never reaches other goroutines.
			runtime.LockOSThread()
			if got := setThreadScheduling(policy); got != policy {
				schedFellBack.Store(true)
			}
			if gates != nil && gates[i] != nil {
				select {
				case <-gates[i]:
				case <-stopped:
					return
				}
			}
			t := threads[i]
			w, c := workers[i], conns[i]
			// Declared once: &n reaches the workload through an interface, so a per-transaction
			// variable would be one heap allocation per transaction.
			var n counts
			for !stop.Load() {
				var intended time.Time
				if arrivals != nil {
					var ok bool
					intended, ok = <-arrivals
					if !ok {
						return
					}
				}
				began := time.Now()
				if arrivals == nil {
					intended = began
				}
				n = counts{}
				err := attempt(stmtCtx, w, c, cfg.MaxTries, &n)
				done := time.Now()
				if err != nil && !sqldb.IsRetryable(err) {
					fatal.CompareAndSwap(nil, &FatalError{Thread: i, Err: err})
					stop.Store(true)
					return
				}
				if !measuring.Load() {
					continue
				}
				micros := (done.Sub(intended) - n.q.Paused).Microseconds()
				t.total.add(&n)
				t.totalHist.Record(micros)
				if arrivals != nil {
					t.lagHist.Record(began.Sub(intended).Microseconds())
				}
				if k := n.q.Kind; k >= 0 && k < len(t.byKind) {
					t.byKind[k].n.add(&n)
					if n.txns > 0 {
						t.byKind[k].hist.Record(micros)
					}
				}
				t.mu.Lock()
				t.interval.add(&n)
				t.ivHist.Record(micros)
				t.mu.Unlock()
			}
		}(i)
	}

	// The reporter: it owns the clock, so threads never read it for anything but latency.
	res := &result.Result{Threads: cfg.Threads, Rate: cfg.Rate, WarmupS: cfg.Warmup.Seconds(), Complete: true}
	ivHist := histogram.New()
	var stopReason error
	if cfg.Warmup > 0 {
		select {
		case <-time.After(time.Until(measureFrom)):
		case <-ctx.Done():
			stopReason = ctx.Err()
		case <-pollFatal(&fatal, &stop):
		}
		// Throw away what the warm-up recorded in the interval slots.
		for _, t := range threads {
			t.mu.Lock()
			t.interval = counts{}
			t.ivHist.Reset()
			t.mu.Unlock()
		}
		measuring.Store(true)
	}
	if cfg.OnMeasureStart != nil {
		cfg.OnMeasureStart()
	}
	measureStart := time.Now()
	cpuAtMeasure = cpuTime()
	if ramp != nil {
		ramp.stepStart = measureStart
	}
	rampStop := ""
	tick := time.NewTicker(cfg.ReportInterval)
	lastTick := measureStart
	// The measured window starts now, after any warm-up bookkeeping, and lasts exactly Duration.
	deadline := time.NewTimer(cfg.Duration)
	fatalCh := pollFatal(&fatal, &stop)
loop:
	for stopReason == nil {
		select {
		case now := <-tick.C:
			span := now.Sub(lastTick)
			iv, sum := collect(threads, active, ivHist, span, now.Sub(measureStart))
			rwo := rates(sum, span)
			lastTick = now
			if cfg.OnInterval != nil {
				cfg.OnInterval(&iv)
			}
			res.Intervals = append(res.Intervals, iv)
			if cfg.Progress != nil {
				printInterval(cfg.Progress, &iv, rwo, span)
			}
			if ramp != nil {
				level, why := ramp.observe(ivHist, sum.txns, sum.errors, now)
				if why != "" {
					rampStop = why
					break loop
				}
				for ; active < level; active++ {
					close(gates[active])
				}
			}
		case <-deadline.C:
			rampStop = "time"
			break loop
		case <-ctx.Done():
			stopReason = fmt.Errorf("interrupted")
		case <-fatalCh:
			break loop
		}
	}
	tick.Stop()
	stop.Store(true)
	close(stopped)
	measured := time.Since(measureStart)
	// Threads finish the transaction in flight; they do not start another.
	wg.Wait()
	cpuUsed := cpuTime() - cpuAtMeasure

	if f := fatal.Load(); f != nil {
		stopReason = f
	}
	// A last partial interval, so the intervals add up to the totals.
	if tail := time.Since(lastTick); tail > cfg.ReportInterval/10 {
		iv, sum := collect(threads, active, ivHist, tail, measured)
		if ramp != nil && rampStop == "time" {
			ramp.observe(ivHist, sum.txns, sum.errors, time.Now())
		}
		if cfg.OnInterval != nil {
			cfg.OnInterval(&iv)
		}
		res.Intervals = append(res.Intervals, iv)
	}

	total := counts{}
	hist := histogram.New()
	lag := histogram.New()
	for _, t := range threads {
		total.add(&t.total)
		hist.Merge(t.totalHist)
		lag.Merge(t.lagHist)
	}
	secs := measured.Seconds()
	res.DurationS = secs
	res.Transactions = total.txns
	res.Errors = total.errors
	res.Retries = total.retries
	res.Rollbacks = total.rollbacks
	if len(kinds) > 0 {
		res.ByKind = map[string]*result.KindStats{}
		for k, name := range kinds {
			var sum counts
			h := histogram.New()
			for _, t := range threads {
				sum.add(&t.byKind[k].n)
				h.Merge(t.byKind[k].hist)
			}
			ks := &result.KindStats{Transactions: sum.txns, Errors: sum.errors, Retries: sum.retries, Rollbacks: sum.rollbacks, LatencyMS: h.Latency()}
			if secs > 0 {
				ks.TPS = float64(sum.txns) / secs
			}
			res.ByKind[name] = ks
		}
	}
	res.Queries = result.Queries{Read: total.q.Read, Write: total.q.Write, Other: total.q.Other,
		Total: total.q.Read + total.q.Write + total.q.Other}
	if secs > 0 {
		res.TPS = float64(total.txns) / secs
		res.QPS = float64(res.Queries.Total) / secs
	}
	res.LatencyMS = hist.Latency()
	if cfg.Rate > 0 {
		l := lag.Latency()
		res.ScheduleLagMS = &l
	}
	res.ClientCPUS = cpuUsed.Seconds()
	res.ClientScheduling = policy
	if schedFellBack.Load() {
		res.ClientScheduling = SchedNormal
	}
	if ramp != nil {
		res.Ramp = ramp.finish(time.Now(), rampStop)
		res.Threads = active
		res.Label = "ramp"
	}
	enc, err := hist.Encode()
	if err != nil {
		return res, err
	}
	res.Histogram = enc
	if stopReason != nil {
		res.Complete = false
		res.Error = stopReason.Error()
		return res, stopReason
	}
	return res, nil
}

// attempt runs one transaction, retrying transient conflicts up to maxTries attempts in all. After
// any failed attempt it rolls back, since engines differ in what a failed statement leaves open.
func attempt(ctx context.Context, w workload.Worker, c sqldb.Conn, maxTries int, n *counts) error {
	for try := 1; ; try++ {
		err := w.Transaction(ctx, &n.q)
		if err == nil {
			n.txns++
			return nil
		}
		if errors.Is(err, workload.ErrRolledBack) {
			if rbErr := c.Exec(ctx, "ROLLBACK"); rbErr != nil {
				return rbErr
			}
			n.txns++
			n.rollbacks++
			return nil
		}
		if rbErr := c.Exec(ctx, "ROLLBACK"); rbErr != nil && !sqldb.IsRetryable(err) {
			return errors.Join(err, rbErr)
		}
		if !sqldb.IsRetryable(err) {
			return err
		}
		if try >= maxTries {
			// Exhausted: counted as an error, and the run goes on, as with sysbench's ignored errors.
			n.errors++
			return nil
		}
		n.retries++
	}
}

// collect takes every thread's interval slot and turns it into one interval record.
// active is how many clients were running (fewer than len(threads) during a ramp).
func collect(threads []*thread, active int, merged *histogram.Histogram, span, at time.Duration) (result.Interval, counts) {
	merged.Reset()
	var sum counts
	for _, t := range threads {
		t.mu.Lock()
		sum.add(&t.interval)
		t.interval = counts{}
		merged.Merge(t.ivHist)
		t.ivHist.Reset()
		t.mu.Unlock()
	}
	s := span.Seconds()
	iv := result.Interval{T: math.Round(at.Seconds()*1000) / 1000, Threads: active, Errors: sum.errors, Retries: sum.retries,
		P95MS: merged.PercentileMS(95), P99MS: merged.PercentileMS(99)}
	if s > 0 {
		iv.TPS = float64(sum.txns) / s
		iv.QPS = float64(sum.q.Read+sum.q.Write+sum.q.Other) / s
	}
	return iv, sum
}

// rates is the read/write/other split per second, which only the progress line shows.
func rates(c counts, span time.Duration) [3]float64 {
	s := span.Seconds()
	if s <= 0 {
		return [3]float64{}
	}
	return [3]float64{float64(c.q.Read) / s, float64(c.q.Write) / s, float64(c.q.Other) / s}
}

// printInterval writes sysbench's interval line, with p99 beside p95 and retries for reconnects.
func printInterval(w io.Writer, iv *result.Interval, rwo [3]float64, span time.Duration) {
	s := max(span.Seconds(), 1e-9)
	fmt.Fprintf(w, "[ %.0fs ] thds: %d tps: %.2f qps: %.2f (r/w/o: %.2f/%.2f/%.2f) lat (ms,95%%/99%%): %.2f/%.2f err/s: %.2f retry/s: %.2f\n",
		iv.T, iv.Threads, iv.TPS, iv.QPS, rwo[0], rwo[1], rwo[2], iv.P95MS, iv.P99MS,
		float64(iv.Errors)/s, float64(iv.Retries)/s)
}

// pollFatal turns the fatal flag into a channel for the reporter's select.
func pollFatal(fatal *atomic.Pointer[FatalError], stop *atomic.Bool) <-chan struct{} {
	ch := make(chan struct{})
	go func() {
		for fatal.Load() == nil && !stop.Load() {
			time.Sleep(20 * time.Millisecond)
		}
		if fatal.Load() != nil {
			close(ch)
		}
	}()
	return ch
}

// schedule sends Poisson arrival times at rate per second. A transaction's latency is measured
// from its arrival, not from when a thread got to it, so a stall shows in the percentiles instead
// of silently lowering the load (coordinated omission).
func schedule(out chan<- time.Time, rate float64, start time.Time, stopped <-chan struct{}, seed uint64) {
	defer close(out)
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	next := start
	for {
		next = next.Add(time.Duration(rng.ExpFloat64() / rate * float64(time.Second)))
		if d := time.Until(next); d > 0 {
			select {
			case <-time.After(d):
			case <-stopped:
				return
			}
		}
		select {
		case out <- next:
		case <-stopped:
			return
		}
	}
}

// cpuTime is this process's user+system CPU, the client's cost of the benchmark.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
