// Package job ties one target, one workload and one run configuration together: it is what the
// command line and compare both call to prepare, run, check and clean up, so the two never differ
// in how a run is done or recorded.
package job

import (
	"context"
	"fmt"
	"io"
	"maps"
	"sync"
	"time"

	"github.com/fairbench/fairbench/internal/dialect"
	"github.com/fairbench/fairbench/internal/fault"
	"github.com/fairbench/fairbench/internal/livemetrics"
	"github.com/fairbench/fairbench/internal/randgen"
	"github.com/fairbench/fairbench/internal/result"
	"github.com/fairbench/fairbench/internal/runner"
	"github.com/fairbench/fairbench/internal/runspec"
	"github.com/fairbench/fairbench/internal/sqldb"
	"github.com/fairbench/fairbench/internal/version"
	"github.com/fairbench/fairbench/internal/waits"
	"github.com/fairbench/fairbench/internal/workload"
)

// Job is a workload bound to a target.
type Job struct {
	Target   sqldb.Target
	Spec     workload.Spec
	Options  workload.Options
	Workload workload.Workload
	Rand     randgen.Config
	Seed     uint64
	// PIDs lists the server's processes when fairbench started the server (compare), else nil.
	PIDs func() []int
	// Set holds the options given explicitly (flags, a suite's step): a data option among them
	// must agree with what prepare recorded; data options not given come from the record.
	Set map[string]string
	// CheckAfterRun runs the data check after every run (--check); workloads that ask for it
	// (workload.Traits.CheckAfterRun) get it regardless.
	CheckAfterRun bool
	// Faults are injected into Cluster during each run, at their offsets from the measured
	// window's start (fault.Schedule); the result records them.
	Faults  []runspec.Fault
	Cluster fault.Cluster
	// NoFlush skips flushing the server's dirty pages before each measured step (see Settle).
	NoFlush bool
	// Live, when set, receives every measured interval (--metrics-addr).
	Live *livemetrics.Exporter
	// ReadTarget, when set, is where the measured clients connect instead of Target (a cluster's
	// replicas, compare --read-replicas); guard, settle, checks and acknowledged ids stay on Target.
	ReadTarget *sqldb.Target
	// OnSettled, when set, is called after the flush and before the workload starts: a server
	// monitor started earlier takes its baseline there, so the flush's writes are not counted
	// as the run's.
	OnSettled func()
	// WaitEvery is how often the clients' sessions are sampled on the server over the measured
	// window (internal/waits); 0 turns sampling off (--instrument off).
	WaitEvery time.Duration
	// clients are the measured clients' sessions while a step with wait sampling runs.
	clients *waits.Clients
}

// New validates everything that can be validated without a server, so bad input fails before
// anything is touched.
func New(target sqldb.Target, workloadName string, set map[string]string, rnd randgen.Config, seed uint64) (*Job, error) {
	spec, err := workload.Lookup(workloadName)
	if err != nil {
		return nil, err
	}
	known := map[string]bool{}
	for _, o := range spec.Options {
		known[o.Name] = true
	}
	for name := range set {
		if !known[name] {
			return nil, fmt.Errorf("workload %s has no option --%s: see 'fairbench workloads' for its options", workloadName, name)
		}
	}
	opts := spec.WithDefaults(set)
	if err := spec.CheckLimits(opts); err != nil {
		return nil, err
	}
	wl, err := spec.New(opts)
	if err != nil {
		return nil, err
	}
	if err := rnd.Init(); err != nil {
		return nil, err
	}
	return &Job{Target: target, Spec: spec, Options: opts, Workload: wl, Rand: rnd, Seed: seed, Set: explicit(set),
		WaitEvery: waits.DefaultEvery}, nil
}

func explicit(set map[string]string) map[string]string {
	out := map[string]string{}
	maps.Copy(out, set)
	return out
}

// Connect opens one connection to the job's target.
func (j *Job) Connect(ctx context.Context) (sqldb.Conn, error) { return sqldb.Open(ctx, j.Target) }

