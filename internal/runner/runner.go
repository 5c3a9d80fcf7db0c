// Package runner drives a workload: it owns the client threads, the clock, the arrival rate,
// retries, interval reports and the counting, so that every workload on every engine is measured
// by the same code.
//
// A run is a few small pieces, as vegeta's pacer, attack and metrics are: a pacer says when each
// transaction is due (pacer.go), the clients run transactions on their connections
// (client.go), each feeds its tally, which the reporter reads per interval (tally.go), the ramp
// decides how many clients run (ramp.go), and the fold turns the tallies into a result (fold.go).
// Run (this file) only puts them in order: connect, warm up, measure, stop, fold.
package runner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"time"

	"github.com/fairbench/fairbench/internal/randgen"
	"github.com/fairbench/fairbench/internal/result"
	"github.com/fairbench/fairbench/internal/runspec"
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
	// Observers are told of the run's moments (MeasureStart, each Interval, MeasureEnd, Acks),
	// in their order: the server's watcher, the machine's load, live metrics, faults.
	Observers []Observer
	// OnStall, when set, is called when clients are still inside a statement after the end's
	// grace, before their connections are closed: the moment to read the server's view of them,
	// whose answer goes with the StallError.
	OnStall func() string
	// Ramp, when set, starts with Ramp.Add clients and adds more each step up to Ramp.Max (which
	// Threads must equal); Duration is then an upper bound.
	Ramp *Ramp
	// StartAt, when set, is the wall-clock instant measurement begins: the shards of a multi-host
	// run (run --shard I/N --start-at) measure the same window. The warm-up lasts from the
	// clients' start until then, whatever Warmup says.
	StartAt time.Time
	// NoReconnect makes a lost connection fail the run instead of being reopened (reconnect.go).
	NoReconnect bool
}

// Connector opens one connection to the server under test.
type Connector func(ctx context.Context) (sqldb.Conn, error)

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

// StallError says that clients were still inside a statement when the run's grace after its end
// ran out: the server stalled, and the run ended without them.
type StallError struct {
	Clients int
	Grace   time.Duration
	Wall    time.Duration // from the measurement's start to giving up on them
	// Evidence is the server's view of the clients' sessions when they were given up
	// (Config.OnStall), "" when there is none.
	Evidence string
}

func (e *StallError) Error() string {
	s := fmt.Sprintf("%d clients did not return within the %.1f s grace after the end (the server stalled): their connections were closed after %.1f s of wall time",
		e.Clients, e.Grace.Seconds(), e.Wall.Seconds())
	if e.Evidence != "" {
		s += "; " + e.Evidence
	}
	return s
}

// ServerGoneError says that clients lost their connection and could not open another before
// the run stopped: the server went away (killed, crashed, its disk full) and did not come back.
// A run that reconnected in time is complete, its outage recorded in availability; one whose
// server was still gone at the end measured part of a run only, so it is incomplete.
type ServerGoneError struct {
	Clients int
	Since   float64 // seconds into the measured window the last outage began, -1 if unknown
}

func (e *ServerGoneError) Error() string {
	since := ""
	if e.Since >= 0 {
		since = fmt.Sprintf(" (nothing committed from %.1f s on)", e.Since)
	}
	return fmt.Sprintf("%d clients lost their connection and could not reconnect before the run ended: the server went away and did not come back%s", e.Clients, since)
}

// ErrInterrupted is the reason of a run stopped by its context (Ctrl-C).
var ErrInterrupted = errors.New("interrupted")

// check validates cfg and fills in the defaults Run relies on.
func (cfg *Config) check() error {
	if cfg.Threads < 1 {
		return fmt.Errorf("--threads must be at least 1")
	}
	if cfg.Rate < 0 || math.IsNaN(cfg.Rate) || math.IsInf(cfg.Rate, 0) {
		return fmt.Errorf("--rate must be a number of transactions per second, 0 or more")
	}
	if r := cfg.Ramp; r != nil && (r.Add < 1 || r.Every <= 0 || r.Max != cfg.Threads) {
		return fmt.Errorf("ramp needs add >= 1, every > 0 and max = threads")
	}
	cfg.MaxTries = max(cfg.MaxTries, 1)
	if cfg.ReportInterval <= 0 {
		cfg.ReportInterval = runspec.DefaultReportInterval
	}
	if cfg.Seed == 0 {
		cfg.Seed = uint64(time.Now().UnixNano())
	}
	return nil
}

// forFixedList adapts cfg to a workload whose clients each run a fixed list (workload.FixedList):
// measured from the clients' start to the end of the lists, without reconnecting (a new worker
// would start its list again). The list is the test's length, so a duration does not cut it
// short (a suite's default duration would end a TPC-H power test at SF 1 half-way); each query's
// own timeout bounds it. A rate, a ramp, a shared start instant or a warm-up has no meaning for
// it: refused, not dropped, so that no setting the user gave is ignored without a word.
func (cfg *Config) forFixedList() error {
	for _, c := range []struct {
		set    bool
		option string
		s      FixedListSetting
	}{
		{cfg.Rate > 0, "--rate", FixedRate},
		{cfg.Ramp != nil, "the ramp", FixedRamp},
		{!cfg.StartAt.IsZero(), "--start-at", FixedStartAt},
		{cfg.Warmup > 0, "--warmup", FixedWarmup},
	} {
		if c.set {
			return fmt.Errorf("%s: this workload %s: drop %s", c.option, FixedListConflict(c.s), c.option)
		}
	}
	cfg.NoReconnect = true
	cfg.Duration = fixedListLimit
	return nil
}

