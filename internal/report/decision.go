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
	// Ramp marks a decision between ramp runs, by saturation throughput; Workload then carries
	// " (ramp)" and Threads is the winner's saturation point.
	Ramp bool
	// TPCH marks a decision between TPC-H runs, by geometric mean or queries per hour; UseCase
	// then names the test and scale factor.
	TPCH bool
	// Resource marks a decision by memory footprint or disk writes (lower is better); UseCase
	// then says which.
	Resource bool
}

// noise is the relative TPS gap below which two groups cannot be told apart.
func noise(a, b *group) float64 {
	return math.Max(minNoise, math.Max(a.Spread, b.Spread))
}

// ranking orders the candidates of one decision: complete groups by TPS, best first; the
// incomplete ones are never ranked. tied holds the best and every group within noise of it.
type ranking struct {
	ranked, excluded []*group
	tied             []*group
	gap, thr         float64 // of the last tied group, for the "why"
	suffix           string  // names the excluded groups
}

func rank(cands []*group) ranking {
	var rk ranking
	for _, g := range cands {
		if g.Incomplete {
			rk.excluded = append(rk.excluded, g)
		} else {
			rk.ranked = append(rk.ranked, g)
		}
	}
	sort.SliceStable(rk.ranked, func(i, j int) bool {
		if rk.ranked[i].TPS != rk.ranked[j].TPS {
			return rk.ranked[i].TPS > rk.ranked[j].TPS
		}
		return rk.ranked[i].V.Index < rk.ranked[j].V.Index
	})
	if len(rk.excluded) > 0 {
		names := make([]string, len(rk.excluded))
		for i, g := range rk.excluded {
			names[i] = g.V.Name
		}
		rk.suffix = "; " + joinAnd(names) + " not ranked (incomplete)"
	}
	if len(rk.ranked) == 0 {
		return rk
	}
	best := rk.ranked[0]
	rk.tied = []*group{best}
	for _, g := range rk.ranked[1:] {
		gp := gapOf(best, g)
		if t := noise(best, g); gp <= t {
			rk.tied = append(rk.tied, g)
			rk.gap, rk.thr = gp, t
		}
	}
	return rk
}

// tiePick names a tie and records the tied variants on d.
func tiePick(d *decision, tied []*group) {
	names := make([]string, len(tied))
	for i, g := range tied {
		names[i] = g.V.Name
		d.Tied = append(d.Tied, g.V)
	}
	d.Pick = "tie: " + strings.Join(names, " ≈ ") + " (within noise)"
}

// decide picks the engine for one workload from the groups measured at the same thread count.
func decide(workload string, threads int, cands []*group) decision {
	d := decision{Workload: workload, UseCase: useCase(workload), Threads: threads}
	rk := rank(cands)
	if len(rk.ranked) == 0 {
		d.Pick = "none (no complete result)"
		d.Why = "every run of this workload is incomplete" + rk.suffix
		return d
	}
	best := rk.ranked[0]
	if len(rk.ranked) == 1 {
		d.Pick, d.Winner = best.V.Name, best.V
		d.Why = fmt.Sprintf("only complete result: %s TPS, p95 %s ms", fmtRate(best.TPS), fmtMS(best.Lat.P95)) + rk.suffix
		return d
	}
	if len(rk.tied) > 1 {
		tiePick(&d, rk.tied)
		others := make([]string, 0, len(rk.tied)-1)
		for _, g := range rk.tied[1:] {
			others = append(others, fmt.Sprintf("%s (%s)", fmtRate(g.TPS), g.V.Name))
		}
		d.Why = fmt.Sprintf("%s TPS vs %s: %s apart, noise %s", fmtRate(best.TPS), strings.Join(others, ", "), fmtPct(rk.gap), fmtPct(rk.thr)) + rk.suffix
		return d
	}
	second := rk.ranked[1]
	d.Pick, d.Winner = best.V.Name, best.V
	d.Why = fmt.Sprintf("%s TPS vs %s (%s), p95 %s ms vs %s ms", fmtRate(best.TPS), fmtRate(second.TPS), second.V.Name,
		fmtMS(best.Lat.P95), fmtMS(second.Lat.P95)) + rk.suffix
	return d
}