// clientConnect opens a measured client's connection: on ReadTarget when one is set.
func (j *Job) clientConnect(ctx context.Context) (sqldb.Conn, error) {
	if j.ReadTarget != nil {
		return sqldb.Open(ctx, *j.ReadTarget) // replicas' sessions: not where the sampler looks
	}
	c, err := j.Connect(ctx)
	if err == nil && j.clients != nil {
		// One query per connection, made before the client's first transaction; a session the
		// engine will not name is simply not sampled.
		if id, err := dialect.SamplerFor(c.Kind()).SessionID(ctx, c); err == nil {
			j.clients.Add(id)
		}
	}
	return c, err
}

// Env is the environment given to the workload's Prepare, Cleanup and Check.
func (j *Job) Env(loadThreads int, force bool, progress func(done, total int64), log io.Writer) *workload.Env {
	return &workload.Env{Connect: j.Connect, Kind: j.Target.Kind, LoadThreads: loadThreads, Force: force,
		Progress: progress, Log: log, Rand: &j.Rand, Seed: j.Seed}
}

// ServerVersion connects once and asks the server what it is; it is also the first check that the
// target is reachable with the credentials given.
func (j *Job) ServerVersion(ctx context.Context) (version string, err error) {
	err = j.firstAnswer(ctx, func(ctx context.Context, c sqldb.Conn) (err error) {
		version, err = sqldb.ServerVersion(ctx, c)
		return err
	})
	return version, err
}

// firstAnswer connects and asks, bounding the asking as connect_timeout bounds the connect: a
// server that accepts a connection and then never answers (frozen, or a proxy whose backend is
// gone) must end fairbench with a line that says so, not hang it.
func (j *Job) firstAnswer(ctx context.Context, ask func(context.Context, sqldb.Conn) error) error {
	c, err := j.Connect(ctx)
	if err != nil {
		return err
	}
	limit := j.Target.ConnectTimeout
	if limit <= 0 {
		limit = sqldb.DefaultConnectTimeout
	}
	actx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	err = ask(actx, c)
	if actx.Err() != nil && ctx.Err() == nil {
		go c.Close() // aside: closing may wait for an answer that does not come
		return fmt.Errorf("%s accepted the connection but did not answer within %s (connect_timeout): the server is frozen or overloaded; raise connect_timeout= in --target if it is just slow", j.Target.Redacted(), limit)
	}
	c.Close()
	return err
}

// serverFacts is ServerVersion plus the transport (plaintext or TLS) the server says the
// connection uses, which the result records so the parity audit can compare it.
func (j *Job) serverFacts(ctx context.Context) (version, transport string, err error) {
	err = j.firstAnswer(ctx, func(ctx context.Context, c sqldb.Conn) (err error) {
		if version, err = sqldb.ServerVersion(ctx, c); err != nil {
			return err
		}
		transport, err = sqldb.Transport(ctx, c)
		return err
	})
	return version, transport, err
}

// wireTally sums the run's connections' statements and round trips over the measured window.
type wireTally struct {
	mu     sync.Mutex
	conns  []sqldb.Conn
	before sqldb.Counters
}

func (w *wireTally) connector(connect runner.Connector) runner.Connector {
	return func(ctx context.Context) (sqldb.Conn, error) {
		c, err := connect(ctx)
		if err == nil {
			w.mu.Lock()
			w.conns = append(w.conns, c)
			w.mu.Unlock()
		}
		return c, err
	}
}

func (w *wireTally) sum() sqldb.Counters {
	w.mu.Lock()
	defer w.mu.Unlock()
	var total sqldb.Counters
	for _, c := range w.conns {
		if n, ok := sqldb.CountersOf(c); ok {
			total.Statements += n.Statements
			total.RoundTrips += n.RoundTrips
		}
	}
	return total
}

// measureFrom takes the starting reading when the warm-up ends.
func (w *wireTally) measureFrom() { w.before = w.sum() }

func (w *wireTally) result(transactions int64) *result.Wire {
	n := w.sum().Sub(w.before)
	if n.Statements == 0 && n.RoundTrips == 0 {
		return nil
	}
	out := &result.Wire{Statements: n.Statements, RoundTrips: n.RoundTrips}
	if transactions > 0 {
		out.StatementsPerTxn = float64(n.Statements) / float64(transactions)
		out.RoundTripsPerTxn = float64(n.RoundTrips) / float64(transactions)
	}
	return out
}

