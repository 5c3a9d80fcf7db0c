package report

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/fairbench/fairbench/internal/interval"
	"github.com/fairbench/fairbench/internal/result"
)

// resourceDecisions adds the rows a resource-minded reader looks for: the smallest memory
// footprint, idle and under load, and per writing workload the fewest disk writes per
// transaction, where the figures were counted by the kernel (cgroup or node_exporter).
func (m *model) resourceDecisions() []decision {
	var out []decision
	idle := m.perVariant(func(a *serverAgg) optFloat { return a.MemIdleMB }, median)
	idleRounds := m.roundFigures(m.Workloads, serverFig(func(s *result.Server) float64 { return s.MemIdleMB }), median)
	if d, ok := m.lowest("Lowest memory footprint, idle", idle, idleRounds, "MB", "median over the workloads, before each run"); ok {
		out = append(out, d)
	}
	load := m.perVariant(func(a *serverAgg) optFloat { return a.MemLoadMB }, maxOf)
	loadRounds := m.roundFigures(m.Workloads, serverFig(memLoadMB), maxOf)
	if d, ok := m.lowest("Lowest memory footprint, under load", load, loadRounds, "MB", "the most charged in any workload"); ok {
		out = append(out, d)
	}
	for _, w := range m.Workloads {
		vals := map[*variant]float64{}
		for _, v := range m.variantsFor(w) {
			g := m.group(v, w, m.Headline[w])
			if g == nil || g.Incomplete || g.Server == nil || !g.Server.DiskWriteOpsPerTxn.OK {
				continue
			}
			vals[v] = g.Server.DiskWriteOpsPerTxn.V
		}
		if maxOf(append(mapValues(vals), 0)) < 0.01 {
			continue // a read-only workload: nothing to tell apart
		}
		rounds := m.roundFigures([]string{w}, deviceFig(func(s *result.Server) float64 { return s.HostPerTxn["disk_write_ops"] }), median)
		if d, ok := m.lowest("Fewest disk writes per txn · "+w, vals, rounds, "writes/txn", "block-device write operations per transaction"); ok {
			d.Workload = w
			out = append(out, d)
		}
	}
	return out
}

func maxOf(vals []float64) float64 {
	m := vals[0]
	for _, v := range vals[1:] {
		m = max(m, v)
	}
	return m
}

// perVariant gathers one figure per engine over the headline groups of every workload.
func (m *model) perVariant(f func(a *serverAgg) optFloat, combine func([]float64) float64) map[*variant]float64 {
	out := map[*variant]float64{}
	for _, v := range m.Variants {
		var vals []float64
		for _, w := range m.Workloads {
			g := m.group(v, w, m.Headline[w])
			if g == nil || g.Incomplete || g.Server == nil {
				continue
			}
			if o := f(g.Server); o.OK {
				vals = append(vals, o.V)
			}
		}
		if len(vals) > 0 {
			out[v] = combine(vals)
		}
	}
	return out
}

// resourceTie is the relative gap below which two memory or write figures tie when there are no
// rounds to measure their noise (one run per engine): the old rule, said so beside the pick.
const resourceTie = 0.05