// FixedListSetting names a setting that a workload whose clients each run a fixed list cannot take.
type FixedListSetting int

const (
	FixedRate    FixedListSetting = iota // an arrival rate (run --rate, capacity)
	FixedRamp                            // a ramp of clients
	FixedStartAt                         // shards' shared start instant
	FixedWarmup                          // a warm-up time
	FixedSplit                           // clients split over client hosts, their records merged
)

// FixedListConflict is why a fixed list cannot take s, as the rest of a sentence whose subject
// is the workload: the one wording that the runner, run and compare give.
func FixedListConflict(s FixedListSetting) string {
	const list = "runs a fixed list of queries on each client"
	switch s {
	case FixedRate:
		return list + ", which no arrival rate paces"
	case FixedRamp:
		return list + " and cannot ramp its clients"
	case FixedStartAt:
		return list + ", which shards cannot split"
	case FixedWarmup:
		// A caller that gives every workload a default warm-up leaves it out for a fixed list.
		return list + ", timed from the first, so a warm-up time has nothing to run (such a workload warms with " +
			"an untimed pass of its own where it has one: TPC-H's warm option)"
	case FixedSplit:
		return list + ", whose records client hosts cannot merge"
	}
	panic(fmt.Sprintf("runner: FixedListConflict(%d)", int(s)))
}

// IsFixedList says whether wl's clients each run a fixed list (workload.FixedList).
func IsFixedList(wl workload.Workload) bool {
	_, fixed := wl.(workload.FixedList)
	return fixed
}

// fixedListLimit is a fixed list's window as the clock sees it: the list ends it, and each
// query's own timeout bounds it long before this.
const fixedListLimit = 1000 * time.Hour

// Run connects the threads, runs the workload for the warm-up and the measured duration, and
// returns the measurements. When ctx is cancelled (Ctrl-C) or a thread fails for good, it stops
// early and returns what it measured with Complete=false and the error. It ends at the warm-up
// plus the duration plus a bounded grace whatever the server does: clients still stuck in a
// statement then are abandoned, and the result says so.
func Run(ctx context.Context, cfg Config, connect Connector, wl workload.Workload) (*result.Result, error) {
	if err := cfg.check(); err != nil {
		return nil, err
	}
	sh := shapeOf(wl)
	if sh.finite {
		if err := cfg.forFixedList(); err != nil {
			return nil, err
		}
	}
	cs, err := connectClients(ctx, &cfg, connect, wl, sh)
	if err != nil {
		return nil, err
	}
	defer closeConns(cs.list, cs.pool)
	start := time.Now()
	if !cfg.StartAt.IsZero() {
		if !cfg.StartAt.After(start) {
			return nil, fmt.Errorf("--start-at %s had passed when the clients were connected (%s late): give a later time", cfg.StartAt.UTC().Format(time.RFC3339Nano), start.Sub(cfg.StartAt).Round(time.Millisecond))
		}
		cfg.Warmup = cfg.StartAt.Sub(start)
	}
	cs.pace = newPacer(&cfg, start, &cs.stop)
	m := &measurement{cfg: &cfg, cs: cs, active: cfg.Threads, kinds: sh.kinds, finite: sh.finite}
	if cfg.Ramp != nil {
		m.ramp = newRampState(*cfg.Ramp, start)
		m.active = m.ramp.level
		holdAtGates(cs.list, m.active)
	}
	if cfg.Warmup <= 0 {
		m.begin()
	}
	cs.start()
	res := &result.Result{Threads: cfg.Threads, Rate: cfg.Rate, WarmupS: cfg.Warmup.Seconds(), Complete: true}
	stopReason := m.run(ctx, start.Add(cfg.Warmup))
	if m.started {
		observers(cfg.Observers).measureEnd()
	}
	if err := m.finish(res, sh); err != nil {
		return res, err
	}
	if cs.reconn != nil {
		observers(cfg.Observers).acks(cs.reconn.acks(cs.workers()))
	}
	if f := cs.fatal.Load(); f != nil {
		stopReason = f
	}
	if m.stall != nil {
		stopReason = joinReasons(stopReason, m.stall)
	}
	if n := cs.gaveUp.Load(); n > 0 {
		stopReason = joinReasons(stopReason, &ServerGoneError{Clients: int(n), Since: lastOutageStart(res)})
	}
	if stopReason != nil {
		res.Complete = false
		res.Error = stopReason.Error()
		return res, stopReason
	}
	return res, nil
}

// lastOutageStart is when the outage that lasted to the end of the window began, or -1.
func lastOutageStart(res *result.Result) float64 {
	if a := res.Availability; a != nil && len(a.Outages) > 0 {
		if o := a.Outages[len(a.Outages)-1]; o.ToS >= res.DurationS-0.01 {
			return o.FromS
		}
	}
	return -1
}

// joinReasons keeps both reasons for errors.As and one line for the result.
func joinReasons(a, b error) error {
	if a == nil {
		return b
	}
	return fmt.Errorf("%w; %w", a, b)
}
