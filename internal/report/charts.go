package report

import (
	"fmt"
	"html/template"
	"math"
	"slices"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/fairbench/fairbench/internal/document"
	"github.com/fairbench/fairbench/internal/result"
)

// colorOf is the variant's colour in every chart and the tables' swatches: its engine's own
// (document.Colors), the same in the studies.
func colorOf(v *variant) string {
	if v.Color != "" {
		return v.Color
	}
	return document.Palette[v.Index%len(document.Palette)]
}

// intervalChart plots one per-interval figure over time, one line per engine, from the run that
// stands for each group. optional drops engines whose figure is all zero: the field was not
// sampled, and a flat line at zero would claim it was measured as zero.
func intervalChart(m *model, gs []*group, yName string, f func(result.Interval) float64, optional bool) (template.HTML, error) {
	spec := intervalSpec(gs, yName, f, optional)
	if yName == "TPS" {
		spec.Markers, spec.MarkerName = faultMarks(gs, spec), "fault injected"
	}
	return spec.SVG()
}

// intervalSpec is intervalChart's chart before drawing, for charts that add to it.
func intervalSpec(gs []*group, yName string, f func(result.Interval) float64, optional bool) document.LineChart {
	spec := document.LineChart{Title: yName + " over time", XName: "seconds", YName: yName, XFromZero: true}
	for _, g := range gs {
		if g == nil || g.Rep == nil || len(g.Rep.Intervals) == 0 {
			continue
		}
		s := document.Series{Name: g.V.Name, Color: colorOf(g.V)}
		nonZero := false
		for _, iv := range g.Rep.Intervals {
			y := f(iv)
			nonZero = nonZero || y != 0
			s.X = append(s.X, iv.T)
			s.Y = append(s.Y, y)
		}
		if optional && !nonZero {
			continue
		}
		if g.Incomplete {
			s.Name += " (incomplete)"
		}
		spec.Series = append(spec.Series, s)
	}
	return spec
}

// percentileTicks place percentiles on a log scale of 1/(1-p), the usual HdrHistogram plot:
// the tail, where engines differ most, gets as much room as the body.
var percentileTicks = []document.Tick{
	{Value: 0, Label: "0%"},
	{Value: math.Log10(2), Label: "50%"},
	{Value: 1, Label: "90%"},
	{Value: 2, Label: "99%"},
	{Value: 3, Label: "99.9%"},
}

// mergedHistogram merges the histograms of the runs a group's figures come from; they are
// stored encoded precisely so that repeats can be merged exactly.
func mergedHistogram(g *group) (*hdrhistogram.Histogram, error) {
	var h *hdrhistogram.Histogram
	for _, r := range g.Used {
		if r.Histogram == "" {
			continue
		}
		d, err := hdrhistogram.Decode([]byte(r.Histogram))
		if err != nil {
			return nil, err
		}
		if h == nil {
			h = d
		} else {
			h.Merge(d)
		}
	}
	return h, nil
}

func percentileChart(m *model, gs []*group) (template.HTML, []string, error) {
	spec := document.LineChart{Title: "latency by percentile", XName: "percentile", YName: "latency ms", XTicks: percentileTicks}
	var notes []string
	for _, g := range gs {
		if g == nil {
			continue
		}
		h, err := mergedHistogram(g)
		if err != nil {
			notes = append(notes, fmt.Sprintf("%s, %s: latency histogram not readable: %v", g.V.Name, g.Workload, err))
			continue
		}
		if h == nil || h.TotalCount() == 0 {
			continue
		}
		s := document.Series{Name: g.V.Name, Color: colorOf(g.V)}
		if g.Incomplete {
			s.Name += " (incomplete)"
		}
		for i := 0; i <= 60; i++ {
			x := float64(i) * 0.05
			p := 100 * (1 - math.Pow(10, -x))
			s.X = append(s.X, x)
			s.Y = append(s.Y, float64(h.ValueAtPercentile(p))/1000)
		}
		spec.Series = append(spec.Series, s)
	}
	svg, err := spec.SVG()
	return svg, notes, err
}

// scalabilityChart plots TPS against thread count on a log2 axis, since sweeps usually double
// the thread count at each step.
func scalabilityChart(m *model, w string) (template.HTML, error) {
	ts := m.Threads[w]
	spec := document.LineChart{Title: w + " TPS by thread count", XName: "threads", YName: "TPS", Dots: true}
	for _, t := range ts {
		if t <= 0 {
			return "", nil
		}
		spec.XTicks = append(spec.XTicks, document.Tick{Value: math.Log2(float64(t)), Label: fmtInt(int64(t))})
	}
	for _, v := range m.variantsFor(w) {
		s := document.Series{Name: v.Name, Color: colorOf(v)}
		for _, t := range ts {
			if g := m.group(v, w, t); g != nil {
				s.X = append(s.X, math.Log2(float64(t)))
				s.Y = append(s.Y, g.TPS)
			}
		}
		spec.Series = append(spec.Series, s)
	}
	return spec.SVG()
}

