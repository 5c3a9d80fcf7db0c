package runner

import (
	"github.com/fairbench/fairbench/internal/result"
	"github.com/fairbench/fairbench/internal/workload"
)

// An Observer is one sink of a run's moments: the server's watcher, the machine's load sampler,
// the live metrics endpoint, a fault schedule, a study's own sampling. The runner tells every
// observer of Config.Observers, in their order, so a later one sees what an earlier one wrote
// into the interval (the server's figures):
//
//   - MeasureStart when the warm-up ends and counting begins, so that server-side counters take
//     their starting point there and per-transaction figures exclude the warm-up;
//   - Interval after each measured interval, with the counts and histograms behind it when any
//     observer WantsDetail (each client then keeps a histogram per transaction type), else nil;
//   - MeasureEnd when the measured window has closed and the clients have stopped, before they
//     disconnect: what the server keeps per connection is still there to read;
//   - Acks at the end, the ids every worker saw committed or in doubt (workload.AckRecorder),
//     for the check after the run.
type Observer interface {
	MeasureStart()
	Interval(iv *result.Interval, detail *IntervalDetail)
	WantsDetail() bool
	MeasureEnd()
	Acks([]*workload.Acks)
}

// Hooks is an Observer made of the functions a sink needs; those left nil are not called, and
// OnDetail set is what makes it want each interval's detail.
type Hooks struct {
	OnMeasureStart func()
	OnInterval     func(*result.Interval)
	OnDetail       func(IntervalDetail)
	OnMeasureEnd   func()
	OnAcks         func([]*workload.Acks)
}

func (h Hooks) MeasureStart() {
	if h.OnMeasureStart != nil {
		h.OnMeasureStart()
	}
}

func (h Hooks) Interval(iv *result.Interval, d *IntervalDetail) {
	if h.OnInterval != nil {
		h.OnInterval(iv)
	}
	if h.OnDetail != nil && d != nil {
		h.OnDetail(*d)
	}
}

func (h Hooks) WantsDetail() bool { return h.OnDetail != nil }

func (h Hooks) MeasureEnd() {
	if h.OnMeasureEnd != nil {
		h.OnMeasureEnd()
	}
}

func (h Hooks) Acks(a []*workload.Acks) {
	if h.OnAcks != nil {
		h.OnAcks(a)
	}
}

// observers are a run's Observers, told in order.
type observers []Observer

func (o observers) measureStart() {
	for _, x := range o {
		x.MeasureStart()
	}
}

func (o observers) interval(iv *result.Interval, d *IntervalDetail) {
	for _, x := range o {
		x.Interval(iv, d)
	}
}

func (o observers) wantDetail() bool {
	for _, x := range o {
		if x.WantsDetail() {
			return true
		}
	}
	return false
}

func (o observers) measureEnd() {
	for _, x := range o {
		x.MeasureEnd()
	}
}

func (o observers) acks(a []*workload.Acks) {
	for _, x := range o {
		x.Acks(a)
	}
}
