package report

import (
	"errors"
	"fmt"
	"html/template"
	"maps"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/fairbench/fairbench/internal/document"
	"github.com/fairbench/fairbench/internal/result"
)

func build(in *Input) (*document.Doc, error) {
	if in == nil {
		return nil, errors.New("report: no input")
	}
	m := newModel(in)
	if len(m.Results) == 0 {
		return nil, errors.New("report: no results to report on")
	}
	d := &document.Doc{}
	for _, v := range m.Variants {
		d.Legend = append(d.Legend, document.Swatch{Name: v.Name, Color: colorOf(v)})
	}
	names := make([]string, len(m.Variants))
	for i, v := range m.Variants {
		names[i] = v.Name
	}
	d.Title = "fairbench report: " + strings.Join(names, " vs ")
	d.Date = reportDate(m.Results)
	d.Summary = m.summary()

	// The answer first: the picks and the headline chart, then the audit of the terms they
	// were measured on.
	d.Sections = append(d.Sections, m.decisionSection(), m.paritySection())
	if s := m.capacitySection(); s != nil {
		d.Sections = append(d.Sections, s)
	}
	if s := m.resultsSection(); s != nil {
		d.Sections = append(d.Sections, s)
	}
	d.Sections = append(d.Sections, m.chartsSection())
	if s := m.scalabilitySection(); s != nil {
		d.Sections = append(d.Sections, s)
	}
	if s := m.saturationSection(); s != nil {
		d.Sections = append(d.Sections, s)
	}
	if s := m.tpchSection(); s != nil {
		d.Sections = append(d.Sections, s)
	}
	if s := m.waitsSection(); s != nil {
		d.Sections = append(d.Sections, s)
	}
	if s := m.plansSection(); s != nil {
		d.Sections = append(d.Sections, s)
	}
	if s := m.capturedSection(); s != nil {
		d.Sections = append(d.Sections, s)
	}
	if s := m.clientStatementsSection(); s != nil {
		d.Sections = append(d.Sections, s)
	}
	if s := m.statementsSection(); s != nil {
		d.Sections = append(d.Sections, s)
	}
	if s := m.serverSection(); s != nil {
		d.Sections = append(d.Sections, s)
	}
	if s := m.availabilitySection(); s != nil {
		d.Sections = append(d.Sections, s)
	}
	if s := m.clusterSection(); s != nil {
		d.Sections = append(d.Sections, s)
	}
	if s := m.shardsSection(); s != nil {
		d.Sections = append(d.Sections, s)
	}
	if s := m.networkSection(); s != nil {
		d.Sections = append(d.Sections, s)
	}
	if s := m.spreadSection(); s != nil {
		d.Sections = append(d.Sections, s)
	}
	if s := m.knobSection(); s != nil {
		d.Sections = append(d.Sections, s)
	}
	d.Sections = append(d.Sections, m.fairnessSection(), m.environmentSection(), m.notesSection(), m.runsSection(), m.reproduceSection())
	var kept []*document.Section
	for _, s := range d.Sections {
		if s != nil {
			kept = append(kept, s)
		}
	}
	d.Sections = kept
	return d, nil
}

// reportDate is the start of the earliest run, so rendering the same results twice gives the
// same report.
func reportDate(rs []*result.Result) string {
	var first time.Time
	for _, r := range rs {
		if !r.StartedAt.IsZero() && (first.IsZero() || r.StartedAt.Before(first)) {
			first = r.StartedAt
		}
	}
	if first.IsZero() {
		return "unknown date"
	}
	return first.UTC().Format("2006-01-02 15:04 UTC")
}

func (m *model) summary() string {
	var engines []string
	for _, v := range m.Variants {
		s := v.Name
		if sv := result.VersionNumber(v.Version); sv != "" {
			s += " " + sv
		}
		switch {
		case v.Build != "":
			s += " (a build from " + v.Build + ")"
		case v.AsConfigured:
			s += " (your server, as its owner configured it)"
		}
		engines = append(engines, s)
	}
	// Ramp runs have no one thread count or measured duration to state; they get a sentence of
	// their own.
	// TPC-H runs neither: their tests are described by mode and scale factor.
	var fixed []*result.Result
	for _, r := range m.Results {
		if r.Ramp == nil && r.TPCH == nil {
			fixed = append(fixed, r)
		}
	}
	ramps := m.rampSettings(m.RampWorkloads)
	tpch := m.tpchSummary()
	if len(fixed) == 0 {
		var parts []string
		if len(m.RampWorkloads) > 0 {
			parts = append(parts, fmt.Sprintf("on %s in ramp runs: %s", joinAnd(m.RampWorkloads), strings.Join(ramps, "; ")))
		}
		if len(tpch) > 0 {
			parts = append(parts, "in the "+joinAnd(tpch))
		}
		return fmt.Sprintf("Compared %s %s.", joinAnd(engines), strings.Join(parts, "; "))
	}
	threads := map[int]bool{}
	durations := map[float64]bool{}
	warmups := map[float64]bool{}
	maxRepeats := 1
	openLoop := false
	anyComplete := false
	for _, r := range fixed {
		anyComplete = anyComplete || r.Complete
	}
	for _, r := range fixed {
		threads[r.Threads] = true
		openLoop = openLoop || r.Rate > 0
		// An aborted run's short duration is not what the comparison planned to measure.
		if r.Complete || !anyComplete {
			durations[r.DurationS] = true
			warmups[r.WarmupS] = true
		}
	}
	for _, g := range m.groups {
		if len(g.Runs) > maxRepeats {
			maxRepeats = len(g.Runs)
		}
	}
	var ts []string
	for _, t := range sortedKeys(threads) {
		ts = append(ts, fmtInt(int64(t)))
	}
	thr := joinAnd(ts) + " thread"
	if len(ts) > 1 || ts[0] != "1" {
		thr += "s"
	}
	s := fmt.Sprintf("Compared %s on %s at %s, %s measured per run", joinAnd(engines), joinAnd(m.Workloads), thr, rangeSeconds(durations))
	if w := rangeSeconds(warmups); w != "0 s" {
		s += " after " + w + " warm-up"
	}
	if maxRepeats > 1 {
		s += fmt.Sprintf(", up to %d repeats per measurement", maxRepeats)
	}
	if openLoop {
		s += ", open loop (fixed arrival rate)"
	}
	s += "."
	if len(ramps) > 0 {
		s += " Ramp runs on " + joinAnd(m.RampWorkloads) + ": " + strings.Join(ramps, "; ") + "."
	}
	if len(tpch) > 0 {
		s += " Analytical queries: " + joinAnd(tpch) + "."
	}
	return s
}

