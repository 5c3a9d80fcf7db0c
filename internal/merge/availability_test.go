package merge

import (
	"math"
	"testing"

	"github.com/fairbench/fairbench/internal/histogram"
	"github.com/fairbench/fairbench/internal/result"
)

// Two shards on one clock: shard 1 committed nothing from 3 s to 6 s, shard 2 nothing from
// 4 s to 8 s, so the whole run had no commit from 4 s to 6 s only.
func TestMergeAvailability(t *testing.T) {
	pooled := histogram.New()
	a, b := shard(1, 2, t0, 100, pooled), shard(2, 2, t0, 100, pooled)
	a.Result.Availability = &result.Availability{Reconnections: 2, InDoubt: 1, OutageMinS: 0.1, DowntimeS: 3,
		Outages: []result.Outage{{FromS: 3, ToS: 6}}, Acks: &result.AckCheck{Acknowledged: 900, InDoubt: 1}}
	b.Result.Availability = &result.Availability{Reconnections: 3, OutageMinS: 0.1, DowntimeS: 4,
		Outages: []result.Outage{{FromS: 4, ToS: 8}}, Acks: &result.AckCheck{Acknowledged: 1000, Lost: 2, LostExamples: []int64{7, 9}},
		Faults: []result.FaultEvent{{Spec: "kill-node@3s", Kind: "kill-node", Node: "node3", AtS: 3}}}
	m, err := Merge([]Shard{a, b})
	if err != nil {
		t.Fatal(err)
	}
	av := m.Availability
	if av == nil || av.Reconnections != 5 || av.InDoubt != 1 || len(av.Faults) != 1 {
		t.Fatalf("merged availability %+v", av)
	}
	if math.Abs(av.DowntimeS-2) > 1e-6 || len(av.Outages) != 1 || math.Abs(av.Outages[0].FromS-4) > 1e-6 {
		t.Errorf("downtime %.3f s, outages %+v: want 2 s, from 4 s to 6 s", av.DowntimeS, av.Outages)
	}
	if k := av.Acks; k.Acknowledged != 1900 || k.Lost != 2 || len(k.LostExamples) != 2 {
		t.Errorf("acks %+v: want 1,900 acknowledged, 2 lost", k)
	}
	var ivDown float64
	for _, iv := range m.Intervals {
		ivDown += iv.DowntimeS
	}
	if math.Abs(ivDown-2) > 1e-6 {
		t.Errorf("intervals hold %.3f s of downtime, want 2", ivDown)
	}
}
