package merge

import (
	"math"
	"sort"
	"time"

	"github.com/fairbench/fairbench/internal/result"
)

// alignIntervals lines the shards' intervals up on the wall clock: an interval belongs to the
// slot of the merged timeline its end falls nearest to, slots as long as the report interval and
// counted from the earliest shard's start. Counts and rates add up; an interval's p95/p99 are
// kept as percentiles only, so the slot shows the highest shard's, an upper bound (the whole
// run's percentiles come from the merged histograms and are exact).
func alignIntervals(shards []Shard) []result.Interval {
	origin := shards[0].Result.Measured.From
	for _, s := range shards {
		if s.Result.Measured.From.Before(origin) {
			origin = s.Result.Measured.From
		}
	}
	width := reportInterval(shards)
	slots := map[int]*result.Interval{}
	for _, s := range shards {
		for _, iv := range s.Result.Intervals {
			end := s.Result.Measured.From.Add(time.Duration(iv.T * float64(time.Second)))
			slot := int(math.Round(end.Sub(origin).Seconds() / width))
			m := slots[slot]
			if m == nil {
				m = &result.Interval{T: float64(slot) * width}
				slots[slot] = m
			}
			addInterval(m, iv)
		}
	}
	out := make([]result.Interval, 0, len(slots))
	for _, iv := range slots {
		out = append(out, *iv)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].T < out[j].T })
	return out
}

func addInterval(m *result.Interval, iv result.Interval) {
	m.Threads += iv.Threads
	m.TPS += iv.TPS
	m.QPS += iv.QPS
	m.Errors += iv.Errors
	m.Retries += iv.Retries
	m.Reconnects += iv.Reconnects
	m.P95MS = max(m.P95MS, iv.P95MS)
	m.P99MS = max(m.P99MS, iv.P99MS)
	m.LagMeanMS = max(m.LagMeanMS, iv.LagMeanMS)
	// The server is one for all shards: its figures are the same load seen from each.
	m.ServerCPUPct = max(m.ServerCPUPct, iv.ServerCPUPct)
	m.ServerRSSMB = max(m.ServerRSSMB, iv.ServerRSSMB)
}

// reportInterval is the shards' interval length in seconds, read from their first two intervals
// (the first one's end when there is only one); one second when there are none.
func reportInterval(shards []Shard) float64 {
	for _, s := range shards {
		ivs := s.Result.Intervals
		switch {
		case len(ivs) >= 2 && ivs[1].T > ivs[0].T:
			return ivs[1].T - ivs[0].T
		case len(ivs) == 1 && ivs[0].T > 0:
			return ivs[0].T
		}
	}
	return 1
}