// rampDesc states how a ramp was run.
func rampDesc(rp *result.Ramp) string {
	s := ""
	if len(rp.Steps) > 0 {
		s = "from " + threadsText(rp.Steps[0].Threads) + ", "
	}
	s += fmt.Sprintf("adding %s every %s up to %s", fmtInt(int64(rp.Add)), fmtSeconds(rp.EveryS), fmtInt(int64(rp.Max)))
	if rp.SLOMS > 0 {
		s += ", p99 SLO " + fmtTrim(rp.SLOMS) + " ms"
	}
	if rp.Stages {
		s = "stages " + s + fmt.Sprintf(", each request after a random %s-%s ms delay (not in the latency), the clients sharing %s pooled connections (the wait for one is in the latency); saturation: the last stage whose client still raised throughput by 2%%",
			fmtTrim(rp.DelayMinMS), fmtTrim(rp.DelayMaxMS), fmtInt(int64(rp.Pool)))
	}
	return s
}

// rampSettings describes the ramps of the given workloads: one description when every ramp was
// run alike, else one per engine (and workload, when there are several).
func (m *model) rampSettings(workloads []string) []string {
	type item struct{ who, desc string }
	var items []item
	seen := map[item]bool{}
	descs := map[string]bool{}
	for _, w := range workloads {
		for _, g := range m.rampGroupsFor(w) {
			who := g.V.Name
			if len(m.RampWorkloads) > 1 && len(workloads) > 1 {
				who += ", " + w
			}
			for _, r := range g.Used {
				it := item{who, rampDesc(r.Ramp)}
				descs[it.desc] = true
				if !seen[it] {
					seen[it] = true
					items = append(items, it)
				}
			}
		}
	}
	if len(descs) == 1 {
		return []string{items[0].desc}
	}
	out := make([]string, len(items))
	for i, it := range items {
		out[i] = it.who + ": " + it.desc
	}
	return out
}

func rangeSeconds(set map[float64]bool) string {
	var vs []float64
	for v := range set {
		vs = append(vs, v)
	}
	sort.Float64s(vs)
	// Measured windows differ by microseconds; they are one duration when they print the same.
	if len(vs) == 1 || fmtSeconds(vs[0]) == fmtSeconds(vs[len(vs)-1]) {
		return fmtSeconds(vs[0])
	}
	return strings.TrimSuffix(fmtSeconds(vs[0]), " s") + "–" + fmtSeconds(vs[len(vs)-1])
}

func sortedKeys(set map[int]bool) []int { return slices.Sorted(maps.Keys(set)) }

func threadsText(n int) string {
	if n == 1 {
		return "1 thread"
	}
	return fmtInt(int64(n)) + " threads"
}

func (m *model) decisionSection() *document.Section {
	t := &document.Table{Header: []string{"Use case", "Best pick", "Why"}}
	anyRamp, anyOLTP, anyTPCH, anyResource, anyCapacity := false, false, false, false, false
	decisions := m.decisions()
	for _, d := range decisions {
		anyCapacity = anyCapacity || d.Capacity
		anyRamp = anyRamp || d.Ramp
		anyTPCH = anyTPCH || d.TPCH
		anyOLTP = anyOLTP || (!d.TPCH && !d.Resource && !d.Capacity)
		anyResource = anyResource || d.Resource
		uc := d.UseCase
		switch {
		case d.TPCH, d.Resource, d.Capacity:
		case d.Ramp && uc == strings.TrimSuffix(d.Workload, " (ramp)"):
			uc = d.Workload
		case uc != d.Workload:
			uc += " · " + d.Workload
		}
		pick := d.Pick
		if d.Winner != nil || d.Lead != nil || len(d.Tied) > 0 {
			pick += m.pickCaveat(d)
		}
		t.Rows = append(t.Rows, []document.Cell{{Text: uc, Head: true}, {Text: pick, Best: d.Winner != nil}, {Text: d.Why}})
	}
	if anyOLTP {
		t.Foot = append(t.Foot, "Best pick is the highest throughput at the thread count every engine ran (ranked by the geometric mean over the rounds, the estimator of the ratio, so the engine named leads by a ratio of at least 1; the tables show medians), with the ratio of its throughput to the runner-up's and that ratio's interval from the repeats (Student's t on the logs of each round's ratio). A tie is an interval within ±5% (shown equal, for any practical purpose); an interval that includes 1 but reaches further is undecided (neither faster nor equal is shown: more rounds would decide, and the row says about how many in all would, at the spread its rounds showed and if the ratio holds); a single run measures no noise, so its lead stays unconfirmed. Incomplete runs are never picked.")
	}
	if r := m.roundsText(); r != "" {
		t.Foot = append(t.Foot, r)
	}
	if anyCapacity {
		t.Foot = append(t.Foot, "Capacity rows pick the engine that carried the highest arrival rate within the latency objective (median of the rounds' searches), with the ratio to the runner-up's and its 95% interval from the rounds, by the same tie and undecided rules; an engine whose search found only a lower bound (every rate passed, or the client could not offer more) is named but not ranked. What gave way is the first rate past the capacity: the objective's failure and what the server was busy with there.")
	}
	if anyTPCH {
		t.Foot = append(t.Foot, "Analytics rows pick the lowest TPC-H geometric mean (throughput test: the most queries per hour) among engines that answered every query correctly: an engine with a wrong answer, a timeout or an error is never picked, however fast. The speed ratio's 95% interval from the repeats decides, as for the other picks.")
	}
	if anyResource {
		t.Foot = append(t.Foot, "Memory rows pick the smallest memory the kernel charged the server's cgroup (shared buffers counted once); disk rows the fewest block-device write operations per transaction. With rounds they are judged as the throughput picks are, lower being better: the ratio is the next engine's figure over the lowest's, with its interval from the rounds (paired by round; a memory row combines the workloads within each round) and the same tie, undecided and sequential rules; a disk row still open gets more rounds with its workload's step, a memory row does not (it would need every workload again). From a single run a gap below 5% counts as a tie, said so beside the pick. Incomplete runs are left out.")
	}
	if anyRamp {
		t.Foot = append(t.Foot, "Rows marked (ramp) rank each engine's ramp by its throughput at its own saturation point, whatever the thread count there, with the same tie rule; ramps are never compared with fixed-thread runs.")
	}
	s := &document.Section{ID: "decision", Heading: "Quick decision", Paras: m.decidingDifferences(decisions), Tables: []*document.Table{t}}
	if svg, err := m.headlineChart(); err != nil {
		s.Paras = append(s.Paras, "headline chart not drawn: "+err.Error())
	} else if svg != "" {
		s.Figures = []document.FigGroup{{Figures: []document.Figure{{Title: "Each engine against the best", SVG: svg}}, Wide: true}}
	}
	return s
}

