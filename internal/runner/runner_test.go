package runner

import (
	"context"
	"errors"
	"math"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/fairbench/fairbench/internal/engine"
	"github.com/fairbench/fairbench/internal/engine/profile"
	"github.com/fairbench/fairbench/internal/randgen"
	"github.com/fairbench/fairbench/internal/result"
	"github.com/fairbench/fairbench/internal/sqldb"
	"github.com/fairbench/fairbench/internal/testserver"
	"github.com/fairbench/fairbench/internal/workload"
)

type resultView struct{ *result.Result }

func TestMain(m *testing.M) { testserver.Main(m) }

// probe is a workload written for these tests: each transaction runs SELECT 1 on the real server,
// and the hook can make it fail, stall or succeed, to exercise the runner's own logic.
type probe struct {
	hook func(n int64) error
	n    atomic.Int64
}

func (p *probe) Prepare(context.Context, *workload.Env) error { return nil }
func (p *probe) Cleanup(context.Context, *workload.Env) error { return nil }
func (p *probe) Check(context.Context, *workload.Env) error   { return nil }
func (p *probe) Traits() workload.Traits                      { return workload.Traits{} }
func (p *probe) NewWorker(ctx context.Context, c sqldb.Conn, _ *randgen.Rand, _, _ int) (workload.Worker, error) {
	st, err := c.Prepare(ctx, "SELECT 1")
	return &probeWorker{p: p, st: st}, err
}

type probeWorker struct {
	p  *probe
	st sqldb.Stmt
}

func (w *probeWorker) Transaction(ctx context.Context, q *workload.Txn) error {
	if _, err := w.st.Query(ctx); err != nil {
		return err
	}
	if w.p.hook != nil {
		return w.p.hook(w.p.n.Add(1))
	}
	return nil
}

// typedProbe has two transaction kinds: odd transactions are "b", and every 10th rolls back on purpose.
type typedProbe struct{ probe }

func (p *typedProbe) Traits() workload.Traits {
	return workload.Traits{TransactionKinds: []string{"a", "b"}}
}
func (p *typedProbe) NewWorker(ctx context.Context, c sqldb.Conn, r *randgen.Rand, i, n int) (workload.Worker, error) {
	w, err := p.probe.NewWorker(ctx, c, r, i, n)
	return &typedWorker{probeWorker: w.(*probeWorker)}, err
}

type typedWorker struct {
	*probeWorker
	n int64
}

func (w *typedWorker) Transaction(ctx context.Context, q *workload.Txn) error {
	w.n++
	n := w.n
	q.Kind = int(n % 2)
	if err := w.probeWorker.Transaction(ctx, q); err != nil {
		return err
	}
	if n%10 == 0 {
		return workload.ErrRolledBack
	}
	return nil
}

func TestTransactionKinds(t *testing.T) {
	res, err := Run(context.Background(), config(1, 500*time.Millisecond), connector(t), &typedProbe{})
	if err != nil {
		t.Fatal(err)
	}
	a, b := res.ByKind["a"], res.ByKind["b"]
	if a == nil || b == nil || a.Transactions+b.Transactions != res.Transactions || a.LatencyMS.P50 <= 0 {
		t.Fatalf("by kind %+v %+v, total %d", a, b, res.Transactions)
	}
	// Every 10th transaction is even, so kind "a" holds all the rollbacks.
	if res.Rollbacks == 0 || a.Rollbacks != res.Rollbacks || b.Rollbacks != 0 || res.Errors != 0 {
		t.Fatalf("rollbacks %d (a %d, b %d), errors %d", res.Rollbacks, a.Rollbacks, b.Rollbacks, res.Errors)
	}
}

func connector(t *testing.T) Connector {
	tg := testserver.Database(t, "postgres")
	return func(ctx context.Context) (sqldb.Conn, error) { return sqldb.Open(ctx, tg) }
}

func config(threads int, d time.Duration) Config {
	rc := randgen.DefaultConfig("uniform")
	_ = rc.Init()
	return Config{Threads: threads, Duration: d, MaxTries: 3, Rand: &rc, ReportInterval: 200 * time.Millisecond}
}

