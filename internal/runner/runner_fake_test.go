package runner

import (
	"context"
	"errors"
	"math"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fairbench/fairbench/internal/randgen"
	"github.com/fairbench/fairbench/internal/result"
	"github.com/fairbench/fairbench/internal/sqldb"
	"github.com/fairbench/fairbench/internal/testserver"
	"github.com/fairbench/fairbench/internal/workload"
)

// spin busy-waits d on the calling thread: a statement's service time that, unlike a sleep,
// does not depend on how promptly Go's timers fire.
func spin(d time.Duration) {
	for end := time.Now().Add(d); time.Now().Before(end); {
	}
}

// intervalTxns is what the intervals say the run did: each interval's TPS times its length.
func intervalTxns(ivs []result.Interval) float64 {
	sum, prev := 0.0, 0.0
	for _, iv := range ivs {
		sum += iv.TPS * (iv.T - prev)
		prev = iv.T
	}
	return sum
}

// TestRunnerOnFakeConnection is one table of short cases; it is long only by their number.
func TestRunnerOnFakeConnection(t *testing.T) {
	cases := []struct {
		name  string
		cfg   func() Config
		stmt  func(ctx context.Context, c *fakeConn) error
		hook  func(n int64) error
		check func(t *testing.T, r resultView, err error, db *fakeDB)
	}{
		{name: "closed loop: one client per thread, intervals add up to the totals",
			cfg: func() Config { return config(2, 1200*time.Millisecond) },
			stmt: func(context.Context, *fakeConn) error {
				spin(50 * time.Microsecond)
				return nil
			},
			check: func(t *testing.T, r resultView, err error, db *fakeDB) {
				if err != nil || !r.Complete || r.Transactions < 1000 || r.Threads != 2 || db.opened.Load() != 2 {
					t.Fatalf("err=%v complete=%v txns=%d threads=%d conns=%d", err, r.Complete, r.Transactions, r.Threads, db.opened.Load())
				}
				if r.DurationS < 1.2 || r.DurationS > 1.3 {
					t.Errorf("measured %.3f s, want 1.2 s", r.DurationS)
				}
				if q := r.Queries; q.Read != r.Transactions || q.Write != 0 || q.Other != 0 || q.Total != q.Read {
					t.Errorf("queries %+v for %d transactions of one SELECT each: the connection's counts", q, r.Transactions)
				}
				if got := intervalTxns(r.Intervals); math.Abs(got-float64(r.Transactions)) > 0.005*float64(r.Transactions)+2 {
					t.Errorf("intervals add up to %.0f transactions, total says %d", got, r.Transactions)
				}
				if w := r.Measured; w == nil || math.Abs(w.To.Sub(w.From).Seconds()-r.DurationS) > 1e-6 {
					t.Errorf("measured window %+v against %.3f s", w, r.DurationS)
				}
				if r.ScheduleLagMS != nil || r.LagHistogram != "" || r.LatencyMS.P50 < 0.04 {
					t.Errorf("closed loop: lag %+v, p50 %.3f ms", r.ScheduleLagMS, r.LatencyMS.P50)
				}
			}},
		{name: "open loop: a stall shows in the latency counted from the scheduled arrival",
			cfg: func() Config {
				c := config(1, 2*time.Second)
				c.Rate = 200
				return c
			},
			hook: func(n int64) error {
				if n == 50 {
					time.Sleep(500 * time.Millisecond)
				}
				return nil
			},
			check: func(t *testing.T, r resultView, err error, _ *fakeDB) {
				if err != nil || r.Transactions < 300 || r.Transactions > 500 {
					t.Fatalf("err=%v: rate 200/s for 2 s gave %d transactions", err, r.Transactions)
				}
				// About 100 arrivals wait behind the stall, a quarter of the run: p90 sees it,
				// and the first of them waited nearly the whole stall.
				if r.LatencyMS.P90 < 100 || r.LatencyMS.Max < 450 || r.ScheduleLagMS == nil || r.ScheduleLagMS.Max < 400 || r.LagHistogram == "" {
					t.Errorf("p90 %.1f ms, max %.1f ms, lag %+v: the stall was omitted", r.LatencyMS.P90, r.LatencyMS.Max, r.ScheduleLagMS)
				}
			}},
		{name: "ramp: a client per step, saturation named",
			cfg: func() Config {
				c := config(3, 10*time.Second)
				c.Ramp = &Ramp{Add: 1, Every: 400 * time.Millisecond, Max: 3}
				return c
			},
			// Each statement holds a shared lock for its service time: one client saturates it.
			stmt: func() func(context.Context, *fakeConn) error {
				var mu chan struct{} = make(chan struct{}, 1)
				return func(context.Context, *fakeConn) error {
					mu <- struct{}{}
					spin(100 * time.Microsecond)
					<-mu
					return nil
				}
			}(),
			check: func(t *testing.T, r resultView, err error, _ *fakeDB) {
				if err != nil || r.Ramp == nil {
					t.Fatalf("err=%v ramp=%v", err, r.Ramp)
				}
				st := r.Ramp.Steps
				if len(st) < 2 || st[0].Threads != 1 || st[1].Threads != 2 || st[0].TPS <= 0 {
					t.Fatalf("steps %+v", st)
				}
				if r.Ramp.SaturationThreads == 0 || r.DurationS > 2 || r.Intervals[0].Threads != 1 {
					t.Errorf("saturation at %d threads after %.1f s, first interval %d threads", r.Ramp.SaturationThreads, r.DurationS, r.Intervals[0].Threads)
				}
			}},
		{name: "retries: deadlocks are retried and counted",
			cfg:  func() Config { return config(1, 300*time.Millisecond) },
			hook: func(n int64) error { return map[bool]error{true: deadlock, false: nil}[n%3 != 0] },
			check: func(t *testing.T, r resultView, err error, _ *fakeDB) {
				if err != nil || r.Transactions == 0 || r.Errors != 0 || r.Retries != 2*r.Transactions {
					t.Fatalf("err=%v txns=%d errors=%d retries=%d: want 2 retries per transaction", err, r.Transactions, r.Errors, r.Retries)
				}
				// Every attempt's SELECT reached the server, and so did the ROLLBACK after each
				// failed one: both are counted.
				if q := r.Queries; q.Read != 3*r.Transactions || q.Other != 2*r.Transactions {
					t.Errorf("queries %+v: want 3 reads and 2 rollbacks per transaction", q)
				}
			}},
		{name: "errors: exhausted tries count, the run goes on",
			cfg:  func() Config { return config(2, 300*time.Millisecond) },
			hook: func(int64) error { return deadlock },
			check: func(t *testing.T, r resultView, err error, _ *fakeDB) {
				if err != nil || !r.Complete || r.Errors == 0 || r.Transactions != 0 || r.Retries != 2*r.Errors {
					t.Fatalf("err=%v complete=%v errors=%d retries=%d txns=%d", err, r.Complete, r.Errors, r.Retries, r.Transactions)
				}
			}},
		{name: "errors: a non-retryable one stops the run at once and keeps what was measured",
			cfg: func() Config { return config(2, 5*time.Second) },
			hook: func(n int64) error {
				if n == 500 {
					return errors.New("disk full (test)")
				}
				return nil
			},
			check: func(t *testing.T, r resultView, err error, db *fakeDB) {
				var fe *FatalError
				if !errors.As(err, &fe) || r.Complete || r.Transactions == 0 || r.DurationS > 0.5 {
					t.Fatalf("err=%v complete=%v txns=%d dur=%.2f", err, r.Complete, r.Transactions, r.DurationS)
				}
				if db.closed.Load() != db.opened.Load() {
					t.Errorf("%d of %d connections closed", db.closed.Load(), db.opened.Load())
				}
			}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			db := &fakeDB{stmt: c.stmt}
			res, err := Run(context.Background(), c.cfg(), db.connect, &probe{hook: c.hook})
			if res == nil {
				t.Fatalf("no result: %v", err)
			}
			c.check(t, resultView{res}, err, db)
		})
	}
}