// lowest picks the smallest value. With two or more rounds per engine (rounds: one figure per
// round) each other engine is judged by the interval of its ratio to the lowest, as the
// throughput picks are: a tie within ±5%, a pick when it excludes 1, undecided otherwise.
// Without rounds, values within resourceTie of the lowest tie. It needs two engines.
func (m *model) lowest(useCase string, vals map[*variant]float64, rounds map[*variant]series, unit, basis string) (decision, bool) {
	d := decision{UseCase: useCase, Workload: useCase, Resource: true}
	if len(vals) < 2 {
		return d, false
	}
	vs := make([]*variant, 0, len(vals))
	for v := range vals {
		vs = append(vs, v)
	}
	// Ranked by the estimator the ratio's interval uses (the rounds' geometric mean) where there
	// are rounds, so the engine named lowest never stands beside a ratio that favours another;
	// the figures shown stay the medians.
	key := func(v *variant) float64 {
		if gm := interval.GeoMean(rounds[v].vals); len(rounds[v].vals) >= 2 && gm > 0 {
			return gm
		}
		return vals[v]
	}
	sort.Slice(vs, func(i, j int) bool {
		if ki, kj := key(vs[i]), key(vs[j]); ki != kj {
			return ki < kj
		}
		return vs[i].Index < vs[j].Index
	})
	parts := make([]string, len(vs))
	for i, v := range vs {
		parts[i] = fmt.Sprintf("%s %s %s", v.Name, fmtSmart(vals[v]), unit)
	}
	d.Why = strings.Join(parts, ", ") + " (" + basis + ")"
	same, open, byRounds := []*variant{vs[0]}, (*variant)(nil), true
	inQuestion := []*variant{vs[0]}
	var runnerUp interval.Ratio // the lowest against the next engine
	for i, v := range vs[1:] {
		// Less is better: judged on the inverses, higher being better, so the ratio of the best's
		// inverse to v's reads "v uses 1.2× what the best does".
		best, other := pairSeries(rounds[vs[0]], rounds[v])
		r, out := judge(m.rule, inverse(best), inverse(other))
		if i == 0 {
			runnerUp = r
		}
		switch out {
		case unconfirmed:
			byRounds = false
			if vals[v] <= vals[vs[0]]*(1+resourceTie) {
				same = append(same, v)
			}
		case tied:
			same = append(same, v)
			if byRounds {
				d.Why += fmt.Sprintf("; %s over %s: %s lies within ±%s (%s, %s)", v.Name, vs[0].Name, r, fmtPct(equivalenceMargin), r.LevelText(), r.Basis())
			}
		case undecided:
			inQuestion = append(inQuestion, v)
			d.OpenRounds = fewestRounds(d.OpenRounds, min(len(best), len(other)))
			if near := r.Nearness(); open == nil || near < d.OpenNearness {
				d.OpenNearness = near
			}
			d.OpenDecide = max(d.OpenDecide, toDecide(m.rule, r))
			if open == nil {
				open = v
				d.Why += fmt.Sprintf("; %s over %s: %s (%s, %s); %s", v.Name, vs[0].Name, r, r.LevelText(), r.Basis(), moreRounds(m.rule, r))
			}
		}
	}
	switch {
	case open != nil && byRounds:
		d.Pick, d.Lead, d.Open = "undecided: "+vs[0].Name+" lowest", vs[0], inQuestion
	case len(same) > 1:
		names := make([]string, len(same))
		for i, v := range same {
			names[i] = v.Name
			d.Tied = append(d.Tied, v)
		}
		slices.Sort(names)
		d.Pick = "tie: " + strings.Join(names, " ≈ ") + map[bool]string{true: " (within ±5%, by rounds)", false: " (within 5%, one run: no interval)"}[byRounds]
	case !byRounds:
		d.Pick, d.Winner = vs[0].Name+" (one run: no interval)", vs[0]
	default:
		// As a throughput pick reads: the lowest, by how much the next engine's figure exceeds
		// its own, and the interval of that ratio.
		r := runnerUp
		d.Pick, d.Winner = fmt.Sprintf("%s, %s, %s", vs[0].Name, r, r.Basis()), vs[0]
		d.Why += fmt.Sprintf("; the ratio is %s's figure over %s's (%s)", vs[1].Name, vs[0].Name, r.LevelText())
	}
	return d, true
}

// inverse gives 1/x of each figure (0 stays 0, which the interval leaves out).
func inverse(xs []float64) []float64 {
	out := make([]float64, len(xs))
	for i, x := range xs {
		if x > 0 {
			out[i] = 1 / x
		}
	}
	return out
}

// series is one figure per round, in round order, with the rounds' numbers (nil where the runs
// record none: then the k-th figure is the k-th run in start order).
type series struct {
	vals   []float64
	rounds []int
}

// roundFigures gives, per variant, one figure per round: f of that round's run of each
// workload's headline group, combined over the workloads. A round that lacks a figure anywhere
// (its run left out, or not measured) is left out.
func (m *model) roundFigures(workloads []string, f func(*result.Result) (float64, bool), combine func([]float64) float64) map[*variant]series {
	out := map[*variant]series{}
	for _, v := range m.Variants {
		var perWorkload [][]*result.Result
		for _, w := range workloads {
			if g := m.group(v, w, m.Headline[w]); g != nil && !g.Incomplete {
				perWorkload = append(perWorkload, result.ByStart(g.Used))
			}
		}
		out[v] = combineRounds(perWorkload, f, combine)
	}
	return out
}

// combineRounds keys each workload's runs by their round (by start order where a run records
// none) and combines, round by round, the figures of the rounds every workload has.
func combineRounds(perWorkload [][]*result.Result, f func(*result.Result) (float64, bool), combine func([]float64) float64) series {
	if len(perWorkload) == 0 {
		return series{}
	}
	numbered := true
	for _, runs := range perWorkload {
		for _, r := range runs {
			numbered = numbered && r.Round > 0
		}
	}
	byRound := make([]map[int]float64, len(perWorkload))
	for i, runs := range perWorkload {
		byRound[i] = map[int]float64{}
		for k, r := range runs {
			key := k + 1
			if numbered {
				key = r.Round
			}
			if x, ok := f(r); ok {
				byRound[i][key] = x
			}
		}
	}
	var s series
	for _, key := range slices.Sorted(maps.Keys(byRound[0])) {
		vals := make([]float64, 0, len(byRound))
		for _, m := range byRound {
			if x, ok := m[key]; ok {
				vals = append(vals, x)
			}
		}
		if len(vals) < len(byRound) {
			continue
		}
		s.vals = append(s.vals, combine(vals))
		if numbered {
			s.rounds = append(s.rounds, key)
		}
	}
	return s
}

func mapValues(m map[*variant]float64) []float64 {
	out := make([]float64, 0, len(m))
	for _, v := range m {
		out = append(out, v)
	}
	return out
}