// Run measures the workload and returns a result with every identifying field filled in. It
// first refuses data that is not a finished data set of fairbench's own with the parameters
// asked for (Guard), and brings the server to the same state before every step (Settle). On
// failure the result holds what was measured, marked incomplete.
func (j *Job) Run(ctx context.Context, cfg runner.Config) (*result.Result, error) {
	started := time.Now().UTC()
	ver, transport, err := j.serverFacts(ctx)
	if err != nil {
		return nil, err
	}
	prepared, state, err := j.Ready(ctx)
	if err != nil {
		return nil, err
	}
	cfg.Rand = &j.Rand
	cfg.Seed = j.Seed
	list, fixed := j.Workload.(workload.FixedList)
	if fixed {
		threads, err := list.Begin(ctx, workload.RunSettings{Env: j.Env(cfg.Threads, false, nil, cfg.Progress),
			Progress: cfg.Progress, PIDs: j.PIDs})
		if err != nil {
			return nil, err
		}
		cfg.Threads = threads
	}
	res, acks, runErr := j.runClients(ctx, cfg, ver)
	if fixed {
		if err := list.End(ctx, res); err != nil && res != nil && runErr == nil {
			runErr = err
			res.Fail(err)
		}
	}
	if res == nil {
		return nil, runErr
	}
	j.describe(res, started, ver, transport)
	res.Prepared, res.StartState = prepared, state
	if err := j.recordAcks(ctx, res, acks, cfg.Progress); runErr == nil {
		runErr = err
	}
	if runErr == nil && ctx.Err() == nil && j.wantsCheck() {
		runErr = j.checkAfterRun(ctx, res, cfg.Progress)
	}
	return res, runErr
}

// runClients runs the workload's clients through the runner with the wire tally, faults and live
// metrics around them; the result is nil only when no client ran.
func (j *Job) runClients(ctx context.Context, cfg runner.Config, ver string) (*result.Result, []*workload.Acks, error) {
	var tally wireTally
	var acks []*workload.Acks
	// First among the observers: the wire counts start where the window opens, before one
	// that takes round trips of its own (the server's watcher re-reads its counters while the
	// clients run, whose statements would otherwise go uncounted against counted transactions).
	cfg.Observers = append([]runner.Observer{runner.Hooks{OnMeasureStart: tally.measureFrom,
		OnAcks: func(a []*workload.Acks) { acks = a }}}, cfg.Observers...)
	faults := j.scheduleFaults(ctx, &cfg)
	done := j.feedLive(&cfg, ver)
	res, err := runner.Run(ctx, cfg, tally.connector(j.clientConnect), j.Workload)
	done()
	events := faults()
	if res != nil {
		res.Wire = tally.result(res.Transactions)
		recordFaults(res, events)
	}
	return res, acks, err
}

// Ready refuses data that is not what the job expects (Guard), then brings the server to the
// same state before the step (Settle) and calls OnSettled: what every measured step starts
// with, whether this process runs the clients or client hosts do.
func (j *Job) Ready(ctx context.Context) (*result.Prepared, *result.StartState, error) {
	prepared, err := j.Guard(ctx)
	if err != nil {
		return nil, nil, err
	}
	state := j.Settle(ctx)
	if j.OnSettled != nil {
		j.OnSettled()
	}
	return prepared, state, nil
}

// describe fills in what identifies the run: schema, versions, engine, workload and options.
func (j *Job) describe(res *result.Result, started time.Time, ver, transport string) {
	res.Schema = result.SchemaVersion
	res.ToolVersion = version.Version
	res.ToolCommit = version.Commit()
	res.StartedAt = started
	res.Engine = result.Engine{Kind: string(j.Target.Kind), Version: ver, Target: j.Target.Redacted(), Transport: transport}
	opts := maps.Clone(map[string]string(j.Options))
	opts["rand-type"] = j.Rand.Type
	res.Workload = result.Workload{Name: j.Spec.Name, Title: j.Spec.Title, Options: opts}
	if sm, ok := j.Workload.(workload.Summarizer); ok {
		res.Metrics = sm.Summarize(res)
	}
}
