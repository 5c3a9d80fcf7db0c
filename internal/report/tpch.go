package report

import (
	"fmt"
	"html/template"
	"math"
	"sort"
	"strings"

	"github.com/fairbench/fairbench/internal/document"
	"github.com/fairbench/fairbench/internal/interval"
	"github.com/fairbench/fairbench/internal/result"
)

// tpchGroup is every TPC-H run of one variant, workload, test mode and scale factor. TPC-H
// measures seconds per query and answer correctness, not transactions per second, so these
// runs never enter the OLTP groups, tables or decisions.
type tpchGroup struct {
	V          *variant
	Runs, Used []*result.Result
	Incomplete bool
	// Rep is the run shown: the one with the median geometric mean (power) or queries per hour
	// (throughput), so a repeat shows figures one run actually produced.
	Rep    *result.Result
	Figure float64 // Rep's headline: geometric mean seconds (power) or queries per hour
	Spread float64 // (max-min)/median of the headline over the used runs
}

// tpchSet is one TPC-H comparison: the groups that ran the same workload, mode and scale factor.
type tpchSet struct {
	Workload string
	Mode     string
	SF       float64
	Groups   []*tpchGroup // report order
}

type tpchKey struct {
	Kind, Label, Workload, Mode string
	SF                          float64
}

func (s *tpchSet) throughput() bool { return s.Mode == "throughput" }

// name is how the report refers to the set: "TPC-H SF 1" or "TPC-H SF 10, throughput".
func (s *tpchSet) name() string {
	n := "TPC-H SF " + fmtTrim(s.SF)
	if s.throughput() {
		n += ", throughput"
	}
	if s.Workload != "tpch" {
		n += ", " + s.Workload
	}
	return n
}

// addTPCH files a TPC-H run under its set and variant.
func (m *model) addTPCH(v *variant, r *result.Result) {
	k := tpchKey{v.Engine, v.Label, r.WorkloadID(), r.TPCH.Mode, r.TPCH.ScaleFactor}
	if m.tpchGroups == nil {
		m.tpchGroups = map[tpchKey]*tpchGroup{}
	}
	g := m.tpchGroups[k]
	if g == nil {
		g = &tpchGroup{V: v}
		m.tpchGroups[k] = g
	}
	g.Runs = append(g.Runs, r)
}

// buildTPCHSets summarises the TPC-H groups once the variants have their report order.
func (m *model) buildTPCHSets() {
	sets := map[tpchKey]*tpchSet{}
	for k, g := range m.tpchGroups {
		g.summarise()
		sk := tpchKey{Workload: k.Workload, Mode: k.Mode, SF: k.SF}
		s := sets[sk]
		if s == nil {
			s = &tpchSet{Workload: k.Workload, Mode: k.Mode, SF: k.SF}
			sets[sk] = s
		}
		s.Groups = append(s.Groups, g)
	}
	for _, s := range sets {
		sort.Slice(s.Groups, func(i, j int) bool { return s.Groups[i].V.Index < s.Groups[j].V.Index })
		m.TPCHSets = append(m.TPCHSets, s)
	}
	sort.Slice(m.TPCHSets, func(i, j int) bool {
		a, b := m.TPCHSets[i], m.TPCHSets[j]
		if a.Workload != b.Workload {
			return lessWorkload(a.Workload, b.Workload)
		}
		if a.Mode != b.Mode {
			return a.Mode == "power"
		}
		return a.SF < b.SF
	})
}

func (m *model) tpchSetsFor(workload string) []*tpchSet {
	var out []*tpchSet
	for _, s := range m.TPCHSets {
		if s.Workload == workload {
			out = append(out, s)
		}
	}
	return out
}

// tpchFigure is a run's headline figure; the geometric mean is recomputed from the ok queries
// when the run did not record it.
func tpchFigure(t *result.TPCH) float64 {
	if t.Mode == "throughput" {
		return t.QueriesPerHour
	}
	if t.GeoMeanS > 0 {
		return t.GeoMeanS
	}
	sum, n := 0.0, 0
	for _, q := range t.Queries {
		if q.Status == "ok" && q.Seconds > 0 {
			sum += math.Log(q.Seconds)
			n++
		}
	}
	if n == 0 {
		return 0
	}
	return math.Exp(sum / float64(n))
}