var deadlock = &pgconn.PgError{Code: "40P01", Message: "deadlock detected (test)"}

// TestRunner runs the runner against a real PostgreSQL; it is one table of short cases, long
// only by their number.
func TestRunner(t *testing.T) {
	connect := connector(t)
	cases := []struct {
		name  string
		cfg   func() Config
		hook  func(n int64) error
		ctx   func() (context.Context, context.CancelFunc)
		check func(t *testing.T, r resultView, err error)
	}{
		{name: "closed loop: intervals add up to the totals",
			cfg: func() Config { return config(2, 800*time.Millisecond) },
			check: func(t *testing.T, r resultView, err error) {
				if err != nil || !r.Complete || r.Transactions == 0 {
					t.Fatalf("err=%v complete=%v txns=%d", err, r.Complete, r.Transactions)
				}
				if r.Queries.Read != r.Transactions || r.QPS != r.TPS {
					t.Errorf("one read per transaction: reads %d txns %d", r.Queries.Read, r.Transactions)
				}
				if math.Abs(r.DurationS-0.8) > 0.1 {
					t.Errorf("measured %.3fs, want 0.8s", r.DurationS)
				}
				sum := 0.0
				prev := 0.0
				for _, iv := range r.Intervals {
					sum += iv.TPS * (iv.T - prev)
					prev = iv.T
				}
				if math.Abs(sum-float64(r.Transactions)) > 0.02*float64(r.Transactions)+2 {
					t.Errorf("intervals add up to %.0f transactions, total says %d", sum, r.Transactions)
				}
			}},
		{name: "deadlocks are retried and counted",
			cfg: func() Config { return config(1, 300*time.Millisecond) },
			// Every transaction fails twice, then succeeds on its third try.
			hook: func(n int64) error {
				if n%3 != 0 {
					return deadlock
				}
				return nil
			},
			check: func(t *testing.T, r resultView, err error) {
				if err != nil || r.Errors != 0 || r.Retries != 2*r.Transactions {
					t.Fatalf("err=%v errors=%d retries=%d txns=%d: want 2 retries per transaction", err, r.Errors, r.Retries, r.Transactions)
				}
			}},
		{name: "exhausted tries count as errors and the run goes on",
			cfg:  func() Config { return config(1, 300*time.Millisecond) },
			hook: func(int64) error { return deadlock },
			check: func(t *testing.T, r resultView, err error) {
				if err != nil || !r.Complete || r.Errors == 0 || r.Transactions != 0 || r.Retries != 2*r.Errors {
					t.Fatalf("err=%v complete=%v errors=%d retries=%d txns=%d", err, r.Complete, r.Errors, r.Retries, r.Transactions)
				}
			}},
		{name: "a non-retryable error stops the run and keeps what was measured",
			cfg: func() Config { return config(2, 5*time.Second) },
			hook: func(n int64) error {
				if n == 50 {
					return errors.New("disk full (test)")
				}
				return nil
			},
			check: func(t *testing.T, r resultView, err error) {
				var fe *FatalError
				if !errors.As(err, &fe) || r.Complete || r.Error == "" || r.Transactions == 0 || r.DurationS > 4 {
					t.Fatalf("err=%v complete=%v error=%q txns=%d dur=%.1f", err, r.Complete, r.Error, r.Transactions, r.DurationS)
				}
			}},
		{name: "interrupt writes a partial result",
			cfg: func() Config { return config(2, 10*time.Second) },
			ctx: func() (context.Context, context.CancelFunc) {
				return context.WithTimeout(context.Background(), 400*time.Millisecond)
			},
			check: func(t *testing.T, r resultView, err error) {
				if err == nil || r.Complete || r.Transactions == 0 || r.DurationS > 2 {
					t.Fatalf("err=%v complete=%v txns=%d dur=%.1f", err, r.Complete, r.Transactions, r.DurationS)
				}
			}},
		{name: "warm-up is run but not counted",
			cfg: func() Config {
				c := config(1, 300*time.Millisecond)
				c.Warmup = 300 * time.Millisecond
				return c
			},
			check: func(t *testing.T, r resultView, err error) {
				if err != nil || math.Abs(r.DurationS-0.3) > 0.08 || r.WarmupS != 0.3 {
					t.Fatalf("err=%v measured %.3fs warmup %.2f", err, r.DurationS, r.WarmupS)
				}
			}},
		{name: "open loop: a stall shows in the latency of the transactions queued behind it",
			cfg: func() Config {
				c := config(1, 2*time.Second)
				c.Rate = 100
				return c
			},
			hook: func(n int64) error {
				if n == 20 {
					time.Sleep(500 * time.Millisecond)
				}
				return nil
			},
			check: func(t *testing.T, r resultView, err error) {
				if err != nil {
					t.Fatal(err)
				}
				if r.Transactions < 140 || r.Transactions > 260 {
					t.Errorf("rate 100/s for 2s gave %d transactions", r.Transactions)
				}
				// About 50 arrivals wait behind the stall: more than 1% of 200, so p99 sees it.
				if r.LatencyMS.P99 < 200 || r.ScheduleLagMS == nil || r.ScheduleLagMS.Max < 300 {
					t.Errorf("p99 %.1f ms, lag %+v: the stall was omitted", r.LatencyMS.P99, r.ScheduleLagMS)
				}
			}},
		{name: "ramp adds a client per step and names the saturation point",
			cfg: func() Config {
				c := config(3, 10*time.Second)
				c.Ramp = &Ramp{Add: 1, Every: 400 * time.Millisecond, Max: 3}
				return c
			},
			check: func(t *testing.T, r resultView, err error) {
				if err != nil || r.Ramp == nil {
					t.Fatalf("err=%v ramp=%v", err, r.Ramp)
				}
				st := r.Ramp.Steps
				if len(st) < 2 || st[0].Threads != 1 || st[1].Threads != 2 || st[0].TPS <= 0 {
					t.Fatalf("steps %+v", st)
				}
				if r.Ramp.StoppedBecause != "max threads" && r.Ramp.StoppedBecause != "throughput stopped rising" {
					t.Errorf("stopped because %q", r.Ramp.StoppedBecause)
				}
				if r.Ramp.SaturationThreads == 0 || r.Ramp.SaturationTPS <= 0 || r.DurationS > 3 {
					t.Errorf("saturation %d threads %.0f TPS after %.1fs", r.Ramp.SaturationThreads, r.Ramp.SaturationTPS, r.DurationS)
				}
				if r.Intervals[0].Threads != 1 || r.Intervals[len(r.Intervals)-1].Threads < 2 {
					t.Errorf("intervals do not show the clients being added: first %d, last %d", r.Intervals[0].Threads, r.Intervals[len(r.Intervals)-1].Threads)
				}
			}},
		{name: "ramp stops at the SLO",
			cfg: func() Config {
				c := config(4, 10*time.Second)
				c.Ramp = &Ramp{Add: 2, Every: 300 * time.Millisecond, Max: 4, SLO: time.Microsecond}
				return c
			},
			check: func(t *testing.T, r resultView, err error) {
				if err != nil || r.Ramp == nil || r.Ramp.StoppedBecause != "p99 above SLO" || len(r.Ramp.Steps) != 1 || r.Ramp.SaturationThreads != 2 {
					t.Fatalf("err=%v ramp=%+v", err, r.Ramp)
				}
			}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := context.Background(), context.CancelFunc(func() {})
			if c.ctx != nil {
				ctx, cancel = c.ctx()
			}
			defer cancel()
			res, err := Run(ctx, c.cfg(), connect, &probe{hook: c.hook})
			if res == nil {
				t.Fatalf("no result: %v", err)
			}
			c.check(t, resultView{res}, err)
		})
	}
}

