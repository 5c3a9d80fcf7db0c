package report

import (
	"fmt"
	"strings"

	"github.com/fairbench/fairbench/internal/document"
	"github.com/fairbench/fairbench/internal/result"
)

// availFigure is one availability figure of a group over the runs it stands for: counts are
// summed (a lost transaction in any repeat is shown), times take the worst run.
func availFigure(f func(r *result.Result, a *result.Availability) (float64, bool), sum bool) func(g *group) (float64, bool) {
	return func(g *group) (float64, bool) {
		out, any := 0.0, false
		for _, r := range g.Used {
			if r.Availability == nil {
				continue
			}
			v, ok := f(r, r.Availability)
			if !ok {
				continue
			}
			if sum {
				out += v
			} else {
				out = max(out, v)
			}
			any = true
		}
		return out, any
	}
}

func ackFig(get func(a *result.AckCheck) int64) func(*result.Result, *result.Availability) (float64, bool) {
	return func(_ *result.Result, a *result.Availability) (float64, bool) {
		if a.Acks == nil || a.Acks.NotChecked != "" {
			return 0, false
		}
		return float64(get(a.Acks)), true
	}
}

var availabilityRows = []metricRow{
	{Name: "downtime s (no commit)", Format: fmtLagS, Value: availFigure(func(_ *result.Result, a *result.Availability) (float64, bool) { return a.DowntimeS, true }, false)},
	{Name: "longest outage s", Format: fmtLagS, Value: availFigure(func(_ *result.Result, a *result.Availability) (float64, bool) { return a.LongestOutageS, true }, false)},
	{Name: "reconnections", Format: fmtCount, Value: availFigure(func(_ *result.Result, a *result.Availability) (float64, bool) { return float64(a.Reconnections), true }, true)},
	{Name: "errors", Format: fmtCount, Value: availFigure(func(r *result.Result, _ *result.Availability) (float64, bool) { return float64(r.Errors), true }, true)},
	{Name: "retries", Format: fmtCount, Value: availFigure(func(r *result.Result, _ *result.Availability) (float64, bool) { return float64(r.Retries), true }, true)},
	{Name: "in doubt (COMMIT unanswered)", Format: fmtCount, Value: availFigure(func(_ *result.Result, a *result.Availability) (float64, bool) { return float64(a.InDoubt), true }, true)},
	{Name: "acknowledged transactions", NoBest: true, Format: fmtCount, Value: availFigure(ackFig(func(a *result.AckCheck) int64 { return a.Acknowledged }), true)},
	{Name: "acknowledged transactions lost", Format: fmtCount, Value: availFigure(ackFig(func(a *result.AckCheck) int64 { return a.Lost }), true)},
}

// hasAvailability says whether any run had something to say: a fault, a reconnection or an
// outage. A quiet run's zeros would only crowd the report.
func (m *model) hasAvailability() bool {
	for _, r := range m.Results {
		if a := r.Availability; a != nil && (len(a.Faults) > 0 || a.Reconnections > 0 || a.DowntimeS > 0 || a.Acks != nil && a.Acks.Lost > 0) {
			return true
		}
	}
	return false
}

// availabilitySection shows what the faults cost each engine: downtime, reconnections, errors,
// and whether anything acknowledged was lost. Nil when no run had a fault, a reconnection or an
// outage.
func (m *model) availabilitySection() *document.Section {
	if !m.hasAvailability() {
		return nil
	}
	h, num := m.engineHeader("Workload", "Metric")
	num[0], num[1] = false, false
	t := &document.Table{Caption: "Faults, downtime and acknowledged transactions", Header: h, Numeric: num}
	for _, w := range m.Workloads {
		t.Rows = append(t.Rows, m.blockRows(w+", "+threadsText(m.Headline[w]), m.headlineGroups(w), availabilityRows, false)...)
	}
	t.Foot = []string{
		"Downtime is time in which no client committed anything, in gaps of at least 0.1 s (an open loop: twenty mean arrival gaps); clients reconnect after a lost connection with a wait from 50 ms doubling to 1 s and run the transaction again, unless its COMMIT got no answer (in doubt: counted as an error, never repeated).",
		"Acknowledged transactions are those whose COMMIT the client saw succeed, each looked up by id on the surviving nodes after the run; lost ones are counted, never hidden (a loss may be what asynchronous replication allows). — means not checked.",
	}
	s := &document.Section{ID: "availability", Heading: "Faults and availability", Tables: []*document.Table{t}}
	for _, r := range m.Results {
		if a := r.Availability; a != nil {
			for _, f := range a.Faults {
				s.Paras = append(s.Paras, faultLine(m.variantOf(r).Name, r.WorkloadID(), f))
			}
			if a.Acks != nil && a.Acks.NotChecked != "" {
				s.Paras = append(s.Paras, fmt.Sprintf("%s, %s: acknowledged transactions not checked: %s", m.variantOf(r).Name, r.WorkloadID(), a.Acks.NotChecked))
			}
		}
	}
	s.Figures = m.availabilityCharts(&s.Paras)
	return s
}

