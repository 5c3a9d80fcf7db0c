package report

import (
	"fmt"
	"sort"
	"strings"
)

// resourceDecisions adds the rows a resource-minded reader looks for: the smallest memory
// footprint, idle and under load, and per writing workload the fewest disk writes per
// transaction, where the figures were counted by the kernel (cgroup or node_exporter).
func (m *model) resourceDecisions() []decision {
	var out []decision
	idle := m.perVariant(func(a *serverAgg) optFloat { return a.MemIdleMB }, median)
	if d, ok := lowest("Lowest memory footprint, idle", idle, "MB", "median over the workloads, before each run"); ok {
		out = append(out, d)
	}
	load := m.perVariant(func(a *serverAgg) optFloat { return a.MemLoadMB }, maxOf)
	if d, ok := lowest("Lowest memory footprint, under load", load, "MB", "the most charged in any workload"); ok {
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
		if d, ok := lowest("Fewest disk writes per txn · "+w, vals, "writes/txn", "block-device write operations per transaction"); ok {
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

// resourceTie is the relative gap below which two memory or write figures tie. These rows
// summarise one figure over many workloads (a median, or the largest), not repeats of one
// measurement, so no interval of repeats applies; memory charged and write operations per
// transaction also move far less between runs than throughput does.
const resourceTie = 0.05

// lowest picks the smallest value; values within resourceTie of it tie. It needs two engines.
func lowest(useCase string, vals map[*variant]float64, unit, basis string) (decision, bool) {
	d := decision{UseCase: useCase, Workload: useCase, Resource: true}
	if len(vals) < 2 {
		return d, false
	}
	vs := make([]*variant, 0, len(vals))
	for v := range vals {
		vs = append(vs, v)
	}
	sort.Slice(vs, func(i, j int) bool {
		if vals[vs[i]] != vals[vs[j]] {
			return vals[vs[i]] < vals[vs[j]]
		}
		return vs[i].Index < vs[j].Index
	})
	best := vals[vs[0]]
	var tied []*variant
	for _, v := range vs {
		if vals[v] <= best*(1+resourceTie) {
			tied = append(tied, v)
		}
	}
	parts := make([]string, len(vs))
	for i, v := range vs {
		parts[i] = fmt.Sprintf("%s %s %s", v.Name, fmtSmart(vals[v]), unit)
	}
	d.Why = strings.Join(parts, ", ") + " (" + basis + ")"
	if len(tied) > 1 {
		names := make([]string, len(tied))
		for i, v := range tied {
			names[i] = v.Name
			d.Tied = append(d.Tied, v)
		}
		d.Pick = "tie: " + strings.Join(names, " ≈ ") + " (within 5%)"
		return d, true
	}
	d.Pick, d.Winner = vs[0].Name, vs[0]
	return d, true
}

func mapValues(m map[*variant]float64) []float64 {
	out := make([]float64, 0, len(m))
	for _, v := range m {
		out = append(out, v)
	}
	return out
}