// policyProbe records the scheduling policy of the OS thread each transaction runs on.
type policyProbe struct {
	probe
	mu       sync.Mutex
	policies map[int]bool // sched_getscheduler(2) values seen
}

func (p *policyProbe) NewWorker(ctx context.Context, c sqldb.Conn, r *randgen.Rand, i, n int) (workload.Worker, error) {
	w, err := p.probe.NewWorker(ctx, c, r, i, n)
	return &policyWorker{probeWorker: w.(*probeWorker), p: p}, err
}

type policyWorker struct {
	*probeWorker
	p *policyProbe
}

func (w *policyWorker) Transaction(ctx context.Context, q *workload.Txn) error {
	pol, _, _ := syscall.RawSyscall(syscall.SYS_SCHED_GETSCHEDULER, 0, 0, 0)
	w.p.mu.Lock()
	w.p.policies[int(pol)] = true
	w.p.mu.Unlock()
	return w.probeWorker.Transaction(ctx, q)
}

func TestClientScheduling(t *testing.T) {
	const sysOther, sysBatch = 0, 3
	for _, tc := range []struct {
		env        string
		wantResult string
		wantPolicy int
	}{
		{"", SchedBatch, sysBatch},
		{"normal", SchedNormal, sysOther},
	} {
		t.Run(tc.wantResult, func(t *testing.T) {
			t.Setenv("FAIRBENCH_CLIENT_SCHED", tc.env)
			p := &policyProbe{policies: map[int]bool{}}
			res, err := Run(context.Background(), config(2, 300*time.Millisecond), connector(t), p)
			if err != nil {
				t.Fatal(err)
			}
			if res.ClientScheduling != tc.wantResult {
				t.Errorf("result says %q, want %q", res.ClientScheduling, tc.wantResult)
			}
			if len(p.policies) != 1 || !p.policies[tc.wantPolicy] {
				t.Errorf("transactions ran under policies %v, want only %d", p.policies, tc.wantPolicy)
			}
		})
	}
	// The batch threads end with their goroutines: this goroutine's thread is untouched.
	if pol, _, _ := syscall.RawSyscall(syscall.SYS_SCHED_GETSCHEDULER, 0, 0, 0); pol != sysOther {
		t.Errorf("the test's own thread runs under policy %d", pol)
	}
}

