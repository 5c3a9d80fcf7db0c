package report

import (
	"fmt"
	"html/template"
	"math"
	"slices"
	"strings"

	"github.com/fairbench/fairbench/internal/document"
	"github.com/fairbench/fairbench/internal/interval"
	"github.com/fairbench/fairbench/internal/result"
)

// Capacity: the highest arrival rate each engine carried within a latency objective (capacity,
// compare --slo). Each round's search gives one capacity, so the pick between engines takes its
// interval from the rounds as the throughput picks do; the report leads with these rows.

// summariseCapacity summarises capacity searches by their capacity (summariseBy); Rep, the
// search nearest the median, is the one whose rates the chart draws.
func (g *group) summariseCapacity() {
	g.summariseBy(func(r *result.Result) float64 { return r.Capacity.PerS })
	g.Threads = g.Rep.Capacity.Connections
	g.Lat = g.Rep.LatencyMS
}

func (m *model) capacityGroupsFor(workload string) []*group {
	var out []*group
	for _, v := range m.Variants {
		if g := m.capacityGroups[groupKey{v.Engine, v.Label, workload, 0}]; g != nil {
			out = append(out, g)
		}
	}
	return out
}

// objectiveOf is the objective the groups' searches were held to, as a reader writes it; the
// searches of one step share it.
func objectiveOf(gs []*group) string {
	for _, g := range gs {
		if g.Rep != nil && g.Rep.Capacity != nil {
			return strings.Replace(g.Rep.Capacity.SLO, "<=", " ≤ ", 1)
		}
	}
	return ""
}

// decideCapacity picks the engine that carries the most traffic within the objective, with the
// same rules as every pick; a search that found only a lower bound (every rate passed, or the
// client gave way) is never ranked above one that found its knee.
func decideCapacity(rule interval.Rule, workload string, cands []*group) decision {
	obj := objectiveOf(cands)
	d := decision{Workload: workload, UseCase: "Capacity at " + obj + " · " + useCase(workload), Capacity: true}
	var known []*group
	var bounds []string
	for _, g := range cands {
		if open := roundsWithoutKnee(g); open != "" {
			bounds = append(bounds, g.V.Name+" "+open)
			continue
		}
		known = append(known, g)
	}
	rk := rank(rule, known)
	if len(bounds) > 0 {
		rk.suffix += "; not ranked: " + strings.Join(bounds, ", ")
	}
	if len(rk.ranked) == 0 {
		d.Pick = "none (no capacity in every round)"
		d.Why = "no engine's searches found the rate where the objective fails in every round" + rk.suffix
		return d
	}
	best := rk.ranked[0]
	lead := fmt.Sprintf("%s/s %s", fmtRate(best.TPS), intervalText(best.Rep.Capacity))
	if len(best.Samples) > 1 {
		lead = fmt.Sprintf("%s/s (median of %d rounds)", fmtRate(best.TPS), len(best.Samples))
	}
	rk.suffix += softSuffix(rk.ranked)
	if len(rk.ranked) == 1 {
		d.Pick, d.Winner = best.V.Name, best.V
		d.Why = "only engine with a capacity: " + lead + gaveWayText(best) + rk.suffix
		return d
	}
	verdict(&d, rk, lead,
		func(g *group) string { return fmt.Sprintf("%s/s (%s)", fmtRate(g.TPS), g.V.Name) },
		func(best, second *group) string {
			return strings.TrimPrefix(gaveWayText(best)+gaveWayText(second), "; ")
		})
	return d
}

// groupFloor is the floor of a group's searches (result.Capacity.Floor): the round that measured
// the start rate has it, later rounds of compare begin at its bracket and have none.
func groupFloor(g *group) float64 {
	f := 0.0
	for _, r := range g.Used {
		f = max(f, r.Capacity.Floor)
	}
	return f
}