// decideRamp picks the engine for one workload from its ramp runs. Each engine saturates at its
// own thread count, so the ramps are ranked by throughput at the saturation point, and never
// against fixed-thread runs, which measured something else.
func decideRamp(workload string, cands []*group) decision {
	d := decision{Workload: workload + " (ramp)", UseCase: useCase(workload), Ramp: true}
	// A ramp that recorded no saturation point has no figure to rank.
	var withPoint []*group
	var noPoint []string
	for _, g := range cands {
		if g.Ramp != nil && g.Ramp.SaturationThreads > 0 {
			withPoint = append(withPoint, g)
		} else {
			noPoint = append(noPoint, g.V.Name)
		}
	}
	rk := rank(withPoint)
	if len(noPoint) > 0 {
		rk.suffix += "; " + joinAnd(noPoint) + " not ranked (no saturation point)"
	}
	if len(rk.ranked) == 0 {
		d.Pick = "none (no complete result)"
		d.Why = "no complete ramp of this workload has a saturation point" + rk.suffix
		return d
	}
	best := rk.ranked[0]
	d.Threads = best.Threads
	other := func(g *group) string {
		return fmt.Sprintf("%s (%s at %s)", fmtRate(g.TPS), g.V.Name, threadsText(g.Threads))
	}
	lead := fmt.Sprintf("saturates at %s with %s TPS", threadsText(best.Threads), fmtRate(best.TPS))
	if len(rk.ranked) == 1 {
		d.Pick, d.Winner = best.V.Name, best.V
		d.Why = "only complete ramp: " + lead + ", p99 " + fmtMS(best.Lat.P99) + " ms" + rk.suffix
		return d
	}
	if len(rk.tied) > 1 {
		tiePick(&d, rk.tied)
		others := make([]string, 0, len(rk.tied)-1)
		for _, g := range rk.tied[1:] {
			others = append(others, other(g))
		}
		d.Why = fmt.Sprintf("%s vs %s: %s apart, noise %s", lead, strings.Join(others, ", "), fmtPct(rk.gap), fmtPct(rk.thr)) + rk.suffix
		return d
	}
	second := rk.ranked[1]
	d.Pick, d.Winner = best.V.Name, best.V
	d.Why = fmt.Sprintf("%s vs %s, p99 there %s ms vs %s ms", lead, other(second), fmtMS(best.Lat.P99), fmtMS(second.Lat.P99)) + rk.suffix
	return d
}

func gapOf(best, g *group) float64 {
	if best.TPS <= 0 {
		return 0
	}
	return (best.TPS - g.TPS) / best.TPS
}

// decisions gives one row per workload with fixed-thread runs, one more per workload with ramp
// runs and one per TPC-H comparison.
func (m *model) decisions() []decision {
	var out []decision
	for _, w := range m.AllWorkloads {
		if len(m.Threads[w]) > 0 {
			t := m.Headline[w]
			var cands []*group
			for _, v := range m.variantsFor(w) {
				if g := m.group(v, w, t); g != nil {
					cands = append(cands, g)
				}
			}
			d := decide(w, t, cands)
			d.Why += busyNote(cands)
			out = append(out, d)
			out = append(out, upgrades(w, t, cands)...)
		}
		if gs := m.rampGroupsFor(w); len(gs) > 0 {
			d := decideRamp(w, gs)
			d.Why += busyNote(gs)
			out = append(out, d)
		}
		for _, s := range m.tpchSetsFor(w) {
			out = append(out, decideTPCH(s))
		}
	}
	return append(out, m.resourceDecisions()...)
}

// busyNote says, beside a pick, which of its runs shared the machine with other work (their
// others' CPU above machineload.BusyPct on average): a pick drawn from them is weak evidence.
func busyNote(cands []*group) string {
	var busy []string
	for _, g := range cands {
		worst := 0.0
		for _, r := range g.Used {
			if r.Machine != nil && r.Machine.Busy {
				worst = max(worst, r.Machine.OthersCPUPctMean)
			}
		}
		if worst > 0 {
			busy = append(busy, fmt.Sprintf("%s %s", g.V.Name, fmtPct(worst/100)))
		}
	}
	if len(busy) == 0 {
		return ""
	}
	return "; ⚠ measured while other processes used the CPU (" + strings.Join(busy, ", ") + " of the machine): weak evidence, rerun on a quiet machine"
}

// upgrades gives, for every engine with two or more releases in the comparison, one row per
// step from an older release to the next newer one: what the upgrade changed on this workload,
// beyond the noise or within it (the same tie rule as the engine picks).
func upgrades(workload string, threads int, cands []*group) []decision {
	var out []decision
	for i, older := range cands {
		for _, newer := range cands[i+1:] {
			if newer.V.Kind != older.V.Kind || newer.V.Label != older.V.Label || newer.V.Engine == older.V.Engine {
				continue
			}
			out = append(out, upgrade(workload, threads, older, newer))
			break // the next step starts from newer
		}
	}
	return out
}

func upgrade(workload string, threads int, older, newer *group) decision {
	d := decision{Workload: workload, Threads: threads,
		UseCase: "Upgrade " + older.V.Name + " → " + newer.V.Name}
	if older.Incomplete || newer.Incomplete || older.TPS <= 0 {
		d.Pick = "not measured (incomplete run)"
		d.Why = "an upgrade is only judged on complete runs of both releases"
		return d
	}
	change := (newer.TPS - older.TPS) / older.TPS
	thr := noise(older, newer)
	figures := fmt.Sprintf("%s TPS vs %s at %s, p95 %s ms vs %s ms", fmtRate(newer.TPS), fmtRate(older.TPS), threadsText(threads),
		fmtMS(newer.Lat.P95), fmtMS(older.Lat.P95))
	sign := "+"
	if change < 0 {
		sign = "−"
	}
	if math.Abs(change) <= thr {
		d.Pick = "no change (within noise)"
		d.Why = fmt.Sprintf("%s: %s%s, noise %s", figures, sign, fmtPct(math.Abs(change)), fmtPct(thr))
		return d
	}
	word := "faster"
	if change < 0 {
		word = "slower"
	}
	d.Pick = fmt.Sprintf("%s%s TPS (%s)", sign, fmtPct(math.Abs(change)), word)
	d.Why = fmt.Sprintf("%s: beyond the noise of %s", figures, fmtPct(thr))
	return d
}