// faultLine says what one fault did and when.
func faultLine(engine, workload string, f result.FaultEvent) string {
	line := fmt.Sprintf("%s, %s: fault %s on %s at %.1f s", engine, workload, f.Spec, orDash(f.Node), f.AtS)
	if f.EndS > f.AtS {
		line += fmt.Sprintf(", ended at %.1f s", f.EndS)
	}
	if f.Error != "" {
		line += " — " + f.Error
	}
	return line
}

// availabilityText is the runs table's line for a run with something to say about availability.
func availabilityText(r *result.Result) string {
	a := r.Availability
	if a == nil {
		return ""
	}
	var parts []string
	for _, f := range a.Faults {
		parts = append(parts, "fault "+f.Spec)
	}
	if len(a.Faults) > 0 || a.DowntimeS > 0 || a.Reconnections > 0 {
		parts = append(parts, fmt.Sprintf("downtime %.2f s", a.DowntimeS), fmtInt(a.Reconnections)+" reconnections")
	}
	if k := a.Acks; k != nil && k.NotChecked == "" && (len(parts) > 0 || k.Lost > 0) {
		parts = append(parts, "acknowledged transactions lost: "+fmtInt(k.Lost)+" of "+fmtInt(k.Acknowledged))
	}
	return strings.Join(parts, ", ")
}

// availabilityCharts draws downtime and reconnections per interval, with the faults ringed.
func (m *model) availabilityCharts(notes *[]string) []document.FigGroup {
	var out []document.FigGroup
	for _, w := range m.Workloads {
		fg := document.FigGroup{Title: w + ", " + threadsText(m.Headline[w]) + ": availability"}
		gs := m.headlineGroups(w)
		for _, c := range []struct {
			title, y string
			f        func(result.Interval) float64
		}{
			{"Downtime per interval (s with no commit)", "downtime s", func(iv result.Interval) float64 { return iv.DowntimeS }},
			{"Reconnections per interval", "reconnections", func(iv result.Interval) float64 { return float64(iv.Reconnects) }},
		} {
			spec := intervalSpec(gs, c.y, c.f, false)
			spec.Title = c.title
			spec.Markers, spec.MarkerName = faultMarks(gs, spec), "fault"
			svg, err := spec.SVG()
			fg.Add(notes, c.title, svg, err)
		}
		if len(fg.Figures) > 0 {
			out = append(out, fg)
		}
	}
	return out
}

// faultMarks rings each fault of the groups' representative runs on its engine's line, at the
// interval it fired in.
func faultMarks(gs []*group, spec document.LineChart) []document.Marker {
	var out []document.Marker
	for _, g := range gs {
		if g == nil || g.Rep == nil || g.Rep.Availability == nil {
			continue
		}
		for _, f := range g.Rep.Availability.Faults {
			y := 0.0
			for _, s := range spec.Series {
				if !strings.HasPrefix(s.Name, g.V.Name) {
					continue
				}
				y = lineAt(s.X, s.Y, f.AtS)
			}
			out = append(out, document.Marker{X: f.AtS, Y: y, Color: colorOf(g.V)})
		}
	}
	return out
}

// lineAt is the line through (xs, ys) at x, interpolated between the points around it, so a
// ring sits on the line it marks.
func lineAt(xs, ys []float64, x float64) float64 {
	for i := range xs {
		if xs[i] < x {
			continue
		}
		if i == 0 || xs[i] == xs[i-1] {
			return ys[i]
		}
		f := (x - xs[i-1]) / (xs[i] - xs[i-1])
		return ys[i-1] + f*(ys[i]-ys[i-1])
	}
	if len(ys) == 0 {
		return 0
	}
	return ys[len(ys)-1]
}