// A reporter starved of CPU by many busy clients must still give intervals whose rates, weighted
// by their real lengths, add up to the run's: a stale tick time once turned 719 TPS into
// intervals of 4,266 and 3,106.
func TestIntervalsUnderAStarvedReporter(t *testing.T) {
	db := &fakeDB{} // statements return at once: 64 threads spin on 2 cores
	cfg := config(64, 2*time.Second)
	cfg.ReportInterval = 100 * time.Millisecond
	res, err := Run(context.Background(), cfg, db.connect, &probe{})
	if err != nil {
		t.Fatal(err)
	}
	got := intervalTxns(res.Intervals)
	if math.Abs(got-float64(res.Transactions)) > 0.002*float64(res.Transactions)+5 {
		t.Errorf("intervals add up to %.0f transactions, the total is %d", got, res.Transactions)
	}
	last := res.Intervals[len(res.Intervals)-1]
	if math.Abs(last.T-res.DurationS) > 0.001 {
		t.Errorf("the intervals end at %.3f s, the run at %.3f s", last.T, res.DurationS)
	}
	// Time-weighted, the intervals' TPS is the run's TPS.
	if avg := got / last.T; math.Abs(avg-res.TPS) > 0.01*res.TPS {
		t.Errorf("intervals average %.0f TPS, the run %.0f TPS", avg, res.TPS)
	}
	for _, iv := range res.Intervals {
		if iv.TPS > 3*res.TPS {
			t.Errorf("interval at %.3f s shows %.0f TPS against %.0f overall", iv.T, iv.TPS, res.TPS)
		}
	}
}