// metricRow describes one row of a per-workload block in a table with engines as columns.
type metricRow struct {
	Name         string
	HigherBetter bool
	NoBest       bool
	Value        func(g *group) (float64, bool)
	Format       func(float64) string
}

func (m *model) engineHeader(first ...string) ([]string, []bool) {
	h := append([]string(nil), first...)
	num := make([]bool, len(first))
	for _, v := range m.Variants {
		h = append(h, v.Name)
		num = append(num, true)
	}
	return h, num
}

// blockRows renders the rows of one workload: one row per metric, one column per engine, the
// best complete value in each row marked.
func (m *model) blockRows(label string, groups []*group, rows []metricRow, markIncomplete bool) [][]document.Cell {
	var out [][]document.Cell
	for ri, mr := range rows {
		vals := make([]float64, len(groups))
		ok := make([]bool, len(groups))
		for i, g := range groups {
			if g != nil {
				vals[i], ok[i] = mr.Value(g)
			}
		}
		if !anyTrue(ok) {
			continue
		}
		best := map[int]bool{}
		if !mr.NoBest {
			best = bestOf(groups, vals, ok, mr.HigherBetter)
		}
		first := ""
		if len(out) == 0 {
			first = label
		}
		row := []document.Cell{{Text: first, Head: true}, {Text: mr.Name}}
		for i, g := range groups {
			c := document.Cell{Text: "—"}
			if ok[i] {
				c = document.Cell{Text: mr.Format(vals[i]), Best: best[i], Incomplete: g.Incomplete}
				if g.Incomplete && markIncomplete && ri == 0 {
					c.Text += " (incomplete)"
				}
			}
			row = append(row, c)
		}
		out = append(out, row)
	}
	return out
}

func anyTrue(bs []bool) bool {
	for _, b := range bs {
		if b {
			return true
		}
	}
	return false
}

// bestOf marks the best complete values; nothing is marked when fewer than two engines compete
// or all are equal, since a mark would then carry no information.
func bestOf(groups []*group, vals []float64, ok []bool, higher bool) map[int]bool {
	var idx []int
	for i := range vals {
		if ok[i] && !groups[i].Incomplete {
			idx = append(idx, i)
		}
	}
	if len(idx) < 2 {
		return nil
	}
	bestV := vals[idx[0]]
	allEqual := true
	for _, i := range idx[1:] {
		if vals[i] != bestV {
			allEqual = false
		}
		if (higher && vals[i] > bestV) || (!higher && vals[i] < bestV) {
			bestV = vals[i]
		}
	}
	if allEqual {
		return nil
	}
	out := map[int]bool{}
	for _, i := range idx {
		if vals[i] == bestV {
			out[i] = true
		}
	}
	return out
}

func always(f func(g *group) float64) func(g *group) (float64, bool) {
	return func(g *group) (float64, bool) { return f(g), true }
}

var resultRows = []metricRow{
	{Name: "TPS", HigherBetter: true, Value: always(func(g *group) float64 { return g.TPS }), Format: fmtRate},
	{Name: "QPS", HigherBetter: true, Value: always(func(g *group) float64 { return g.QPS }), Format: fmtRate},
	{Name: "avg latency ms", Value: always(func(g *group) float64 { return g.Lat.Avg }), Format: fmtMS},
	{Name: "p95 ms", Value: always(func(g *group) float64 { return g.Lat.P95 }), Format: fmtMS},
	{Name: "p99 ms", Value: always(func(g *group) float64 { return g.Lat.P99 }), Format: fmtMS},
	{Name: "errors", Value: always(func(g *group) float64 { return float64(g.Errors) }), Format: func(v float64) string { return fmtInt(int64(v)) }},
	{Name: "retries", Value: always(func(g *group) float64 { return float64(g.Retries) }), Format: func(v float64) string { return fmtInt(int64(v)) }},
	// Open loop only: how late fairbench itself started transactions after their arrival, so a
	// reader can see how much of the latency is the harness's rather than the server's.
	{Name: "schedule lag p50 µs", NoBest: true, Value: scheduleLag(func(l *result.Latency) float64 { return l.P50 }), Format: fmtMicros},
	{Name: "schedule lag p99 µs", NoBest: true, Value: scheduleLag(func(l *result.Latency) float64 { return l.P99 }), Format: fmtMicros},
}

// fmtMicros shows milliseconds as whole microseconds: a precise pacer's lag is a few of them.
func fmtMicros(ms float64) string { return fmtInt(int64(ms*1000 + 0.5)) }

// scheduleLag reads a figure of the representative run's schedule lag, where it has one.
func scheduleLag(f func(l *result.Latency) float64) func(g *group) (float64, bool) {
	return func(g *group) (float64, bool) {
		if g.Rep == nil || g.Rep.ScheduleLagMS == nil {
			return 0, false
		}
		return f(g.Rep.ScheduleLagMS), true
	}
}

func (m *model) headlineGroups(w string) []*group {
	gs := make([]*group, len(m.Variants))
	for i, v := range m.Variants {
		gs[i] = m.group(v, w, m.Headline[w])
	}
	return gs
}