// pausingProbe waits 20 ms on purpose before each statement, as TPC-C's terminals think.
type pausingProbe struct{ probe }

func (p *pausingProbe) NewWorker(ctx context.Context, c sqldb.Conn, r *randgen.Rand, i, n int) (workload.Worker, error) {
	w, err := p.probe.NewWorker(ctx, c, r, i, n)
	return &pausingWorker{w.(*probeWorker)}, err
}

type pausingWorker struct{ *probeWorker }

func (w *pausingWorker) Transaction(ctx context.Context, q *workload.Txn) error {
	// The pause as it really was: a loaded machine wakes a sleeper late, and that lateness is
	// the pause's, not the transaction's.
	began := time.Now()
	time.Sleep(20 * time.Millisecond)
	q.Paused += time.Since(began)
	return w.probeWorker.Transaction(ctx, q)
}

func TestPausedTimeIsNotLatency(t *testing.T) {
	res, err := Run(context.Background(), config(1, 500*time.Millisecond), connector(t), &pausingProbe{})
	if err != nil {
		t.Fatal(err)
	}
	// About 20 transactions of one SELECT 1 each: well under a millisecond without the pauses.
	if res.Transactions < 10 || res.Transactions > 26 {
		t.Errorf("%d transactions in 0.5 s with 20 ms pauses", res.Transactions)
	}
	// Counted, every 20 ms pause would put the average above 20 ms; a loaded machine can hold
	// one SELECT 1 past 20 ms, so the maximum proves nothing.
	if res.LatencyMS.Avg >= 10 || res.LatencyMS.Avg <= 0 {
		t.Errorf("latency avg %.3f ms, max %.3f ms: the 20 ms pauses are counted in it", res.LatencyMS.Avg, res.LatencyMS.Max)
	}
}