// softSuffix names, for a pick's why, the engines whose capacity is soft: the objective within
// twice the latency they had at the start rate, where a capacity moves with the machine's speed
// more than with load (docs/capacity.md).
func softSuffix(gs []*group) string {
	var parts []string
	for _, g := range gs {
		if f := groupFloor(g); f >= result.SoftFloor && f < 1 {
			parts = append(parts, fmt.Sprintf("%s's %.0f%%", g.V.Name, 100*f))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return "; soft: the objective's percentile at the start rate was already " + joinAnd(parts) +
		" of its limit, so these capacities move with the machine's speed more than with load"
}

// roundsWithoutKnee says which of a group's rounds found no capacity to rank: a lower bound
// (every rate passed, or the client gave way) or no rate at all; "" when every round found one.
// A median over rounds of which some found nothing would be no capacity of the engine's.
func roundsWithoutKnee(g *group) string {
	var parts []string
	runs := slices.Clone(g.Used)
	slices.SortStableFunc(runs, func(a, b *result.Result) int { return a.StartedAt.Compare(b.StartedAt) })
	for i, r := range runs {
		if c := r.Capacity; c.AtLeast || c.Reached == "no rate" {
			parts = append(parts, fmt.Sprintf("round %d %s", i+1, capacityText(c)))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return "(" + strings.Join(parts, "; ") + ")"
}

// eachRoundsCapacity is what each of a group's searches found, in the order they ran.
func eachRoundsCapacity(g *group) string {
	runs := slices.Clone(g.Used)
	slices.SortStableFunc(runs, func(a, b *result.Result) int { return a.StartedAt.Compare(b.StartedAt) })
	parts := make([]string, len(runs))
	for i, r := range runs {
		parts[i] = fmt.Sprintf("round %d: %s", i+1, capacityText(r.Capacity))
	}
	return strings.Join(parts, "; ")
}

// intervalText is one search's interval, "[3,900, 4,300]".
func intervalText(c *result.Capacity) string {
	return fmt.Sprintf("[%s, %s]", fmtRate(c.LowPerS), fmtRate(c.HighPerS))
}

// capacityText says what a search found, for a reader.
func capacityText(c *result.Capacity) string {
	switch {
	case c.Reached == "no rate":
		return "no rate met the objective"
	case c.AtLeast && c.GaveWay == "client":
		return fmt.Sprintf("at least %s/s (the client gave way)", fmtRate(c.PerS))
	case c.AtLeast:
		return fmt.Sprintf("at least %s/s (every rate passed)", fmtRate(c.PerS))
	}
	text := fmt.Sprintf("%s/s %s", fmtRate(c.PerS), intervalText(c))
	if c.Contradicted > 0 {
		text += fmt.Sprintf(" (its lower rate failed in %d of %d rounds: one rate's windows vary more than the resolution)", c.Contradicted, c.Rounds)
	}
	if note := c.RefutedNote(); note != "" {
		text += " (" + note + ")"
	}
	if note := c.FloorNote(); note != "" {
		text += " (" + note + ")"
	}
	return text
}

// gaveWayText says what was busy at the first rate past the capacity: the objective's failure and
// the server's figures there ("at 4,300/s postgres: 61% log_flush, CPU 96%").
func gaveWayText(g *group) string {
	st, ok := firstFailure(g.Rep.Capacity)
	if !ok {
		return ""
	}
	what := strings.Join(st.Failed, "; ")
	var busy []string
	if st.Waits != "" {
		busy = append(busy, st.Waits)
	}
	if st.ServerCPUPct > 0 {
		busy = append(busy, fmt.Sprintf("server CPU %.0f%%", st.ServerCPUPct))
	}
	if len(busy) > 0 {
		what += " (" + strings.Join(busy, ", ") + ")"
	}
	if g.Rep.Capacity.GaveWay != "" && g.Rep.Capacity.GaveWay != "server" {
		what += "; the " + g.Rep.Capacity.GaveWay + " gave way: " + g.Rep.Capacity.Advice
	}
	return fmt.Sprintf("; at %s/s %s: %s", fmtRate(st.OfferedPerS), g.V.Name, what)
}

// firstFailure is the lowest rate that failed.
func firstFailure(c *result.Capacity) (result.CapacityStep, bool) {
	var out result.CapacityStep
	found := false
	for _, st := range c.Steps {
		if !st.Pass && (!found || st.OfferedPerS < out.OfferedPerS) {
			out, found = st, true
		}
	}
	return out, found
}

// capacitySection tables each engine's search and draws the latency against the offered rate:
// one line per engine, the objective dashed, each capacity ringed.
func (m *model) capacitySection() *document.Section {
	if len(m.CapacityWorkloads) == 0 {
		return nil
	}
	s := &document.Section{ID: "capacity", Heading: "Capacity at the latency objective"}
	s.Paras = append(s.Paras, "Each engine's highest arrival rate that met the objective over a measured window (the objective's "+
		"percentile from each scheduled arrival, at least 97% of the offered rate completed, no growing backlog), found by "+
		"a climb, a bisection and rounds at the bracket (docs/capacity.md).")
	t := &document.Table{Header: []string{"Workload", "Engine", "Capacity", "Rounds", "Connections", "Rates measured", "What gave way"}}
	var fg document.FigGroup
	for _, w := range m.CapacityWorkloads {
		gs := m.capacityGroupsFor(w)
		for _, g := range gs {
			c := g.Rep.Capacity
			capText := capacityText(c)
			switch {
			case len(g.Used) > 1 && roundsWithoutKnee(g) != "":
				// A median over rounds of which some found no capacity would be no figure of the
				// engine's (a round with no rate is not 0/s): each round as it ended.
				capText = eachRoundsCapacity(g)
			case len(g.Samples) > 1:
				capText = fmt.Sprintf("%s/s median of %d rounds (%s to %s)", fmtRate(g.TPS), len(g.Samples), fmtRate(g.MinTPS), fmtRate(g.MaxTPS))
				soft := *c
				if soft.Floor = groupFloor(g); soft.FloorNote() != "" {
					capText += " (" + soft.FloorNote() + ")"
				}
			}
			t.Rows = append(t.Rows, []document.Cell{{Text: w, Head: true}, {Text: g.V.Name}, {Text: capText}, {Text: fmtInt(int64(len(g.Used)))},
				{Text: fmtInt(int64(c.Connections))}, {Text: fmtInt(int64(len(c.Steps)))}, {Text: strings.TrimPrefix(gaveWayText(g), "; ")}})
		}
		if svg, err := capacityChart(w, gs); err == nil && svg != "" {
			fg.Figures = append(fg.Figures, document.Figure{Title: w + ": latency against offered rate, the capacity circled", SVG: svg})
		}
	}
	s.Tables = []*document.Table{t}
	if len(fg.Figures) > 0 {
		s.Figures = []document.FigGroup{fg}
	}
	return s
}

// capacityChart is the hockey stick: each engine's objective percentile at every rate its
// representative search measured, in order of rate, the objective's limit dashed.
func capacityChart(w string, gs []*group) (template.HTML, error) {
	spec := document.LineChart{Title: w + ": " + objectiveOf(gs), XName: "offered per second", YName: "latency ms",
		XFromZero: true, Dots: true, MarkerName: "capacity"}
	xmax, limit := 0.0, 0.0
	for _, g := range gs {
		c := g.Rep.Capacity
		limit = c.LimitMS
		s := document.Series{Name: g.V.Name, Color: colorOf(g.V)}
		steps := sortedSteps(c.Steps)
		for _, st := range steps {
			s.X, s.Y = append(s.X, st.OfferedPerS), append(s.Y, math.Min(st.LatencyMS, 10*c.LimitMS))
			xmax = math.Max(xmax, st.OfferedPerS)
		}
		spec.Series = append(spec.Series, s)
		if !c.AtLeast && c.Reached != "no rate" {
			spec.Markers = append(spec.Markers, document.Marker{X: c.PerS, Y: c.LimitMS, Color: colorOf(g.V)})
		}
	}
	if limit > 0 && xmax > 0 {
		spec.Series = append(spec.Series, document.Series{Name: "objective", X: []float64{0, xmax}, Y: []float64{limit, limit}, Dashed: true})
	}
	return spec.SVG()
}

// sortedSteps orders a search's rates by offered rate, each rate once (its last measurement).
func sortedSteps(steps []result.CapacityStep) []result.CapacityStep {
	last := map[float64]result.CapacityStep{}
	for _, st := range steps {
		last[st.OfferedPerS] = st
	}
	out := make([]result.CapacityStep, 0, len(last))
	for _, st := range last {
		out = append(out, st)
	}
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j].OfferedPerS < out[j-1].OfferedPerS; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}
