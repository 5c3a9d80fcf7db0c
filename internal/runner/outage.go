package runner

import (
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fairbench/fairbench/internal/result"
)

// Downtime is time in which no client committed anything: the gaps between one commit and the
// next, over all clients together, that last at least OutageMin (or, in an open loop, twenty
// mean gaps between arrivals, where a quiet spell is the schedule, not the server). Shorter gaps
// are a busy server's ordinary pauses. A gap from the window's start to the first commit, and
// from the last commit to the end, counts too.
const OutageMin = 100 * time.Millisecond

// clockStep is the resolution of the shared commit clock (see outages).
const clockStep = time.Millisecond

// outages finds the gaps. Commits move one shared clock forward, but only in steps of at least
// clockStep: every commit reads the clock (a load of a cache line that stays shared), and at most
// one per step writes it, so hundreds of threads committing at once do not pass the line between
// their cores on every transaction. A gap is then overstated by less than clockStep, which is
// nothing beside OutageMin. A commit that finds the clock older than the threshold records the
// gap, which is rare and takes a lock. No allocation.
type outages struct {
	min  time.Duration
	last atomic.Int64 // Unix ns of the latest commit (or of the window's start)
	mu   sync.Mutex
	raw  [][2]int64 // the gaps, Unix ns from and to
}

func newOutages(cfg *Config) *outages {
	o := &outages{min: OutageMin}
	if cfg.Rate > 0 {
		o.min = max(o.min, time.Duration(20*float64(time.Second)/cfg.Rate))
	}
	return o
}

// begin starts watching at the measured window's start.
func (o *outages) begin(at time.Time) {
	if o != nil {
		o.last.Store(at.UnixNano())
	}
}

// commit notes a transaction that ended at t.
func (o *outages) commit(t time.Time) {
	if o == nil {
		return
	}
	now := t.UnixNano()
	for {
		prev := o.last.Load()
		if now-prev < int64(clockStep) {
			return
		}
		if o.last.CompareAndSwap(prev, now) {
			if now-prev >= int64(o.min) {
				o.mu.Lock()
				o.raw = append(o.raw, [2]int64{prev, now})
				o.mu.Unlock()
			}
			return
		}
	}
}

// finish closes the window at end and returns the outages in seconds from start, the total and
// the longest.
func (o *outages) finish(start, end time.Time) (list []result.Outage, total, longest time.Duration) {
	if o == nil {
		return nil, 0, 0
	}
	o.commit(end)
	o.mu.Lock()
	defer o.mu.Unlock()
	sort.Slice(o.raw, func(i, j int) bool { return o.raw[i][0] < o.raw[j][0] })
	for _, g := range o.raw {
		d := time.Duration(g[1] - g[0])
		total += d
		longest = max(longest, d)
		list = append(list, result.Outage{FromS: secsSince(start, g[0]), ToS: secsSince(start, g[1])})
	}
	return list, total, longest
}

func secsSince(start time.Time, ns int64) float64 {
	return float64(ns-start.UnixNano()) / 1e9
}

// availability records the run's reconnections, in-doubt commits and downtime in res, per
// interval and in total. A run with none of them and no outage still gets the record, so a
// reader sees that nothing went away rather than that nothing was measured.
func (m *measurement) availability(res *result.Result) {
	list, total, longest := m.cs.outages.finish(m.start, m.end)
	var sum counts
	for _, t := range m.tallies() {
		t.mu.Lock()
		sum.add(&t.total)
		t.mu.Unlock()
	}
	result.SpreadOutages(res.Intervals, list)
	a := res.Availability
	if a == nil {
		a = &result.Availability{}
		res.Availability = a
	}
	a.Reconnections, a.InDoubt = sum.reconnects, sum.inDoubt
	a.DowntimeS, a.LongestOutageS, a.Outages = total.Seconds(), longest.Seconds(), list
	a.OutageMinS = m.cs.outages.min.Seconds()
}