func (m *model) resultsSection() *document.Section {
	if len(m.Workloads) == 0 {
		return nil // ramp runs only: the Saturation section has them
	}
	h, num := m.engineHeader("Workload", "Metric")
	num[0], num[1] = false, false
	t := &document.Table{Header: h, Numeric: num}
	anyIncomplete, anyRepeats := false, false
	for _, w := range m.Workloads {
		gs := m.headlineGroups(w)
		t.Rows = append(t.Rows, m.blockRows(w+", "+threadsText(m.Headline[w]), gs, resultRows, true)...)
		for _, g := range gs {
			if g != nil {
				anyIncomplete = anyIncomplete || g.Incomplete
				anyRepeats = anyRepeats || len(g.Used) > 1
			}
		}
	}
	t.Foot = append(t.Foot, "Bold: best in the row among complete results (higher is better for TPS and QPS, lower for latency, errors and retries).")
	if anyRepeats {
		t.Foot = append(t.Foot, "With repeats, TPS, QPS and latencies are medians over the repeats; errors and retries are totals.")
	}
	if anyIncomplete {
		t.Foot = append(t.Foot, "(incomplete): no run of this engine and workload finished; its figures are shown for information and never ranked.")
	}
	for _, w := range m.Workloads {
		if len(m.Threads[w]) > 1 {
			t.Foot = append(t.Foot, "Figures are at the largest thread count every engine ran; the Scalability section has the others.")
			break
		}
	}
	if len(m.RampWorkloads) > 0 {
		t.Foot = append(t.Foot, "Ramp runs are not in this table: the Saturation (ramp) section has them.")
	}
	return &document.Section{ID: "results", Heading: "Results", Tables: []*document.Table{t}}
}

// clientCPUCell is the client's own CPU per transaction of a sweep point, "—" where the results
// do not say.
func clientCPUCell(g *group) document.Cell {
	if g.Server == nil || !g.Server.ClientCPUUsPerTxn.OK {
		return document.Cell{Text: "—"}
	}
	return document.Cell{Text: fmtSmart(g.Server.ClientCPUUsPerTxn.V), Incomplete: g.Incomplete}
}

func (m *model) scalabilitySection() *document.Section {
	s := &document.Section{ID: "scalability", Heading: "Scalability"}
	var figs []document.Figure
	for _, w := range m.Workloads {
		if !m.sweep(w) {
			continue
		}
		vs := m.variantsFor(w)
		t := &document.Table{Caption: w, Header: []string{"Threads"}, Numeric: []bool{true}}
		for _, v := range vs {
			t.Header = append(t.Header, v.Name+" TPS", v.Name+" p95 ms", v.Name+" client CPU µs/txn")
			t.Numeric = append(t.Numeric, true, true, true)
		}
		for _, th := range m.Threads[w] {
			gs := make([]*group, len(vs))
			tps := make([]float64, len(vs))
			p95 := make([]float64, len(vs))
			ok := make([]bool, len(vs))
			for i, v := range vs {
				if g := m.group(v, w, th); g != nil {
					gs[i], tps[i], p95[i], ok[i] = g, g.TPS, g.Lat.P95, true
				}
			}
			bt := bestOf(gs, tps, ok, true)
			bp := bestOf(gs, p95, ok, false)
			row := []document.Cell{{Text: fmtInt(int64(th)), Head: true}}
			for i, g := range gs {
				if g == nil {
					row = append(row, document.Cell{Text: "—"}, document.Cell{Text: "—"}, document.Cell{Text: "—"})
					continue
				}
				tc := document.Cell{Text: fmtRate(g.TPS), Best: bt[i], Incomplete: g.Incomplete}
				if g.Incomplete {
					tc.Text += " (incomplete)"
				}
				row = append(row, tc, document.Cell{Text: fmtMS(g.Lat.P95), Best: bp[i], Incomplete: g.Incomplete}, clientCPUCell(g))
			}
			t.Rows = append(t.Rows, row)
		}
		t.Foot = append(t.Foot, "Client CPU µs/txn: fairbench's own CPU time (user + system) per transaction at that point; where it grows with threads while TPS stops rising, the client, not the server, may be the limit.")
		s.Tables = append(s.Tables, t)
		svg, err := scalabilityChart(m, w)
		switch {
		case err != nil:
			s.Paras = append(s.Paras, fmt.Sprintf("%s: TPS by thread count: chart not drawn: %v", w, err))
		case svg != "":
			figs = append(figs, document.Figure{Title: w + ": TPS by thread count", SVG: svg})
		}
	}
	if len(s.Tables) == 0 {
		return nil
	}
	if len(figs) > 0 {
		s.Figures = []document.FigGroup{{Figures: figs}}
	}
	return s
}

// saturationSection shows each ramp step by step: one table per workload with a row per thread
// count the ramps ran, each engine's saturation step marked, and a line per engine saying where
// it saturated and why its ramp stopped.
func (m *model) saturationSection() *document.Section {
	if len(m.RampWorkloads) == 0 {
		return nil
	}
	s := &document.Section{ID: "saturation", Heading: "Saturation (ramp)"}
	for _, w := range m.RampWorkloads {
		gs := m.rampGroupsFor(w)
		t := &document.Table{Caption: w, Header: []string{"Threads"}, Numeric: []bool{true}}
		steps := map[int]bool{}
		anyRepeats, anyIncomplete := false, false
		for _, g := range gs {
			t.Header = append(t.Header, g.V.Name+" TPS", g.V.Name+" p99 ms")
			t.Numeric = append(t.Numeric, true, true)
			for _, st := range g.Ramp.Steps {
				steps[st.Threads] = true
			}
			anyRepeats = anyRepeats || len(g.Runs) > 1
			anyIncomplete = anyIncomplete || g.Incomplete
		}
		for _, th := range sortedKeys(steps) {
			row := []document.Cell{{Text: fmtInt(int64(th)), Head: true}}
			for _, g := range gs {
				st, ok := rampStep(g.Ramp, th)
				if !ok {
					row = append(row, document.Cell{Text: "—"}, document.Cell{Text: "—"})
					continue
				}
				sat := th == g.Ramp.SaturationThreads
				row = append(row,
					document.Cell{Text: fmtRate(st.TPS), Saturation: sat, Incomplete: g.Incomplete},
					document.Cell{Text: fmtMS(st.P99MS), Saturation: sat, Incomplete: g.Incomplete})
			}
			t.Rows = append(t.Rows, row)
		}
		for _, g := range gs {
			t.Foot = append(t.Foot, saturationLine(g))
		}
		for _, d := range m.rampSettings([]string{w}) {
			t.Foot = append(t.Foot, "Ramp: "+d+".")
		}
		if slices.ContainsFunc(gs, func(g *group) bool { return g.Ramp.Stages }) {
			t.Foot = append(t.Foot, "Bold: each engine's saturation step; in a stage ramp, the last stage whose added client still raised throughput, after which throughput stopped following the clients and p99 bent.")
		} else {
			t.Foot = append(t.Foot, "Bold: each engine's saturation step, the highest throughput before the latency knee (within the SLO where one was set).")
		}
		if anyRepeats {
			t.Foot = append(t.Foot, "With repeated ramps, the steps are those of the ramp nearest the median saturation throughput, which is the figure given and ranked.")
		}
		if anyIncomplete {
			t.Foot = append(t.Foot, "(incomplete): no ramp of this engine finished; its steps are shown for information and never ranked.")
		}
		s.Tables = append(s.Tables, t)

		fg := document.FigGroup{Title: w}
		for _, c := range rampCharts(gs) {
			svg, err := rampChart(gs, w+": "+c.title+" (ramp)", c.yName, c.f, c.slo)
			switch {
			case err != nil:
				s.Paras = append(s.Paras, fmt.Sprintf("%s: %s: chart not drawn: %v", w, c.title, err))
			case svg != "":
				fg.Figures = append(fg.Figures, document.Figure{Title: c.title + ", saturation point circled", SVG: svg})
			}
		}
		if len(fg.Figures) > 0 {
			s.Figures = append(s.Figures, fg)
		}
	}
	return s
}