// A server that stops answering must not hold the run past its time plus the grace: the stuck
// clients are abandoned (their connections closed), and the result says what happened and how
// long it took.
func TestRunEndsWhenTheServerStalls(t *testing.T) {
	t.Parallel() // it waits on timers, not the CPU: the other waiting tests wait beside it
	var n atomic64
	db := &fakeDB{stmt: func(ctx context.Context, c *fakeConn) error {
		if n.add() > 200 {
			return hangUntilClosed(ctx, c)
		}
		return nil
	}}
	began := time.Now()
	res, err := Run(context.Background(), config(4, time.Second), db.connect, &probe{})
	wall := time.Since(began)
	var stall *StallError
	if !errors.As(err, &stall) || stall.Clients != 4 || res.Complete {
		t.Fatalf("err=%v complete=%v", err, res.Complete)
	}
	// One second measured, then the grace's 2 s floor.
	// (Bounds with room for a loaded machine's late timers.)
	if wall > 4*time.Second || res.DurationS < 1 || res.DurationS > 1.5 || stall.Wall < 3*time.Second || stall.Wall > wall {
		t.Errorf("Run took %v, result says %.2f s measured, the stall %v: want 1 s measured and about 3 s in all", wall, res.DurationS, stall.Wall)
	}
	if !strings.Contains(res.Error, "4 clients did not return within the 2.0 s grace") {
		t.Errorf("error %q does not name the stall", res.Error)
	}
	if res.Transactions != 200 {
		t.Errorf("%d transactions, want the 200 that were answered", res.Transactions)
	}
	eventually(t, func() bool { return db.closed.Load() == db.opened.Load() }, "every connection closed")
}

// Ctrl-C ends a run within about a second even when every client is stuck on the server.
func TestInterruptWithAFrozenServer(t *testing.T) {
	t.Parallel() // it waits on timers, not the CPU: the other waiting tests wait beside it
	var n atomic64
	release := make(chan struct{})
	defer close(release)
	db := &fakeDB{stmt: func(ctx context.Context, c *fakeConn) error {
		if n.add() > 100 {
			<-release // frozen: not even closing the connection gets an answer
		}
		return nil
	}}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	began := time.Now()
	res, err := Run(ctx, config(2, time.Minute), db.connect, &probe{})
	if took := time.Since(began); took > 1300*time.Millisecond {
		t.Errorf("Run returned %v after the start, %v after Ctrl-C", took, took-300*time.Millisecond)
	}
	if !errors.Is(err, ErrInterrupted) || res == nil || res.Complete || res.Transactions != 100 {
		t.Fatalf("err=%v res=%+v", err, res)
	}
}

// At a modest rate the pacer starts each transaction at its arrival. Go's timers made the median
// lag about 0.7 ms at any rate, on an idle machine; the precise pacer's is a few microseconds
// there and stayed under 0.3 ms with this 2-core machine's load average at 16. Beyond that no
// pacer can keep time (at 35 the kernel woke threads tens of milliseconds late), so on a machine
// that overloaded the test says so and skips rather than fail on the machine's account.
func TestOpenLoopLagIsSmall(t *testing.T) {
	if load := testserver.LoadAverage(t); load > 8*float64(runtime.NumCPU()) {
		t.Skipf("load average %.0f on %d CPUs: no pacer can keep time here", load, runtime.NumCPU())
	}
	db := &fakeDB{stmt: func(context.Context, *fakeConn) error {
		spin(100 * time.Microsecond)
		return nil
	}}
	cfg := config(4, 2*time.Second)
	cfg.Rate = 400
	res, err := Run(context.Background(), cfg, db.connect, &probe{})
	if err != nil {
		t.Fatal(err)
	}
	if res.ScheduleLagMS == nil || res.ScheduleLagMS.P50 > 0.5 {
		t.Errorf("median schedule lag %+v ms, want it well under Go timers' 0.7 ms", res.ScheduleLagMS)
	}
	if res.Transactions < 600 || res.Transactions > 1000 {
		t.Errorf("%d transactions at 400/s for 2 s", res.Transactions)
	}
	t.Logf("lag %+v, latency %+v", *res.ScheduleLagMS, res.LatencyMS)
}

