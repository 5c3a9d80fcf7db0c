package job

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/fairbench/fairbench/internal/machineload"
	"github.com/fairbench/fairbench/internal/result"
	"github.com/fairbench/fairbench/internal/runner"
	"github.com/fairbench/fairbench/internal/sqldb"
	"github.com/fairbench/fairbench/internal/statements"
	"github.com/fairbench/fairbench/internal/waits"
)

// Watcher is the server side of a measured step (servermetrics.Monitor, ClusterMonitor): its
// figures from Start, re-based at MeasureStart, fed every interval, read at Finish.
type Watcher interface {
	Start(ctx context.Context) error
	MeasureStart(ctx context.Context) error
	OnInterval(iv *result.Interval)
	Finish(ctx context.Context, transactions int64) (*result.Server, error)
}

// RunFunc runs the step's clients and returns what they measured: Job.Run, or client hosts'.
type RunFunc func(context.Context, runner.Config) (*result.Result, error)

// FinishTimeout bounds reading the server's figures after a step.
const FinishTimeout = 10 * time.Second

// Measured is the one measured step of run, compare, study and reproduce: the server's watcher
// started, re-based after the settle's flush (whose writes are the previous step's) and after the
// warm-up, fed every interval; the clients run by run; the server's figures read under one
// deadline rule; and the result marked incomplete when anything after the run failed, so that a
// command's exit status and its file never disagree.
func (j *Job) Measured(ctx context.Context, cfg runner.Config, mon Watcher, run RunFunc) (*result.Result, error) {
	if err := mon.Start(ctx); err != nil {
		return nil, fmt.Errorf("reading the server's counters: %w", err)
	}
	prevSettled := j.OnSettled
	machine := machineload.New(j.PIDs)
	inst := j.instrument(ctx)
	if inst != nil && cfg.OnStall == nil {
		cfg.OnStall = inst.stallView
	}
	// Before the observers the caller gave: those (a study's sampling, live metrics) see the
	// server's figures in each interval. job.Run puts the wire counts and faults before it.
	var opening *rebaseRead
	watch := runner.Hooks{
		OnMeasureStart: func() {
			machine.Reset()
			inst.begin()
			if cfg.Warmup > 0 {
				opening = rebaseBeside(ctx, mon)
			}
		},
		OnInterval: func(iv *result.Interval) {
			mon.OnInterval(iv)
			machine.OnInterval(iv) // after the monitor: it subtracts the server's CPU
		},
		OnMeasureEnd: inst.finish,
	}
	cfg.Observers = append([]runner.Observer{watch}, cfg.Observers...)
	var memoryBefore float64
	j.OnSettled = func() {
		memoryBefore = machineload.MemoryNS() // on the settled, idle server: the machine's own speed
		rebase(ctx, mon)
		machine.Reset()
		if prevSettled != nil {
			prevSettled()
		}
	}
	defer func() { j.OnSettled = prevSettled }()
	res, runErr := run(ctx, cfg)
	opening.join(finishLimit(ctx, runErr))
	memoryAfter := machineload.MemoryNS()
	inst.attach(res)
	if res == nil {
		return nil, runErr
	}
	fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), finishLimit(ctx, runErr))
	defer cancel()
	srv, err := mon.Finish(fctx, res.Transactions)
	if srv != nil {
		res.Server = srv
	}
	if err != nil && runErr == nil {
		runErr = fmt.Errorf("reading the server's figures after the run: %w", err)
	}
	res.Machine = machineload.Summary(res.Intervals)
	if res.Machine != nil {
		res.Machine.MemoryNSBefore, res.Machine.MemoryNSAfter = memoryBefore, memoryAfter
	}
	res.Fail(runErr)
	return res, runErr
}

// rebaseLimit bounds re-reading the server's counters after the settle, before the clients
// start: a server that froze there must not hold the step for ever (seen: a capacity search
// waited on a frozen server).
const rebaseLimit = 5 * time.Second

// rebase moves the monitor's start to now, within rebaseLimit. A server that does not answer in
// time keeps the earlier baseline, and the run that follows ends on the runner's stall rule,
// marked incomplete.
func rebase(ctx context.Context, mon Watcher) {
	rctx, cancel := context.WithTimeout(ctx, rebaseLimit)
	defer cancel()
	_ = mon.MeasureStart(rctx)
}

// rebaseRead is the monitor's move to the window's opening, read beside the clients.
type rebaseRead struct {
	done   chan struct{}
	cancel context.CancelFunc
}

