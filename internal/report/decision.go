package report

import (
	"fmt"
	"math"
	"sort"
	"strings"
)

// minNoise is the smallest gap treated as a real difference. Single runs carry no measure of
// their own noise, and back-to-back runs of the same server routinely differ by a few percent.
const minNoise = 0.05

var useCases = map[string]string{
	"oltp_read_write":   "Mixed OLTP (reads + writes)",
	"oltp_read_only":    "Read-heavy",
	"oltp_point_select": "Key-value lookups",
	"oltp_insert":       "Ingest / insert-heavy",
	"oltp_write_only":   "Write-heavy",
}

func useCase(workload string) string {
	if u, ok := useCases[workload]; ok {
		return u
	}
	return workload
}

type decision struct {
	Workload string
	UseCase  string
	Threads  int
	Pick     string
	Why      string
	Winner   *variant   // nil on a tie or when nothing completed
	Tied     []*variant // the engines within noise of the best, best first, on a tie
}

// noise is the relative TPS gap below which two groups cannot be told apart.
func noise(a, b *group) float64 {
	return math.Max(minNoise, math.Max(a.Spread, b.Spread))
}

// decide picks the engine for one workload from the groups measured at the same thread count.
func decide(workload string, threads int, cands []*group) decision {
	d := decision{Workload: workload, UseCase: useCase(workload), Threads: threads}
	var ranked, excluded []*group
	for _, g := range cands {
		if g.Incomplete {
			excluded = append(excluded, g)
		} else {
			ranked = append(ranked, g)
		}
	}
	sort.SliceStable(ranked, func(i, j int) bool {
		if ranked[i].TPS != ranked[j].TPS {
			return ranked[i].TPS > ranked[j].TPS
		}
		return ranked[i].V.Index < ranked[j].V.Index
	})
	var suffix string
	if len(excluded) > 0 {
		names := make([]string, len(excluded))
		for i, g := range excluded {
			names[i] = g.V.Name
		}
		suffix = "; " + joinAnd(names) + " not ranked (incomplete)"
	}
	if len(ranked) == 0 {
		d.Pick = "none (no complete result)"
		d.Why = "every run of this workload is incomplete" + suffix
		return d
	}
	best := ranked[0]
	if len(ranked) == 1 {
		d.Pick, d.Winner = best.V.Name, best.V
		d.Why = fmt.Sprintf("only complete result: %s TPS, p95 %s ms", fmtRate(best.TPS), fmtMS(best.Lat.P95)) + suffix
		return d
	}
	tied := []*group{best}
	var gap, thr float64
	for _, g := range ranked[1:] {
		gp := gapOf(best, g)
		if t := noise(best, g); gp <= t {
			tied = append(tied, g)
			gap, thr = gp, t
		}
	}
	if len(tied) > 1 {
		names := make([]string, len(tied))
		others := make([]string, 0, len(tied)-1)
		for i, g := range tied {
			names[i] = g.V.Name
			d.Tied = append(d.Tied, g.V)
			if i > 0 {
				others = append(others, fmt.Sprintf("%s (%s)", fmtRate(g.TPS), g.V.Name))
			}
		}
		d.Pick = "tie: " + strings.Join(names, " ≈ ") + " (within noise)"
		d.Why = fmt.Sprintf("%s TPS vs %s: %s apart, noise %s", fmtRate(best.TPS), strings.Join(others, ", "), fmtPct(gap), fmtPct(thr)) + suffix
		return d
	}
	second := ranked[1]
	d.Pick, d.Winner = best.V.Name, best.V
	d.Why = fmt.Sprintf("%s TPS vs %s (%s), p95 %s ms vs %s ms", fmtRate(best.TPS), fmtRate(second.TPS), second.V.Name,
		fmtMS(best.Lat.P95), fmtMS(second.Lat.P95)) + suffix
	return d
}

func gapOf(best, g *group) float64 {
	if best.TPS <= 0 {
		return 0
	}
	return (best.TPS - g.TPS) / best.TPS
}

func (m *model) decisions() []decision {
	var out []decision
	for _, w := range m.Workloads {
		t := m.Headline[w]
		var cands []*group
		for _, v := range m.variantsFor(w) {
			if g := m.group(v, w, t); g != nil {
				cands = append(cands, g)
			}
		}
		out = append(out, decide(w, t, cands))
	}
	return out
}