// rampChart plots one figure of each engine's ramp against its thread count, ringing the
// saturation point. Ramps add threads in equal steps, so the thread axis is linear. With slo, a
// dashed line marks the p99 SLO the ramps were held to.
func rampChart(gs []*group, title, yName string, f func(*group, result.RampStep) float64, slo bool) (template.HTML, error) {
	spec := document.LineChart{Title: title, XName: "threads", YName: yName, XFromZero: true, Dots: true, MarkerName: "saturation point"}
	xmin, xmax := math.Inf(1), math.Inf(-1)
	slos := map[float64]bool{}
	for _, g := range gs {
		if g == nil || g.Ramp == nil || len(g.Ramp.Steps) == 0 {
			continue
		}
		s := document.Series{Name: g.V.Name, Color: colorOf(g.V)}
		if g.Incomplete {
			s.Name += " (incomplete)"
		}
		for _, st := range g.Ramp.Steps {
			s.X = append(s.X, float64(st.Threads))
			s.Y = append(s.Y, f(g, st))
			xmin, xmax = math.Min(xmin, float64(st.Threads)), math.Max(xmax, float64(st.Threads))
		}
		spec.Series = append(spec.Series, s)
		if st, ok := rampStep(g.Ramp, g.Ramp.SaturationThreads); ok {
			spec.Markers = append(spec.Markers, document.Marker{X: float64(st.Threads), Y: f(g, st), Color: colorOf(g.V)})
		}
		if g.Ramp.SLOMS > 0 {
			slos[g.Ramp.SLOMS] = true
		}
	}
	if len(spec.Series) == 0 {
		return "", nil
	}
	if slo && len(slos) == 1 {
		for v := range slos {
			spec.Series = append(spec.Series, document.Series{Name: "SLO " + fmtTrim(v) + " ms", Color: "#666666", Dashed: true,
				X: []float64{xmin, xmax}, Y: []float64{v, v}})
		}
	}
	return spec.SVG()
}

// stepRate is a per-interval figure of a ramp's representative run over one of its steps: the
// intervals run at that client count, their sum divided by their length (perSecond) or their mean
// (a level such as memory or connections in use). Ramp steps keep only the runner's figures; the
// server's are the intervals'.
func stepRate(g *group, threads int, f func(result.Interval) float64, perSecond bool) float64 {
	var sum, secs float64
	n, prev := 0, 0.0
	for _, iv := range g.Rep.Intervals {
		if iv.Threads == threads {
			sum += f(iv)
			secs += iv.T - prev
			n++
		}
		prev = iv.T
	}
	switch {
	case n == 0:
		return 0
	case perSecond && secs > 0:
		return sum / secs
	}
	return sum / float64(n)
}

// headlineChart is the report's one chart of the answer: per workload, each engine's median
// throughput relative to the best engine's, with the 95% interval of that ratio from the repeats
// as a whisker (none for the best itself, nor for single runs, which measure no noise).
func (m *model) headlineChart() (template.HTML, error) {
	bc := document.BarChart{Title: "Throughput relative to the best engine, per workload (whiskers: 95% interval)",
		YName: "× best", Width: 960, Height: 320}
	series := make([]document.BarSeries, len(m.Variants))
	for i, v := range m.Variants {
		series[i] = document.BarSeries{Name: v.Name, Color: colorOf(v)}
	}
	for _, w := range m.AllWorkloads {
		if len(m.Threads[w]) == 0 {
			continue
		}
		rk := rank(m.rule, slices.DeleteFunc(m.headlineGroups(w), func(g *group) bool { return g == nil }))
		if len(rk.ranked) < 2 {
			continue
		}
		best := rk.ranked[0]
		bc.Categories = append(bc.Categories, w)
		for i, v := range m.Variants {
			val, lo, hi := math.NaN(), math.NaN(), math.NaN()
			if g := m.group(v, w, m.Headline[w]); g != nil && !g.Incomplete && best.TPS > 0 {
				val = g.TPS / best.TPS
				if x, y := paired(g, best); g != best {
					if r, ok := m.rule.Of(x, y, true); ok {
						lo, hi = r.Lo, r.Hi
					}
				}
			}
			s := &series[i]
			s.Values, s.Lo, s.Hi = append(s.Values, val), append(s.Lo, lo), append(s.Hi, hi)
		}
	}
	if len(bc.Categories) == 0 {
		return "", nil
	}
	bc.Series = series
	return bc.SVG()
}