// rebaseBeside moves the monitor's start to the window's opening without holding the window or
// cutting the read short: a saturated server may answer it seconds late (seen at a capacity
// search's rates past the knee), and a read cut off by a deadline ends the monitor's connection,
// after which every later figure of the step was lost and the step called the server failed. The
// monitor gives no counters it read late (servermetrics.CountersLateLimit); join waits for the
// read before anything else uses the connection.
func rebaseBeside(ctx context.Context, mon Watcher) *rebaseRead {
	rctx, cancel := context.WithCancel(ctx)
	r := &rebaseRead{done: make(chan struct{}), cancel: cancel}
	go func() {
		defer close(r.done)
		_ = mon.MeasureStart(rctx)
	}()
	return r
}

// join waits up to limit for the read (nil: none was started), then gives it up: a server that
// has not answered by then is not answering, and its connection ends with the read.
func (r *rebaseRead) join(limit time.Duration) {
	if r == nil {
		return
	}
	defer r.cancel()
	t := time.NewTimer(limit)
	defer t.Stop()
	select {
	case <-r.done:
		return
	case <-t.C:
	}
	r.cancel()
	<-r.done
}

// finishLimit is how long the server's figures may take after a step: FinishTimeout normally;
// after Ctrl-C a moment, so that fairbench ends within about a second; after a stall or with the
// server gone a second, since the answer is known not to come.
func finishLimit(ctx context.Context, runErr error) time.Duration {
	var stall *runner.StallError
	var gone *runner.ServerGoneError
	switch {
	case ctx.Err() != nil:
		return 300 * time.Millisecond
	case errors.As(runErr, &stall), errors.As(runErr, &gone):
		return time.Second
	}
	return FinishTimeout
}

// instruments are a step's server-side instruments (WaitEvery > 0), on a connection of their
// own: the clients' sessions are recorded as they connect; when the measured window opens the
// statements' accounts are read and the wait sampler starts; when it closes, before the clients
// disconnect (MariaDB keeps a prepared statement's account only as long as its connection), the
// sampler stops and the accounts are read again. Off, or unable to connect, they cost nothing.
type instruments struct {
	ctx      context.Context
	conn     sqldb.Conn
	every    time.Duration
	clients  *waits.Clients
	sampler  *waits.Sampler
	window   *statements.Window
	finished bool
	waits    *result.Waits
	stmts    *result.Statements
}

// instrument readies the instruments; nil when they are off or cannot connect, and for a host
// list (a cluster's nodes): its clients spread over the nodes, and a session id read on one node
// may name another session on the node the instruments would read.
func (j *Job) instrument(ctx context.Context) *instruments {
	j.clients = nil
	if j.WaitEvery <= 0 || len(j.Target.Addrs) > 1 {
		return nil
	}
	conn, err := j.Connect(ctx)
	if err != nil {
		return nil
	}
	j.clients = &waits.Clients{}
	return &instruments{ctx: ctx, conn: conn, every: j.WaitEvery, clients: j.clients}
}

// instrumentLimit bounds each read of the statements' accounts. The first is read inside the
// measured window before the clients start, so a server that froze then must not hold the run
// (nor fairbench) up: a few milliseconds is usual, even for thousands of accounts.
const instrumentLimit = 2 * time.Second

// begin reads the accounts and starts sampling, once: the measured window opens. A server that
// did not answer the first read within instrumentLimit is not sampled either: its connection
// was cut by the deadline, and the window's figures say why they are missing.
func (in *instruments) begin() {
	if in == nil || in.window != nil {
		return
	}
	opened := time.Now() // the runner calls this as the window opens
	rctx, cancel := context.WithTimeout(in.ctx, instrumentLimit)
	defer cancel()
	in.window = statements.Begin(rctx, in.conn, opened)
	if rctx.Err() != nil {
		in.finished = true
		in.stmts = in.window.End(rctx)
		in.waits = &result.Waits{Error: "the server did not answer the instruments' first read within " + instrumentLimit.String()}
		return
	}
	in.sampler = waits.Start(in.ctx, in.conn, in.every, in.clients)
}

// stallView is the wait sampler's view of the clients' sessions when the runner gives up on
// stalled ones: what the server said they were doing, or that it had stopped answering.
func (in *instruments) stallView() string {
	if in == nil || in.sampler == nil {
		return ""
	}
	return in.sampler.StallView()
}

// finish stops sampling and reads the accounts again, once: the window has closed.
func (in *instruments) finish() {
	if in == nil || in.sampler == nil || in.finished {
		return
	}
	in.finished = true
	w, idle := in.sampler.Stop()
	in.waits = w
	if idle && in.ctx.Err() == nil {
		rctx, cancel := context.WithTimeout(in.ctx, instrumentLimit)
		defer cancel()
		in.stmts = in.window.End(rctx)
	}
}

// attach finishes (a run that failed before its window closed) and puts the figures in res.
func (in *instruments) attach(res *result.Result) {
	if in == nil {
		return
	}
	in.finish()
	go in.conn.Close() // aside: on a frozen server closing may wait for an answer that never comes
	if res != nil {
		res.Waits, res.Statements = in.waits, in.stmts
	}
}
