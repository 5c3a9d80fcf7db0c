package job

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/fairbench/fairbench/internal/machineload"
	"github.com/fairbench/fairbench/internal/result"
	"github.com/fairbench/fairbench/internal/runner"
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
	prevInterval, prevStart, prevSettled := cfg.OnInterval, cfg.OnMeasureStart, j.OnSettled
	machine := machineload.New(j.PIDs)
	cfg.OnInterval = func(iv *result.Interval) {
		mon.OnInterval(iv)
		machine.OnInterval(iv) // after the monitor: it subtracts the server's CPU
		if prevInterval != nil {
			prevInterval(iv)
		}
	}
	beginWaits, endWaits := j.watchWaits(ctx)
	cfg.OnMeasureStart = func() {
		machine.Reset()
		beginWaits()
		if cfg.Warmup > 0 {
			_ = mon.MeasureStart(ctx)
		}
		if prevStart != nil {
			prevStart()
		}
	}
	j.OnSettled = func() {
		_ = mon.MeasureStart(ctx)
		machine.Reset()
		if prevSettled != nil {
			prevSettled()
		}
	}
	defer func() { j.OnSettled = prevSettled }()
	res, runErr := run(ctx, cfg)
	sampled := endWaits()
	if res == nil {
		return nil, runErr
	}
	res.Waits = sampled
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
	res.Fail(runErr)
	return res, runErr
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

// watchWaits readies wait sampling (WaitEvery > 0): the clients' sessions are recorded as they
// connect, and the sampler, on a connection of its own, starts with the measured window (begin)
// and stops after the run (end, which gives its counts; nil when sampling is off or failed to
// connect, which costs the step nothing else).
func (j *Job) watchWaits(ctx context.Context) (begin func(), end func() *result.Waits) {
	off := func() *result.Waits { return nil }
	j.clients = nil
	if j.WaitEvery <= 0 {
		return func() {}, off
	}
	conn, err := j.Connect(ctx)
	if err != nil {
		return func() {}, off
	}
	j.clients = &waits.Clients{}
	var sampler *waits.Sampler
	begin = func() {
		if sampler == nil {
			sampler = waits.Start(ctx, conn, j.WaitEvery, j.clients)
		}
	}
	end = func() *result.Waits {
		// Closed aside: on a frozen server closing may wait for an answer that never comes.
		defer func() { go conn.Close() }()
		if sampler == nil {
			return nil
		}
		return sampler.Stop()
	}
	return begin, end
}
