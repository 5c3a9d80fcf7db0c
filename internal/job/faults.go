package job

import (
	"context"
	"time"

	"github.com/fairbench/fairbench/internal/fault"
	"github.com/fairbench/fairbench/internal/result"
	"github.com/fairbench/fairbench/internal/runner"
)

// scheduleFaults arranges for the job's faults to start firing when the measured window opens,
// and returns the function that ends them after the run (undoing any stop or partition still
// on) and returns what fired.
func (j *Job) scheduleFaults(ctx context.Context, cfg *runner.Config) (stop func() []result.FaultEvent) {
	if len(j.Faults) == 0 || j.Cluster == nil {
		return func() []result.FaultEvent { return nil }
	}
	var sched *fault.Schedule
	// First: the faults' schedule starts with the window, not after the others' round trips.
	cfg.Observers = append([]runner.Observer{runner.Hooks{OnMeasureStart: func() {
		sched = fault.Start(context.WithoutCancel(ctx), j.Cluster, j.Faults, time.Now(), cfg.Progress)
	}}}, cfg.Observers...)
	return func() []result.FaultEvent {
		if sched == nil {
			return nil
		}
		return sched.Stop()
	}
}

// recordFaults puts the faults that fired into the result's availability record.
func recordFaults(res *result.Result, events []result.FaultEvent) {
	if len(events) == 0 {
		return
	}
	if res.Availability == nil {
		res.Availability = &result.Availability{}
	}
	res.Availability.Faults = events
}