func (g *tpchGroup) summarise() {
	for _, r := range g.Runs {
		if r.Complete {
			g.Used = append(g.Used, r)
		}
	}
	if len(g.Used) == 0 {
		g.Used, g.Incomplete = g.Runs, true
	}
	vals := make([]float64, len(g.Used))
	lo, hi := math.Inf(1), math.Inf(-1)
	for i, r := range g.Used {
		vals[i] = tpchFigure(r.TPCH)
		lo, hi = math.Min(lo, vals[i]), math.Max(hi, vals[i])
	}
	med := median(vals)
	for i, r := range g.Used {
		if g.Rep == nil || math.Abs(vals[i]-med) < math.Abs(g.Figure-med) {
			g.Rep, g.Figure = r, vals[i]
		}
	}
	if med > 0 {
		g.Spread = (hi - lo) / med
	}
}

// failures counts the Rep's queries by status other than ok.
func (g *tpchGroup) failures() map[string]int {
	out := map[string]int{}
	for _, q := range g.Rep.TPCH.Queries {
		if q.Status != "ok" {
			out[q.Status]++
		}
	}
	return out
}

func (g *tpchGroup) okCount() (ok, total int) {
	for _, q := range g.Rep.TPCH.Queries {
		total++
		if q.Status == "ok" {
			ok++
		}
	}
	return ok, total
}

// allOK is what an engine needs to be picked: a complete run with every answer right. A fast
// wrong answer is no answer.
func (g *tpchGroup) allOK() bool {
	ok, total := g.okCount()
	return !g.Incomplete && total > 0 && ok == total
}

// failureText says why an engine is not ranked: "1 wrong answer, 1 timeout".
func (g *tpchGroup) failureText() string {
	if g.Incomplete {
		return "incomplete"
	}
	f := g.failures()
	if len(f) == 0 {
		return "no queries"
	}
	var parts []string
	for _, st := range []string{"wrong", "timeout", "error"} {
		if n := f[st]; n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, statusNoun(st, n)))
			delete(f, st)
		}
	}
	for _, st := range sortedIntKeys(f) {
		parts = append(parts, fmt.Sprintf("%d %s", f[st], st))
	}
	return strings.Join(parts, ", ")
}

func statusNoun(status string, n int) string {
	noun := map[string]string{"wrong": "wrong answer", "timeout": "timeout", "error": "error"}[status]
	if n != 1 {
		noun += "s"
	}
	return noun
}

func statusText(status string) string {
	switch status {
	case "wrong":
		return "✗ wrong answer"
	case "timeout":
		return "✗ timeout"
	case "error":
		return "✗ error"
	}
	return "✗ " + status
}