type atomic64 struct{ v atomic.Int64 }

func (a *atomic64) add() int64 { return a.v.Add(1) }

func eventually(t *testing.T, ok func() bool, what string) {
	t.Helper()
	for end := time.Now().Add(2 * time.Second); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
		if ok() {
			return
		}
	}
	t.Errorf("not %s after 2 s", what)
}

// The client's hot path allocates nothing, closed loop or open: from the start of the
// measurement to its last interval the whole process allocates a few dozen objects (the
// intervals) against tens of thousands of transactions.
func TestHotPathDoesNotAllocate(t *testing.T) {
	for _, rate := range []float64{0, 20000} {
		db := &fakeDB{}
		cfg := config(1, 500*time.Millisecond)
		cfg.Rate = rate
		var first, last runtime.MemStats
		var calls int64
		cfg.Observers = []Observer{Hooks{
			OnMeasureStart: func() {
				runtime.ReadMemStats(&first)
				calls = db.calls.Load()
			},
			OnInterval: func(*result.Interval) { runtime.ReadMemStats(&last) },
		}}
		res, err := Run(context.Background(), cfg, db.connect, &probe{})
		if err != nil || res.Transactions < 5000 {
			t.Fatalf("rate %.0f: err=%v txns=%d", rate, err, res.Transactions)
		}
		// Interval cuts and the runtime allocate a little per interval; one allocation per
		// transaction would be 1.0, so 0.05 tells the two apart even when a loaded machine ran
		// few transactions.
		n := last.Mallocs - first.Mallocs
		if per := float64(n) / float64(db.calls.Load()-calls); per > 0.05 {
			t.Errorf("rate %.0f: %.3f allocations per transaction (%d in all)", rate, per, n)
		}
	}
}

// The end's grace is 10% of the run, at least 2 s (PostgreSQL's 1 s deadlock_timeout plus a
// commit must fit) and at most 5 s.
func TestEndGrace(t *testing.T) {
	for _, c := range []struct{ run, want time.Duration }{
		{time.Second, 2 * time.Second}, {10 * time.Second, 2 * time.Second},
		{30 * time.Second, 3 * time.Second}, {10 * time.Minute, 5 * time.Second},
	} {
		if got := endGrace(c.run); got != c.want {
			t.Errorf("endGrace(%v) = %v, want %v", c.run, got, c.want)
		}
	}
}

// A server draining a queue of lock waits at the end (as PostgreSQL does on hot rows, finding
// each deadlock after its 1 s deadlock_timeout) releases one client every 1.2 s: 3.6 s in all,
// past the 2 s grace, but never 2 s without progress. The run waits for it and is complete; it
// counts none of the transactions that ended after the window.
func TestEndWaitsForAServerThatKeepsAnswering(t *testing.T) {
	t.Parallel() // it waits on timers, not the CPU: the other waiting tests wait beside it
	var windowStart atomic.Int64
	var queued atomic.Int64
	db := &fakeDB{stmt: func(ctx context.Context, c *fakeConn) error {
		start := windowStart.Load()
		if start == 0 || time.Now().UnixNano() < start+int64(900*time.Millisecond) {
			return nil
		}
		// In the queue: the k-th client in it gets its answer 1.2 s after the one before.
		k := queued.Add(1)
		release := time.Unix(0, start).Add(time.Second + time.Duration(k)*1200*time.Millisecond)
		select {
		case <-time.After(time.Until(release)):
			return nil
		case <-c.Done():
			return errors.New("closed")
		}
	}}
	cfg := config(3, time.Second)
	cfg.Observers = []Observer{Hooks{OnMeasureStart: func() { windowStart.Store(time.Now().UnixNano()) }}}
	began := time.Now()
	res, err := Run(context.Background(), cfg, db.connect, &probe{})
	if err != nil || !res.Complete {
		t.Fatalf("err=%v: a server still answering at the end is no stall", err)
	}
	if wall := time.Since(began); wall < 4*time.Second || wall > 7*time.Second {
		t.Errorf("Run took %v, want about 4.6 s: the window, then the queue drained", wall)
	}
	if res.DurationS > 1.3 {
		t.Errorf("measured %.2f s, want the 1 s window only", res.DurationS)
	}
}

