package merge

import (
	"sort"
	"time"

	"github.com/fairbench/fairbench/internal/result"
)

// mergeAvailability joins the shards' availability records: counts add up (each shard checked
// its own clients' acknowledged transactions), and an outage of the whole run is a time when no
// shard committed anything, the intersection of the shards' outages on the wall clock (outside
// its own window a shard counts as not committing). Faults are the first shard's that has any:
// every shard would report the same ones only if each injected them, which shards do not.
func mergeAvailability(m *result.Result, shards []Shard) {
	var sets [][][2]time.Time
	minS := 0.0
	any := false
	for _, s := range shards {
		a := s.Result.Availability
		if a == nil {
			continue
		}
		any = true
		ma := m.Availability
		if ma == nil {
			ma = &result.Availability{}
			m.Availability = ma
		}
		ma.Reconnections += a.Reconnections
		ma.InDoubt += a.InDoubt
		if len(ma.Faults) == 0 {
			ma.Faults = a.Faults
		}
		addAcks(ma, a.Acks)
		minS = max(minS, a.OutageMinS)
		sets = append(sets, shardOutages(s.Result, a))
	}
	if !any {
		return
	}
	ma := m.Availability
	ma.OutageMinS = minS
	from := m.Measured.From
	for _, g := range intersect(sets, from, m.Measured.To) {
		d := g[1].Sub(g[0]).Seconds()
		if d < minS {
			continue
		}
		ma.DowntimeS += d
		ma.LongestOutageS = max(ma.LongestOutageS, d)
		ma.Outages = append(ma.Outages, result.Outage{FromS: g[0].Sub(from).Seconds(), ToS: g[1].Sub(from).Seconds()})
	}
	result.SpreadOutages(m.Intervals, ma.Outages)
}

func addAcks(ma *result.Availability, k *result.AckCheck) {
	if k == nil {
		return
	}
	if ma.Acks == nil {
		ma.Acks = &result.AckCheck{CheckedOn: k.CheckedOn, Setting: k.Setting}
	}
	mk := ma.Acks
	mk.Acknowledged += k.Acknowledged
	mk.Lost += k.Lost
	mk.InDoubt += k.InDoubt
	mk.InDoubtFound += k.InDoubtFound
	for _, e := range k.LostExamples {
		if len(mk.LostExamples) < 10 {
			mk.LostExamples = append(mk.LostExamples, e)
		}
	}
	if mk.NotChecked == "" {
		mk.NotChecked = k.NotChecked
	}
}

// shardOutages is a shard's time without commits on the wall clock: its outages, and all time
// outside its window.
func shardOutages(r *result.Result, a *result.Availability) [][2]time.Time {
	at := func(s float64) time.Time { return r.Measured.From.Add(time.Duration(s * float64(time.Second))) }
	out := [][2]time.Time{{{}, r.Measured.From}}
	for _, o := range a.Outages {
		out = append(out, [2]time.Time{at(o.FromS), at(o.ToS)})
	}
	return append(out, [2]time.Time{r.Measured.To, r.Measured.To.Add(100 * 365 * 24 * time.Hour)})
}

// intersect is the time every set covers, within [from, to].
func intersect(sets [][][2]time.Time, from, to time.Time) [][2]time.Time {
	cur := [][2]time.Time{{from, to}}
	for _, set := range sets {
		sort.Slice(set, func(i, j int) bool { return set[i][0].Before(set[j][0]) })
		var next [][2]time.Time
		for _, a := range cur {
			for _, b := range set {
				lo, hi := later(a[0], b[0]), earlier(a[1], b[1])
				if lo.Before(hi) {
					next = append(next, [2]time.Time{lo, hi})
				}
			}
		}
		cur = next
	}
	return cur
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

func earlier(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}