func sortedIntKeys(mp map[string]int) []string {
	out := make([]string, 0, len(mp))
	for k := range mp {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// queryNumbers lists the queries any engine of the set ran, ascending.
func (s *tpchSet) queryNumbers() []int {
	seen := map[int]bool{}
	for _, g := range s.Groups {
		for _, q := range g.Rep.TPCH.Queries {
			seen[q.Query] = true
		}
	}
	return sortedKeys(seen)
}

// query finds one query of a power test; a query run more than once keeps its first entry.
func (g *tpchGroup) query(n int) (result.TPCHQuery, bool) {
	for _, q := range g.Rep.TPCH.Queries {
		if q.Query == n {
			return q, true
		}
	}
	return result.TPCHQuery{}, false
}

// fastest gives the lowest ok time of query n over the set and which groups reach it.
func (s *tpchSet) fastest(n int) (float64, map[int]bool) {
	best := math.Inf(1)
	for _, g := range s.Groups {
		if q, ok := g.query(n); ok && q.Status == "ok" {
			best = math.Min(best, q.Seconds)
		}
	}
	who := map[int]bool{}
	for i, g := range s.Groups {
		if q, ok := g.query(n); ok && q.Status == "ok" && q.Seconds == best {
			who[i] = true
		}
	}
	return best, who
}

// fastestCount is on how many queries g is the fastest engine of the set.
func (s *tpchSet) fastestCount(g *tpchGroup) int {
	idx := -1
	for i, x := range s.Groups {
		if x == g {
			idx = i
		}
	}
	n := 0
	for _, q := range s.queryNumbers() {
		if _, who := s.fastest(q); who[idx] {
			n++
		}
	}
	return n
}

// fmtQuerySeconds keeps three significant digits or so: sub-second queries need their
// milliseconds, minute-long ones do not.
func fmtQuerySeconds(v float64) string {
	switch a := math.Abs(v); {
	case a >= 100:
		return document.Fixed(v, 0) + " s"
	case a >= 10:
		return document.Fixed(v, 1) + " s"
	case a >= 1:
		return document.Fixed(v, 2) + " s"
	default:
		return document.Fixed(v, 3) + " s"
	}
}

func fmtRatio(r float64) string {
	if r >= 10 {
		return document.Fixed(r, 0) + "×"
	}
	return document.Fixed(r, 1) + "×"
}

func (m *model) tpchSection() *document.Section {
	if len(m.TPCHSets) == 0 {
		return nil
	}
	s := &document.Section{ID: "tpch", Heading: "TPC-H (analytical queries)"}
	for _, set := range m.TPCHSets {
		var t *document.Table
		if set.throughput() {
			t = set.throughputTable()
		} else {
			t = set.powerTable()
			svg, err := tpchChart(set)
			switch {
			case err != nil:
				s.Paras = append(s.Paras, fmt.Sprintf("%s: seconds per query: chart not drawn: %v", set.name(), err))
			case svg != "":
				s.Figures = append(s.Figures, document.FigGroup{Title: set.name(), Wide: true, Figures: []document.Figure{{Title: "Seconds per query (bars missing where the answer was wrong, timed out or failed)", SVG: svg}}})
			}
		}
		s.Tables = append(s.Tables, t)
		if p := set.planTable(); p != nil {
			s.Tables = append(s.Tables, p)
		}
		for _, g := range set.Groups {
			for _, q := range g.Rep.TPCH.Queries {
				if q.Status == "ok" {
					continue
				}
				b := fmt.Sprintf("%s, %s, Q%d: %s", set.name(), g.V.Name, q.Query, strings.TrimPrefix(statusText(q.Status), "✗ "))
				if q.Stream > 0 {
					b = fmt.Sprintf("%s, %s, stream %d, Q%d: %s", set.name(), g.V.Name, q.Stream, q.Query, strings.TrimPrefix(statusText(q.Status), "✗ "))
				}
				if q.Detail != "" {
					b += ": " + q.Detail
				}
				s.Bullets = append(s.Bullets, b)
			}
		}
	}
	return s
}

// header gives the set's engines as columns.
func (s *tpchSet) header(first string) ([]string, []bool) {
	h, num := []string{first}, []bool{false}
	for _, g := range s.Groups {
		name := g.V.Name
		if g.Incomplete {
			name += " (incomplete)"
		}
		h = append(h, name)
		num = append(num, true)
	}
	return h, num
}

// commonRows are the rows both test modes end with.
func (s *tpchSet) commonRows() [][]document.Cell {
	correct := []document.Cell{{Text: "correct answers", Head: true}}
	load := []document.Cell{{Text: "load time", Head: true}}
	checked := []document.Cell{{Text: "answers checked", Head: true}}
	sf := []document.Cell{{Text: "scale factor", Head: true}}
	for _, g := range s.Groups {
		ok, total := g.okCount()
		correct = append(correct, document.Cell{Text: fmt.Sprintf("%d/%d", ok, total), Failed: ok < total})
		lt := "—"
		if v, found := g.Rep.TPCH.LoadSeconds["total"]; found {
			lt = fmtQuerySeconds(v)
		}
		load = append(load, document.Cell{Text: lt})
		checked = append(checked, document.Cell{Text: orDash(g.Rep.TPCH.AnswersChecked)})
		sf = append(sf, document.Cell{Text: fmtTrim(g.Rep.TPCH.ScaleFactor)})
	}
	return [][]document.Cell{correct, load, checked, sf}
}

func (s *tpchSet) powerTable() *document.Table {
	h, num := s.header("Query")
	t := &document.Table{Caption: s.name() + ", power test (one stream, queries one after another)", Header: h, Numeric: num}
	for _, n := range s.queryNumbers() {
		best, who := s.fastest(n)
		row := []document.Cell{{Text: fmt.Sprintf("Q%d", n), Head: true}}
		for i, g := range s.Groups {
			q, ok := g.query(n)
			switch {
			case !ok:
				row = append(row, document.Cell{Text: "—"})
			case q.Status != "ok":
				row = append(row, document.Cell{Text: statusText(q.Status), Failed: true})
			default:
				txt := fmtQuerySeconds(q.Seconds)
				if best > 0 {
					txt += " (" + fmtRatio(q.Seconds/best) + ")"
				}
				// A lone ok time or equal times mark nothing, as in the other tables.
				row = append(row, document.Cell{Text: txt, Best: who[i] && len(who) < s.okOn(n), Incomplete: g.Incomplete})
			}
		}
		t.Rows = append(t.Rows, row)
	}
	bestGeo := math.Inf(1)
	for _, g := range s.Groups {
		if g.allOK() && g.Figure > 0 {
			bestGeo = math.Min(bestGeo, g.Figure)
		}
	}
	geo := []document.Cell{{Text: "geometric mean", Head: true}}
	ranked := 0
	for _, g := range s.Groups {
		if g.allOK() {
			ranked++
		}
	}
	for _, g := range s.Groups {
		c := document.Cell{Text: "—"}
		if g.Figure > 0 {
			c.Text = fmtQuerySeconds(g.Figure)
			if g.allOK() && !math.IsInf(bestGeo, 1) {
				c.Text += " (" + fmtRatio(g.Figure/bestGeo) + ")"
				c.Best = g.Figure == bestGeo && ranked > 1
			} else {
				ok, total := g.okCount()
				c.Text += fmt.Sprintf(" (%d of %d queries, not ranked)", ok, total)
				c.Failed = true
			}
		}
		geo = append(geo, c)
	}
	t.Rows = append(t.Rows, geo)
	t.Rows = append(t.Rows, s.commonRows()...)
	t.Foot = []string{
		"Each time is the query's seconds and, in brackets, its time relative to the fastest engine on that query (1.0× is the fastest); bold marks the fastest.",
		"✗: the answer was wrong, the query timed out or it failed; it shows no time. The geometric mean is over correct answers only, so an engine with a ✗ is averaged over fewer queries and is not ranked.",
	}
	if s.anyRepeats() {
		t.Foot = append(t.Foot, "With repeats, the run with the median geometric mean is shown.")
	}
	return t
}

// planTable is each query's plan on each engine, where any engine recorded one: the first place
// to look when one engine's time on a query is far from the others'.
func (s *tpchSet) planTable() *document.Table {
	h, _ := s.header("Query")
	t := &document.Table{Caption: s.name() + ", query plans (each table's access path, in join order; taken after the timed run with the same parameters)",
		Header: h, Numeric: make([]bool, len(h))}
	for _, n := range s.queryNumbers() {
		row := []document.Cell{{Text: fmt.Sprintf("Q%d", n), Head: true}}
		any := false
		for _, g := range s.Groups {
			q, _ := g.query(n)
			row = append(row, document.Cell{Text: orDash(q.Plan)})
			any = any || q.Plan != ""
		}
		if any {
			t.Rows = append(t.Rows, row)
		}
	}
	if len(t.Rows) == 0 {
		return nil
	}
	t.Foot = []string{"Tables in the engine's plan order: the first is read first; \"index lookup\" finds rows through the index named, \"full scan\" reads every row. fairbench diff names a query whose plan changed between two runs of one engine."}
	return t
}

// okOn is how many engines answered query n correctly.
func (s *tpchSet) okOn(n int) int {
	c := 0
	for _, g := range s.Groups {
		if q, ok := g.query(n); ok && q.Status == "ok" {
			c++
		}
	}
	return c
}

func (s *tpchSet) anyRepeats() bool {
	for _, g := range s.Groups {
		if len(g.Used) > 1 {
			return true
		}
	}
	return false
}

func (s *tpchSet) throughputTable() *document.Table {
	h, num := s.header("Metric")
	t := &document.Table{Caption: s.name() + " test (concurrent query streams)", Header: h, Numeric: num}
	best := 0.0
	ranked := 0
	for _, g := range s.Groups {
		if g.allOK() {
			best = math.Max(best, g.Figure)
			ranked++
		}
	}
	qph := []document.Cell{{Text: "queries per hour", Head: true}}
	streams := []document.Cell{{Text: "streams", Head: true}}
	for _, g := range s.Groups {
		c := document.Cell{Text: fmtRate(g.Figure), Incomplete: g.Incomplete}
		if g.allOK() {
			c.Best = g.Figure == best && ranked > 1
		} else {
			c.Text += " (not ranked)"
			c.Failed = true
		}
		qph = append(qph, c)
		streams = append(streams, document.Cell{Text: fmtInt(int64(g.Rep.TPCH.Streams))})
	}
	t.Rows = append(t.Rows, qph, streams)
	t.Rows = append(t.Rows, s.commonRows()...)
	t.Foot = []string{
		"Queries per hour counts the queries answered correctly across all streams; bold marks the highest. An engine with a wrong answer, a timeout or an error is not ranked.",
	}
	if s.anyRepeats() {
		t.Foot = append(t.Foot, "With repeats, the run with the median queries per hour is shown.")
	}
	return t
}

// decideTPCH picks the engine for analytics: the lowest geometric mean (power) or the most
// queries per hour (throughput) among engines that answered every query correctly.
func decideTPCH(rule interval.Rule, s *tpchSet) decision {
	d := decision{Workload: s.Workload, UseCase: "Analytics (" + s.name() + ")", TPCH: true}
	var ranked []*tpchGroup
	var excluded []string
	for _, g := range s.Groups {
		if g.allOK() {
			ranked = append(ranked, g)
		} else {
			excluded = append(excluded, g.V.Name+" ("+g.failureText()+")")
		}
	}
	suffix := ""
	if len(excluded) > 0 {
		suffix = "; not picked: " + strings.Join(excluded, ", ")
	}
	if len(ranked) == 0 {
		d.Pick = "none (no engine answered every query correctly)"
		d.Why = "every engine has a wrong, timed-out or failed query or an incomplete run" + suffix
		return d
	}
	better := func(a, b float64) bool { return a < b }
	figText := func(g *tpchGroup) string { return "geomean " + fmtQuerySeconds(g.Figure) }
	other := func(g *tpchGroup) string { return fmtQuerySeconds(g.Figure) }
	if s.throughput() {
		better = func(a, b float64) bool { return a > b }
		figText = func(g *tpchGroup) string { return fmtRate(g.Figure) + " queries/h" }
		other = func(g *tpchGroup) string { return fmtRate(g.Figure) }
	}
	sort.SliceStable(ranked, func(i, j int) bool {
		if ranked[i].Figure != ranked[j].Figure {
			return better(ranked[i].Figure, ranked[j].Figure)
		}
		return ranked[i].V.Index < ranked[j].V.Index
	})
	best := ranked[0]
	fastest := ""
	if !s.throughput() {
		fastest = fmt.Sprintf("; fastest on %d of %d queries", s.fastestCount(best), len(s.queryNumbers()))
	}
	if len(ranked) == 1 {
		d.Pick, d.Winner = best.V.Name, best.V
		d.Why = "only engine with every answer correct: " + figText(best) + fastest + suffix
		return d
	}
	// Judged on speed (queries per hour, or one over the geometric mean), higher being better,
	// so the ratio reads "best is 1.5× as fast" in both tests.
	speed := func(g *tpchGroup) []float64 {
		return inStartOrder(g.Used, func(r *result.Result) float64 {
			f := tpchFigure(r.TPCH)
			if s.throughput() || f == 0 {
				return f
			}
			return 1 / f
		})
	}
	tiedGroups := []*tpchGroup{best}
	lone := false
	var open *tpchGroup
	var vs, openVs interval.Ratio
	for i, g := range ranked[1:] {
		r, out := judge(rule, speed(best), speed(g))
		switch {
		case out == unconfirmed:
			lone = true
		case out == undecided:
			if open == nil {
				open, openVs = g, r
			}
		case out == tied:
			tiedGroups = append(tiedGroups, g)
			vs = r
		case i == 0:
			vs = r
		}
	}
	second := ranked[1]
	switch {
	case lone:
		d.Pick, d.Lead = "unconfirmed: "+best.V.Name+" leads", best.V
		d.Why = fmt.Sprintf("%s vs %s (%s); a single run measures no noise, so no verdict: run with --repeat 3 or more for an interval",
			figText(best), other(second), second.V.Name) + fastest + suffix
	case open != nil:
		d.Pick, d.Lead = "undecided: "+best.V.Name+" leads", best.V
		d.Why = fmt.Sprintf("%s vs %s (%s): speed ratio %s (%s, %s) includes 1 and reaches beyond ±%s; %s",
			figText(best), other(open), open.V.Name, openVs, openVs.LevelText(), openVs.Basis(), fmtPct(equivalenceMargin), moreRounds(rule, openVs)) + fastest + suffix
	case len(tiedGroups) > 1:
		names := make([]string, len(tiedGroups))
		others := make([]string, 0, len(tiedGroups)-1)
		for i, g := range tiedGroups {
			names[i] = g.V.Name
			d.Tied = append(d.Tied, g.V)
			if i > 0 {
				others = append(others, other(g)+" ("+g.V.Name+")")
			}
		}
		d.Pick = "tie: " + strings.Join(names, " ≈ ")
		d.Why = fmt.Sprintf("%s vs %s: speed ratio %s lies within ±%s (%s, %s)", figText(best), strings.Join(others, ", "),
			vs, fmtPct(equivalenceMargin), vs.LevelText(), vs.Basis()) + fastest + suffix
	default:
		d.Pick, d.Winner = fmt.Sprintf("%s, %s as fast, %s", best.V.Name, vs, vs.Basis()), best.V
		d.Why = fmt.Sprintf("%s vs %s (%s)", figText(best), other(second), second.V.Name) + fastest + suffix
	}
	return d
}

// tpchSummary describes the TPC-H tests for the report's opening sentence.
func (m *model) tpchSummary() []string {
	var out []string
	for _, s := range m.TPCHSets {
		desc := "TPC-H power test at SF " + fmtTrim(s.SF)
		if s.throughput() {
			streams := map[int]bool{}
			for _, g := range s.Groups {
				streams[g.Rep.TPCH.Streams] = true
			}
			var ns []string
			for _, n := range sortedKeys(streams) {
				ns = append(ns, fmtInt(int64(n)))
			}
			desc = "TPC-H throughput test at SF " + fmtTrim(s.SF) + " with " + strings.Join(ns, "/") + " streams"
		}
		if s.Workload != "tpch" {
			desc += " (" + s.Workload + ")"
		}
		out = append(out, desc)
	}
	return out
}

// tpchChart draws seconds per query as grouped bars, one colour per engine, a cross where an
// engine has no valid time. When the slowest query takes more than twenty times the fastest,
// the axis is logarithmic: on a linear axis the short queries, often most of the 22, would be
// invisible.
func tpchChart(s *tpchSet) (template.HTML, error) {
	qs := s.queryNumbers()
	if len(qs) == 0 || len(s.Groups) == 0 {
		return "", nil
	}
	bc := document.BarChart{Title: s.name() + ": seconds per query", XName: "query", YName: "seconds", Width: 960, Height: 340}
	for _, n := range qs {
		bc.Categories = append(bc.Categories, fmt.Sprintf("Q%d", n))
	}
	lo, hi := math.Inf(1), 0.0
	for _, g := range s.Groups {
		bs := document.BarSeries{Name: g.V.Name, Color: colorOf(g.V)}
		if g.Incomplete {
			bs.Name += " (incomplete)"
		}
		for _, n := range qs {
			q, ok := g.query(n)
			v := math.NaN()
			if ok && q.Status == "ok" && q.Seconds > 0 {
				v = q.Seconds
				lo, hi = math.Min(lo, v), math.Max(hi, v)
			}
			bs.Values = append(bs.Values, v)
			bs.Failed = append(bs.Failed, ok && q.Status != "ok")
		}
		bc.Series = append(bc.Series, bs)
	}
	if hi/lo > 20 {
		bc.LogY, bc.YName = true, "seconds (log scale)"
	}
	return bc.SVG()
}