// rampChartSpec is one chart of the saturation section.
type rampChartSpec struct {
	title, yName string
	f            func(*group, result.RampStep) float64
	slo          bool
}

// rampCharts lists the saturation section's charts: throughput and p99 by threads, and for stage
// ramps (the ingest/join study's load) the server's side as that study drew it: CPU, memory,
// disk write operations and the pool's connections in use, each by clients.
func rampCharts(gs []*group) []rampChartSpec {
	out := []rampChartSpec{
		{"TPS by threads", "TPS", func(_ *group, st result.RampStep) float64 { return st.TPS }, false},
		{"p99 latency by threads", "p99 ms", func(_ *group, st result.RampStep) float64 { return st.P99MS }, true},
	}
	if !slices.ContainsFunc(gs, func(g *group) bool { return g != nil && g.Ramp != nil && g.Ramp.Stages }) {
		return out
	}
	byStep := func(f func(result.Interval) float64, perSecond bool) func(*group, result.RampStep) float64 {
		return func(g *group, st result.RampStep) float64 { return stepRate(g, st.Threads, f, perSecond) }
	}
	return append(out,
		rampChartSpec{"QPS by clients", "QPS", byStep(func(iv result.Interval) float64 { return iv.QPS }, false), false},
		rampChartSpec{"server CPU % by clients", "server CPU %", byStep(func(iv result.Interval) float64 { return iv.ServerCPUPct }, false), false},
		rampChartSpec{"server memory by clients", "server memory MB", byStep(func(iv result.Interval) float64 { return iv.ServerMemMB }, false), false},
		rampChartSpec{"disk write operations by clients", "disk write ops/s", byStep(func(iv result.Interval) float64 { return float64(iv.ServerDiskWriteOps) }, true), false},
		rampChartSpec{"pooled connections in use by clients", "connections in use", byStep(func(iv result.Interval) float64 { return float64(iv.ConnsInUse) }, false), false})
}

// saturationLine says where one engine's ramp saturated and why it stopped:
// "postgres: saturates at 12 threads, 3,456 TPS (stopped: p99 above SLO 50 ms)".
func saturationLine(g *group) string {
	name := g.V.Name
	if g.Incomplete {
		name += " (incomplete)"
	}
	var s string
	if g.Ramp.SaturationThreads > 0 {
		s = fmt.Sprintf("%s: saturates at %s, %s TPS", name, threadsText(g.Ramp.SaturationThreads), fmtRate(g.Ramp.SaturationTPS))
	} else {
		s = name + ": no saturation point recorded"
	}
	if n := len(g.Used); n > 1 {
		s += fmt.Sprintf(", median of %d ramps %s TPS", n, fmtRate(g.TPS))
	}
	if why := stoppedText(g.Ramp); why != "" {
		s += " (stopped: " + why + ")"
	}
	if g.Incomplete && g.Rep.Error != "" {
		s += ": " + g.Rep.Error
	}
	return s
}

// stoppedText is why a ramp stopped, with the limit that stopped it.
func stoppedText(rp *result.Ramp) string {
	why := rp.StoppedBecause
	switch {
	case why == "":
		return ""
	case strings.Contains(why, "SLO") && rp.SLOMS > 0:
		return why + " " + fmtTrim(rp.SLOMS) + " ms"
	case why == "max threads" && rp.Max > 0:
		return why + " " + fmtInt(int64(rp.Max))
	}
	return why
}

// undercountedDisk names the engines with a run whose disk figures missed writes.
func (m *model) undercountedDisk() []string {
	var out []string
	for _, v := range m.Variants {
		for _, r := range m.Results {
			if r.Server != nil && r.Server.DiskUndercounted && m.variantOf(r) == v {
				out = append(out, v.Name)
				break
			}
		}
	}
	return out
}