// The end's wait gives up once no client has returned for a grace, or after graceLimit graces
// in all, whichever comes first.
func TestWaitForGivesUp(t *testing.T) {
	mk := func(n int) []*client {
		l := make([]*client, n)
		for i := range l {
			l[i] = &client{done: make(chan struct{})}
		}
		return l
	}
	t.Run("nothing returns: one grace", func(t *testing.T) {
		began := time.Now()
		if stuck := waitFor(mk(2), 100*time.Millisecond, 300*time.Millisecond); len(stuck) != 2 {
			t.Fatalf("%d stuck, want 2", len(stuck))
		}
		if w := time.Since(began); w < 100*time.Millisecond || w > 250*time.Millisecond {
			t.Errorf("gave up after %v, want the 100 ms grace", w)
		}
	})
	t.Run("returning every 80 ms: the limit", func(t *testing.T) {
		l := mk(10)
		for i, cl := range l {
			time.AfterFunc(time.Duration(i+1)*80*time.Millisecond, func() { close(cl.done) })
		}
		began := time.Now()
		if stuck := waitFor(l, 100*time.Millisecond, 300*time.Millisecond); len(stuck) < 5 || len(stuck) > 8 {
			t.Fatalf("%d stuck, want those after about 300 ms", len(stuck))
		}
		if w := time.Since(began); w < 300*time.Millisecond || w > 450*time.Millisecond {
			t.Errorf("gave up after %v, want the 300 ms limit", w)
		}
	})
	t.Run("all return", func(t *testing.T) {
		l := mk(3)
		for _, cl := range l {
			close(cl.done)
		}
		if stuck := waitFor(l, time.Second, time.Second); len(stuck) != 0 {
			t.Fatalf("%d stuck", len(stuck))
		}
	})
}

// timedProbe times two statements per transaction, as a workload file's worker does: the first
// spins 200 µs, the second fails every fourth time (and is retried).
type timedProbe struct{ probe }

func (p *timedProbe) Traits() workload.Traits {
	return workload.Traits{StatementLabels: []string{"t #1: SELECT 1", "t #2: UPDATE x"}}
}

func (p *timedProbe) NewWorker(context.Context, sqldb.Conn, *randgen.Rand, int, int) (workload.Worker, error) {
	return &timedWorker{p: p}, nil
}

type timedWorker struct {
	p *timedProbe
	n int
}

func (w *timedWorker) Transaction(_ context.Context, q *workload.Txn) error {
	began := time.Now()
	spin(200 * time.Microsecond)
	q.Times.Add(0, time.Since(began), false)
	w.n++
	failed := w.n%4 == 0
	q.Times.Add(1, 0, failed)
	if failed {
		return deadlock
	}
	return nil
}

// Per-statement times: every execution counted, retries and failures included, the spun time
// seen in the first statement's mean, and nothing from the warm-up.
func TestStatementTimes(t *testing.T) {
	db := &fakeDB{}
	cfg := config(2, 400*time.Millisecond)
	cfg.Warmup = 100 * time.Millisecond
	res, err := Run(context.Background(), cfg, db.connect, &timedProbe{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.ClientStatements) != 2 {
		t.Fatalf("client statements = %+v", res.ClientStatements)
	}
	first, second := res.ClientStatements[0], res.ClientStatements[1]
	attempts := res.Transactions + res.Retries + res.Errors
	if first.Label != "t #1: SELECT 1" || first.Executions != attempts || second.Executions != attempts {
		t.Errorf("executions %d, %d; want one per attempt, %d (%+v)", first.Executions, second.Executions, attempts, res.ClientStatements)
	}
	if second.Failed != res.Retries+res.Errors || first.Failed != 0 {
		t.Errorf("failed %d, %d; want 0 and %d", first.Failed, second.Failed, res.Retries+res.Errors)
	}
	if first.MeanMS < 0.2 || first.MaxMS < first.MeanMS || math.Abs(first.TotalMS-first.MeanMS*float64(first.Executions)) > 1e-6*first.TotalMS {
		t.Errorf("first statement: mean %.3f ms, max %.3f, total %.3f", first.MeanMS, first.MaxMS, first.TotalMS)
	}
}