// A real PostgreSQL frozen with SIGSTOP mid-run (the kernel still takes the bytes, nothing
// answers): the run ends at its time plus the grace with the stall named, and Ctrl-C ends a run
// on a frozen server within about a second.
func TestFrozenServer(t *testing.T) {
	tg := testserver.Database(t, "postgres")
	srv := testserver.Server(t, "postgres")
	connect := func(ctx context.Context) (sqldb.Conn, error) { return sqldb.Open(ctx, tg) }
	for _, tc := range []struct {
		name string
		// interrupt, when set, is how long after the freeze Ctrl-C comes; maxWall is then counted
		// from it, else from the run's start. (Counting from the start would let a loaded machine's
		// slow connecting eat the second.)
		interrupt time.Duration
		maxWall   time.Duration
		want      func(err error) bool
	}{
		{"the run ends at its time plus the grace", 0, 4500 * time.Millisecond,
			func(err error) bool { var s *StallError; return errors.As(err, &s) && s.Clients == 2 }},
		{"Ctrl-C ends it within a second", 200 * time.Millisecond, 1500 * time.Millisecond,
			func(err error) bool { return errors.Is(err, ErrInterrupted) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			// The server's processes are listed once the run's backends exist, by the hook.
			var mu sync.Mutex
			var frozen []int
			from := time.Now()
			thaw := func() {
				mu.Lock()
				defer mu.Unlock()
				signalAll(t, frozen, syscall.SIGCONT)
				frozen = nil // thawed once: its backends may exit as soon as they run again
			}
			defer thaw()
			hook := func(n int64) error {
				if n == 100 {
					mu.Lock()
					frozen = srv.PIDs()
					signalAll(t, frozen, syscall.SIGSTOP)
					if tc.interrupt > 0 {
						time.AfterFunc(tc.interrupt, func() {
							mu.Lock()
							from = time.Now()
							mu.Unlock()
							cancel()
						})
					}
					mu.Unlock()
				}
				return nil
			}
			res, err := Run(ctx, config(2, time.Second), connect, &probe{hook: hook})
			mu.Lock()
			wall := time.Since(from)
			mu.Unlock()
			thaw()
			if !tc.want(err) || res == nil || res.Complete {
				t.Fatalf("err=%v res=%v", err, res)
			}
			if wall > tc.maxWall {
				t.Errorf("Run returned %v after the run or Ctrl-C began on a frozen server, want at most %v", wall, tc.maxWall)
			}
		})
	}
}

// signalAll sends sig to every process of a server (SIGSTOP freezes it, SIGCONT resumes it).
func signalAll(t *testing.T, pids []int, sig syscall.Signal) {
	for _, pid := range pids {
		// A process gone by the time it is resumed (a backend whose client left) needs no SIGCONT.
		if err := syscall.Kill(pid, sig); err != nil && !(sig == syscall.SIGCONT && err == syscall.ESRCH) {
			t.Errorf("signal %v to %d: %v", sig, pid, err)
		}
	}
}

// A real PostgreSQL of the test's own, SIGKILLed mid-run and never restarted: the clients try to
// reconnect until the end, and the run ends at its time, incomplete, with the server named gone
// (a single server that is killed does not come back, so the 2 s of work is not a 2 s run).
func TestKilledServerMakesTheRunIncomplete(t *testing.T) {
	inst := testserver.Installation(t, "postgres")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	prof := profile.Default()
	prof.BufferPoolBytes, prof.RedoBytes, prof.MaxConnections = 64<<20, 64<<20, 20
	srv, err := engine.Start(ctx, inst, prof, "")
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Stop()
	tg, err := sqldb.ParseTarget(srv.DSN)
	if err != nil {
		t.Fatal(err)
	}
	connect := func(ctx context.Context) (sqldb.Conn, error) { return sqldb.Open(ctx, tg) }
	var once sync.Once
	hook := func(n int64) error {
		if n >= 2000 {
			once.Do(func() {
				if err := srv.Fault(syscall.SIGKILL); err != nil {
					t.Error(err)
				}
			})
		}
		return nil
	}
	began := time.Now()
	res, err := Run(ctx, config(2, 2*time.Second), connect, &probe{hook: hook})
	wall := time.Since(began)
	var gone *ServerGoneError
	if !errors.As(err, &gone) || res == nil || res.Complete || gone.Clients != 2 {
		t.Fatalf("err=%v res=%v: want an incomplete run whose 2 clients could not reconnect", err, res)
	}
	if wall > 6*time.Second {
		t.Errorf("the run took %v after its server was killed, want its 2 s and the grace", wall)
	}
	t.Logf("%s", res.Error)
}