// sourcesText names where each engine's memory and disk figures came from.
func (m *model) sourcesText() string {
	var parts []string
	for _, v := range m.Variants {
		var mem, disk []string
		for _, w := range m.Workloads {
			if g := m.group(v, w, m.Headline[w]); g != nil && g.Server != nil {
				for _, s := range g.Server.MemorySources {
					mem = addSource(mem, s)
				}
				for _, s := range g.Server.DiskSources {
					disk = addSource(disk, s)
				}
			}
		}
		if len(mem)+len(disk) > 0 {
			parts = append(parts, fmt.Sprintf("%s: memory from %s, disk from %s", v.Name, orDash(strings.Join(mem, ", ")), orDash(strings.Join(disk, ", "))))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return " Sources: " + strings.Join(parts, "; ") + "."
}

func (m *model) serverSection() *document.Section {
	opt := func(f func(a *serverAgg) optFloat) func(g *group) (float64, bool) {
		return func(g *group) (float64, bool) {
			o := f(g.Server)
			return o.V, o.OK
		}
	}
	base := []metricRow{
		{Name: "server CPU % (of machine)", NoBest: true, Value: opt(func(a *serverAgg) optFloat { return a.CPUPct }), Format: func(v float64) string { return document.Fixed(v, 1) }},
		{Name: "memory idle MB", NoBest: true, Value: opt(func(a *serverAgg) optFloat { return a.MemIdleMB }), Format: fmtSmart},
		{Name: "memory under load MB", NoBest: true, Value: opt(func(a *serverAgg) optFloat { return a.MemLoadMB }), Format: fmtSmart},
		{Name: "· anonymous MB", NoBest: true, Value: opt(func(a *serverAgg) optFloat { return a.MemAnonLoadMB }), Format: fmtSmart},
		{Name: "· page cache + shared MB", NoBest: true, Value: opt(func(a *serverAgg) optFloat { return a.MemCacheLoadMB }), Format: fmtSmart},
		{Name: "disk read MB", NoBest: true, Value: opt(func(a *serverAgg) optFloat { return a.DiskReadMB }), Format: fmtSmart},
		{Name: "disk write MB", NoBest: true, Value: opt(func(a *serverAgg) optFloat { return a.DiskWriteMB }), Format: fmtSmart},
		{Name: "disk reads (ops)", NoBest: true, Value: opt(func(a *serverAgg) optFloat { return a.DiskReadOps }), Format: fmtSmart},
		{Name: "disk writes (ops)", NoBest: true, Value: opt(func(a *serverAgg) optFloat { return a.DiskWriteOps }), Format: fmtSmart},
		{Name: "disk write KB per txn", NoBest: true, Value: opt(func(a *serverAgg) optFloat { return a.DiskWriteKBPerTxn }), Format: fmtSmart},
		{Name: "disk writes per txn", NoBest: true, Value: opt(func(a *serverAgg) optFloat { return a.DiskWriteOpsPerTxn }), Format: fmtSmart},
		{Name: "data directory MB on disk", NoBest: true, Value: opt(func(a *serverAgg) optFloat { return a.DataDirMB }), Format: fmtSmart},
		{Name: "data size MB", NoBest: true, Value: opt(func(a *serverAgg) optFloat { return a.DataSizeMB }), Format: fmtSmart},
		{Name: "client CPU µs per txn", NoBest: true, Value: opt(func(a *serverAgg) optFloat { return a.ClientCPUUsPerTxn }), Format: fmtSmart},
	}
	h, num := m.engineHeader("Workload", "Metric")
	num[0], num[1] = false, false
	t := &document.Table{Header: h, Numeric: num}
	hasServer, dataWritten := false, false
	for _, w := range m.Workloads {
		gs := m.headlineGroups(w)
		keys := map[string]bool{}
		for _, g := range gs {
			if g == nil {
				continue
			}
			for _, r := range g.Used {
				hasServer = hasServer || r.Server != nil
			}
			for k := range g.Server.PerTxn {
				keys[k] = true
				dataWritten = dataWritten || k == "innodb_data_written"
			}
		}
		rows := append([]metricRow(nil), base...)
		for _, k := range sortedStrings(keys) {
			k := k
			rows = append(rows, metricRow{Name: k + " per txn", NoBest: true, Format: fmtSmart, Value: func(g *group) (float64, bool) {
				v, ok := g.Server.PerTxn[k]
				return v, ok
			}})
		}
		t.Rows = append(t.Rows, m.blockRows(w+", "+threadsText(m.Headline[w]), gs, rows, false)...)
	}
	if !hasServer || len(t.Rows) == 0 {
		return nil
	}
	t.Foot = []string{
		"Server CPU % is of the whole machine over the measured run; MB are 2^20 bytes; per-txn counters are engine counter deltas divided by transactions. Host figures need a server fairbench started itself (or --node-exporter); — means not measured.",
		"Memory is what the kernel charges the server's cgroup (shared memory such as PostgreSQL's shared_buffers counted once): idle before the run, and the most seen under load; where a server had no cgroup, under load is the PSS sum of its processes. Disk figures are block I/O at the data directory's device, bytes and operations. From a block device of the server's own (compare --device) they are the device's own counters, every write included; from a cgroup they are what the server's processes issue (O_DIRECT and fsync-driven writes, which is how the engines make commits durable) and a lower bound where the source says so: writes the kernel makes later on a server's behalf (background writeback on cgroup v1, the filesystem journal) are charged to no cgroup (bench/disk-truth.sh)." + m.sourcesText(),
	}
	if names := m.undercountedDisk(); len(names) > 0 {
		t.Foot = append(t.Foot, "Disk rows of "+strings.Join(names, ", ")+" are left out (—): the cgroup counted fewer bytes written than the engine's own WAL/redo counter, so the kernel made part of the writes for no cgroup (see disk_source in the results).")
	}
	if agg := m.aggregates(); agg != "" {
		t.Foot = append(t.Foot, "Clusters: "+agg+": CPU, memory, disk, data directory and counters summed over the nodes (each applies every write), the data size one copy's; the Clusters section has each node's own.")
	}
	if dataWritten {
		t.Foot = append(t.Foot, "innodb_data_written is not one figure across engines: MySQL counts its redo log writes in it, MariaDB only data-file writes (page flushes, doublewrite), which a short run may not have at all (its page cleaner stays idle below 90% dirty pages); disk write KB per txn is the comparable figure.")
	}
	if na := m.notAvailable(); len(na) > 0 {
		t.Foot = append(t.Foot, "Not available (the server could not give them, so — above): "+strings.Join(na, "; ")+".")
	}
	return &document.Section{ID: "server", Heading: "Server side", Tables: []*document.Table{t}}
}

// notAvailable lists, per engine, what a server fairbench did not start could not give (a view
// another product of the protocol lacks), as its results recorded it.
func (m *model) notAvailable() []string {
	seen := map[string]bool{}
	var out []string
	for _, r := range m.Results {
		if r.Server == nil {
			continue
		}
		for _, what := range r.Server.NotAvailable {
			line := r.Engine.Name() + ": " + what
			if !seen[line] {
				seen[line] = true
				out = append(out, line)
			}
		}
	}
	return out
}

func sortedStrings(set map[string]bool) []string {
	var out []string
	for k := range set {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func (m *model) spreadSection() *document.Section {
	if !m.hasRepeats() {
		return nil
	}
	t := &document.Table{
		Header:  []string{"Workload", "Threads", "Engine", "Runs", "Median TPS", "Min TPS", "Max TPS", "Spread"},
		Numeric: []bool{false, true, false, true, true, true, true, true},
	}
	for _, w := range m.Workloads {
		for _, th := range m.Threads[w] {
			for _, v := range m.Variants {
				g := m.group(v, w, th)
				if g == nil || len(g.Runs) < 2 {
					continue
				}
				runs := fmtInt(int64(len(g.Used)))
				if g.IncompleteRuns > 0 {
					runs += fmt.Sprintf(" (+%d left out)", g.IncompleteRuns)
				}
				t.Rows = append(t.Rows, []document.Cell{
					{Text: w, Head: true}, {Text: fmtInt(int64(th))}, {Text: v.Name}, {Text: runs},
					{Text: fmtRate(g.TPS), Incomplete: g.Incomplete}, {Text: fmtRate(g.MinTPS)}, {Text: fmtRate(g.MaxTPS)}, {Text: fmtPct(g.Spread)},
				})
			}
		}
	}
	t.Foot = []string{"Spread is (max − min) / median TPS over complete runs; the quick decision's intervals come from the same runs."}
	return &document.Section{ID: "spread", Heading: "Repeat spread", Tables: []*document.Table{t}}
}

func (m *model) fairnessSection() *document.Section {
	s := &document.Section{ID: "fairness", Heading: "Fairness profile and server settings"}
	if m.Env != nil && len(m.Env.Fairness) > 0 {
		t := &document.Table{Caption: "Profile applied to every engine", Header: []string{"Setting", "Value"}}
		for _, k := range sortedMapKeys(m.Env.Fairness) {
			t.Rows = append(t.Rows, []document.Cell{{Text: k, Head: true}, {Text: m.Env.Fairness[k]}})
		}
		s.Tables = append(s.Tables, t)
	}
	for _, part := range []struct {
		caption string
		get     func(*result.Server) map[string]string
	}{
		{"Applied by fairbench, per engine", func(s *result.Server) map[string]string { return s.Profile }},
		{"Reported by the server, per engine", func(s *result.Server) map[string]string { return s.Settings }},
	} {
		if t := m.settingsTable(part.caption, part.get); t != nil {
			s.Tables = append(s.Tables, t)
		}
	}
	if len(s.Tables) == 0 {
		s.Paras = append(s.Paras, "No fairness profile or server settings were recorded with these results.")
	}
	return s
}

// settingsTable lays settings out key by engine; engines name the same knob differently, so the
// table is sparse, but side by side the reader sees what each engine was given.
func (m *model) settingsTable(caption string, get func(*result.Server) map[string]string) *document.Table {
	vals := map[string]map[*variant][]string{}
	for _, r := range m.Results {
		if r.Server == nil {
			continue
		}
		v := m.variantOf(r)
		for k, val := range get(r.Server) {
			if vals[k] == nil {
				vals[k] = map[*variant][]string{}
			}
			if !containsStr(vals[k][v], val) {
				vals[k][v] = append(vals[k][v], val)
			}
		}
	}
	if len(vals) == 0 {
		return nil
	}
	h, _ := m.engineHeader("Setting")
	t := &document.Table{Caption: caption, Header: h}
	keys := make(map[string]bool, len(vals))
	for k := range vals {
		keys[k] = true
	}
	for _, k := range sortedStrings(keys) {
		row := []document.Cell{{Text: k, Head: true}}
		for _, v := range m.Variants {
			txt := "—"
			if vs := vals[k][v]; len(vs) > 0 {
				// Values differing between runs of one engine are all shown: hiding them would hide
				// a run measured under other settings.
				txt = strings.Join(vs, " / ")
			}
			row = append(row, document.Cell{Text: txt})
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}

func (m *model) variantOf(r *result.Result) *variant {
	for _, v := range m.Variants {
		if v.Engine == r.Engine.Name() && v.Label == m.effLabel[r] {
			return v
		}
	}
	return nil
}

func containsStr(ss []string, s string) bool { return slices.Contains(ss, s) }

func sortedMapKeys(mp map[string]string) []string { return slices.Sorted(maps.Keys(mp)) }

func (m *model) environmentSection() *document.Section {
	s := &document.Section{ID: "environment", Heading: "Environment"}
	if e := m.Env; e != nil {
		t := &document.Table{Header: []string{"Item", "Value"}}
		add := func(k, v string) {
			if v != "" {
				t.Rows = append(t.Rows, []document.Cell{{Text: k, Head: true}, {Text: v}})
			}
		}
		add("Host", e.Hostname)
		add("CPU", e.CPUModel)
		if e.Cores > 0 {
			add("Cores", fmtInt(int64(e.Cores)))
		}
		if e.MemoryBytes > 0 {
			add("RAM", fmtBytesGiB(e.MemoryBytes))
		}
		add("Kernel", e.Kernel)
		add("OS", e.OS)
		add("Filesystem (server data)", e.Filesystem)
		add("Go", e.GoVersion)
		add("fairbench", e.ToolVersion)
		for _, k := range sortedMapKeys(e.Engines) {
			add(k, e.Engines[k])
		}
		s.Tables = append(s.Tables, t)
	} else {
		s.Paras = append(s.Paras, "No environment.json was found beside the results: the machine they ran on is not known to this report.")
	}
	// Versions as each server reported them, whatever environment.json says: these are what the
	// figures were measured against.
	t := &document.Table{Caption: "Servers as measured", Header: []string{"Engine", "Version (SELECT version())", "Target"}}
	for _, v := range m.Variants {
		var versions, targets []string
		for _, r := range m.Results {
			if m.variantOf(r) != v {
				continue
			}
			if r.Engine.Version != "" && !containsStr(versions, r.Engine.Version) {
				versions = append(versions, r.Engine.Version)
			}
			if r.Engine.Target != "" && !containsStr(targets, r.Engine.Target) {
				targets = append(targets, r.Engine.Target)
			}
		}
		t.Rows = append(t.Rows, []document.Cell{{Text: v.Name, Head: true}, {Text: orDash(strings.Join(versions, " / "))}, {Text: orDash(strings.Join(targets, " / "))}})
	}
	s.Tables = append(s.Tables, t)
	return s
}

func orDash(s string) string {
	if s == "" {
		return "—"
	}
	return s
}

func (m *model) notesSection() *document.Section {
	s := &document.Section{ID: "notes", Heading: "Notes"}
	if m.Env != nil {
		s.Bullets = append(s.Bullets, m.Env.Notes...)
	}
	for _, r := range m.Results {
		if !r.Complete {
			msg := fmt.Sprintf("Incomplete: %s, %s, %s", m.variantOf(r).Name, r.WorkloadID(), threadsText(r.Threads))
			if r.Label != "" {
				msg += ", label " + r.Label
			}
			if r.Error != "" {
				msg += ": " + r.Error
			}
			s.Bullets = append(s.Bullets, msg)
		}
	}
	if note := memoryNote(m.Results); note != "" {
		s.Bullets = append(s.Bullets, note)
	}
	rates := map[float64]bool{}
	for _, r := range m.Results {
		if r.Rate > 0 {
			rates[r.Rate] = true
		}
	}
	if len(rates) > 0 {
		var rs []string
		var keys []float64
		for r := range rates {
			keys = append(keys, r)
		}
		sort.Float64s(keys)
		for _, r := range keys {
			rs = append(rs, fmtRate(r))
		}
		s.Bullets = append(s.Bullets, "Open loop: transactions arrived at a fixed rate of "+joinAnd(rs)+" per second; latency includes time queued behind a late transaction.")
	}
	for _, w := range m.AllWorkloads {
		opts := map[string][]string{}
		for _, r := range m.Results {
			if r.WorkloadID() != w {
				continue
			}
			for k, v := range r.Workload.Options {
				if !containsStr(opts[k], v) {
					opts[k] = append(opts[k], v)
				}
			}
		}
		if len(opts) == 0 {
			continue
		}
		keys := map[string]bool{}
		for k := range opts {
			keys[k] = true
		}
		var parts []string
		for _, k := range sortedStrings(keys) {
			parts = append(parts, k+"="+strings.Join(opts[k], "/"))
		}
		s.Bullets = append(s.Bullets, "Workload "+w+" options: "+strings.Join(parts, ", ")+".")
	}
	if len(s.Bullets) == 0 {
		return nil
	}
	return s
}

func (m *model) runsSection() *document.Section {
	t := &document.Table{
		Header:  []string{"Engine", "Workload", "Threads", "Label", "Started (UTC)", "Measured", "TPS", "Status"},
		Numeric: []bool{false, false, true, false, false, true, true, false},
	}
	for _, v := range m.Variants {
		for _, w := range m.AllWorkloads {
			for _, r := range m.Results {
				if m.variantOf(r) != v || r.WorkloadID() != w {
					continue
				}
				threads := fmtInt(int64(r.Threads))
				if r.Ramp != nil && len(r.Ramp.Steps) > 0 {
					threads = fmtInt(int64(r.Ramp.Steps[0].Threads)) + "–" + threads
				}
				status := "complete"
				if !r.Complete {
					status = "incomplete"
				}
				if !r.IsMeaningful() {
					status += ", too little to rank: " + r.NotMeaningful
				}
				if a := availabilityText(r); a != "" {
					status += "; " + a
				}
				started := "—"
				if !r.StartedAt.IsZero() {
					started = r.StartedAt.UTC().Format("2006-01-02 15:04:05")
				}
				tps := fmtRate(r.TPS)
				if r.TPCH != nil || !r.IsMeaningful() {
					tps = "—" // TPC-H measures query times, which its own section shows; a run too short has no rate
				}
				workload := w
				if r.Workload.Title != "" {
					workload += " · " + r.Workload.Name // a workload file: its path beside its name
				}
				t.Rows = append(t.Rows, []document.Cell{
					{Text: v.Name, Head: true}, {Text: workload}, {Text: threads}, {Text: orDash(r.Label)},
					{Text: started}, {Text: fmtSeconds(r.DurationS)}, {Text: tps, Incomplete: !r.Complete || !r.IsMeaningful()}, {Text: status, Incomplete: !r.Complete || !r.IsMeaningful()},
				})
			}
		}
	}
	return &document.Section{ID: "runs", Heading: "Runs", Tables: []*document.Table{t}}
}

func (m *model) reproduceSection() *document.Section {
	s := &document.Section{ID: "reproduce", Heading: "Reproduce"}
	if m.Env != nil && m.Env.Command != "" {
		s.Paras = []string{"On a comparable machine, run:"}
		s.Code = m.Env.Command
	} else {
		s.Paras = []string{"The command line that produced these results was not recorded (no environment.json)."}
	}
	return s
}

func (m *model) chartsSection() *document.Section {
	s := &document.Section{ID: "charts", Heading: "Charts", HTMLOnly: true}
	for _, w := range m.Workloads {
		fg := document.FigGroup{Title: w + ", " + threadsText(m.Headline[w])}
		add := func(title string, svg template.HTML, err error) {
			if err != nil {
				s.Paras = append(s.Paras, fmt.Sprintf("%s: %s: chart not drawn: %v", fg.Title, title, err))
				return
			}
			if svg != "" {
				fg.Figures = append(fg.Figures, document.Figure{Title: title, SVG: svg})
			}
		}
		gs := m.headlineGroups(w)
		svg, err := intervalChart(m, gs, "TPS", func(iv result.Interval) float64 { return iv.TPS }, false)
		add("TPS over time", svg, err)
		svg, err = intervalChart(m, gs, "p99 ms", func(iv result.Interval) float64 { return iv.P99MS }, false)
		add("p99 latency over time", svg, err)
		svg, notes, err := percentileChart(m, gs)
		s.Paras = append(s.Paras, notes...)
		add("Latency by percentile (all complete runs merged)", svg, err)
		svg, err = intervalChart(m, gs, "server CPU %", func(iv result.Interval) float64 { return iv.ServerCPUPct }, true)
		add("Server CPU % over time", svg, err)
		svg, err = intervalChart(m, gs, "server memory MB", func(iv result.Interval) float64 { return iv.ServerMemMB }, true)
		add("Server memory (cgroup) over time", svg, err)
		svg, err = intervalChart(m, gs, "disk writes (ops)", func(iv result.Interval) float64 { return float64(iv.ServerDiskWriteOps) }, true)
		add("Disk write operations per interval", svg, err)
		if len(fg.Figures) > 0 {
			s.Figures = append(s.Figures, fg)
		}
	}
	if len(s.Figures) == 0 && len(s.Paras) == 0 {
		return nil
	}
	return s
}
