package report

import (
	"slices"
	"strings"
	"testing"

	"github.com/fairbench/fairbench/internal/result"
)

func TestLowest(t *testing.T) {
	pg, my, ma := &variant{Name: "postgres", Index: 0}, &variant{Name: "mysql", Index: 1}, &variant{Name: "mariadb", Index: 2}
	tests := []struct {
		name     string
		vals     map[*variant]float64
		rounds   map[*variant]series
		ok       bool
		pick     string
		whyStart string
	}{
		{"one engine is no comparison", map[*variant]float64{pg: 100}, nil, false, "", ""},
		{"one run: the 5% rule, said so", map[*variant]float64{pg: 300, my: 200, ma: 250}, nil, true, "mysql (one run: no interval)", "mysql 200 MB, mariadb 250 MB, postgres 300 MB"},
		{"one run within 5% ties", map[*variant]float64{pg: 204, my: 200, ma: 400}, nil, true, "tie: mysql ≈ postgres (within 5%, one run: no interval)", "mysql 200 MB, postgres 204 MB"},
		{"rounds that agree pick", map[*variant]float64{pg: 300, my: 200}, map[*variant]series{pg: {vals: []float64{300, 302, 298}}, my: {vals: []float64{200, 201, 199}}},
			true, "mysql, 1.50× [1.49, 1.51], 3 rounds", "mysql 200 MB, postgres 300 MB (basis); the ratio is postgres's figure over mysql's (95% interval)"},
		{"rounds within ±5% tie", map[*variant]float64{pg: 204, my: 200}, map[*variant]series{pg: {vals: []float64{204, 205, 203}}, my: {vals: []float64{200, 201, 199}}},
			true, "tie: mysql ≈ postgres (within ±5%, by rounds)", "mysql 200 MB, postgres 204 MB (basis); postgres over mysql: 1.02× [1.02, 1.02] lies within ±5.0% (95% interval, 3 rounds)"},
		{"rounds that disagree are undecided", map[*variant]float64{pg: 220, my: 200}, map[*variant]series{pg: {vals: []float64{180, 220, 260}}, my: {vals: []float64{200, 201, 199}}},
			true, "undecided: mysql lowest", "mysql 200 MB, postgres 220 MB (basis); postgres over mysql: 1.09× [0.68, 1.73]"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d, ok := (&model{}).lowest("Lowest memory footprint, idle", tc.vals, tc.rounds, "MB", "basis")
			if ok != tc.ok {
				t.Fatalf("ok = %v, want %v", ok, tc.ok)
			}
			if !ok {
				return
			}
			if d.Pick != tc.pick || !strings.HasPrefix(d.Why, tc.whyStart) || !d.Resource {
				t.Errorf("got pick %q why %q, want %q / %q...", d.Pick, d.Why, tc.pick, tc.whyStart)
			}
			if (d.Winner == nil) != (strings.HasPrefix(tc.pick, "tie") || strings.HasPrefix(tc.pick, "undecided")) {
				t.Errorf("winner %v for pick %q", d.Winner, d.Pick)
			}
		})
	}
}

// A memory or disk row pairs two engines' figures by round, as a throughput pick does: a round
// one engine lost (left out for steal) drops that round from the pair instead of setting each
// later round of one engine against the next round of the other.
func TestResourceRoundsPairedByRound(t *testing.T) {
	const w = "oltp_insert"
	// The machine drifts a lot from round to round; postgres writes 10% more in every round.
	pg := numbered(reps("postgres", w, 1, 1, 1, 1, 1))
	ma := numbered(reps("mariadb", w, 1, 1, 1, 1, 1))
	for i, ops := range []float64{1.0, 2.0, 3.0, 4.0, 5.0} {
		ma[i].Server = &result.Server{HostPerTxn: map[string]float64{"disk_write_ops": ops}, DiskDevice: "vdb"}
		pg[i].Server = &result.Server{HostPerTxn: map[string]float64{"disk_write_ops": ops * 1.1}, DiskDevice: "vdb"}
	}
	ma[1].Complete, ma[1].Error = false, "the hypervisor stole 20% of the machine"
	m := newModel(&Input{Results: slices.Concat(pg, ma)})
	var row *decision
	for _, d := range m.resourceDecisions() {
		if d.Workload == w {
			row = &d
		}
	}
	if row == nil || row.Winner == nil || row.Winner.Kind != "mariadb" || !strings.Contains(row.Pick, "1.10× [1.10, 1.10], 4 rounds") {
		t.Fatalf("disk row %+v: want mariadb, 1.10× from the four rounds both ran", row)
	}
}
