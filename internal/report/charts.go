package report

import (
	"bytes"
	"fmt"
	"html"
	"html/template"
	"math"
	"strings"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
	chart "github.com/wcharczuk/go-chart/v2"
	"github.com/wcharczuk/go-chart/v2/drawing"

	"github.com/fairbench/fairbench/internal/result"
	"github.com/fairbench/fairbench/internal/svgchart"
)

// palette colours series that belong to no engine (history lines, reference curves).
var palette = svgchart.Palette

// colorOf is the variant's colour in every chart and the tables' swatches: its engine's own
// (svgchart.Colors), the same in the studies.
func colorOf(v *variant) string {
	if v.Color != "" {
		return v.Color
	}
	return palette[v.Index%len(palette)]
}

type lineSeries struct {
	Name   string
	Color  string
	X, Y   []float64
	Dashed bool // a reference line, such as an SLO, rather than a measurement
}

// markerPoint is one point ringed on top of the lines, such as an engine's saturation point.
type markerPoint struct {
	X, Y  float64
	Color string
}

type lineSpec struct {
	Title        string
	XName, YName string
	Series       []lineSeries
	XTicks       []chart.Tick // fixed ticks, for axes that are not linear in what they show
	XFromZero    bool
	Dots         bool
	// Markers are ringed points drawn over the lines; MarkerName is their legend entry.
	Markers    []markerPoint
	MarkerName string
}

// lineChart draws spec as SVG. It computes both axes' ticks itself: go-chart fails on a zero
// range (one point, or all values equal), and fixed ticks also keep the output byte-stable.
func lineChart(spec lineSpec) (out template.HTML, err error) {
	defer func() {
		// go-chart panics on some degenerate inputs; one bad chart must not lose the whole report.
		if p := recover(); p != nil {
			out, err = "", fmt.Errorf("chart %q: %v", spec.Title, p)
		}
	}()
	var series []chart.Series
	xmin, xmax := math.Inf(1), math.Inf(-1)
	ymax := 0.0
	for si, s := range spec.Series {
		if s.Color == "" {
			s.Color = palette[si%len(palette)]
		}
		var xs, ys []float64
		for i := range s.X {
			if i >= len(s.Y) || !svgchart.Finite(s.X[i]) || !svgchart.Finite(s.Y[i]) {
				continue
			}
			xs = append(xs, s.X[i])
			ys = append(ys, s.Y[i])
			xmin, xmax = math.Min(xmin, s.X[i]), math.Max(xmax, s.X[i])
			ymax = math.Max(ymax, s.Y[i])
		}
		if len(xs) == 0 {
			continue
		}
		style := chart.Style{StrokeColor: drawing.ColorFromHex(strings.TrimPrefix(s.Color, "#")), StrokeWidth: 2}
		if s.Dashed {
			style.StrokeWidth = 1.5
			style.StrokeDashArray = []float64{6, 4}
		} else if spec.Dots || len(xs) == 1 {
			// A lone point draws no line segment; a dot keeps it visible.
			style.DotWidth = 3
			style.DotColor = style.StrokeColor
		}
		series = append(series, chart.ContinuousSeries{Name: svgchart.Text(s.Name), Style: style, XValues: xs, YValues: ys})
	}
	if len(series) == 0 {
		return "", nil
	}

	xticks := spec.XTicks
	if len(xticks) < 2 {
		if spec.XFromZero {
			xmin = math.Min(0, xmin)
		}
		if xmax <= xmin {
			xmin, xmax = xmin-1, xmax+1
			if spec.XFromZero && xmin < 0 {
				xmin, xmax = 0, xmax+1
			}
		}
		xticks = svgchart.NiceTicks(xmin, xmax, fmtFixed)
	}
	// Throughput, latency and resource axes start at zero so bar-less lines are not read as
	// differences bigger than they are.
	if ymax <= 0 {
		ymax = 1
	}
	yticks := svgchart.NiceTicks(0, ymax, fmtFixed)

	grid := chart.Style{StrokeColor: drawing.ColorFromHex("e5e5e5"), StrokeWidth: 1}
	var gridLines []chart.GridLine
	for _, t := range yticks[1:] {
		gridLines = append(gridLines, chart.GridLine{Value: t.Value, Style: grid})
	}
	axisStyle := chart.Style{FontSize: 10, StrokeColor: drawing.ColorFromHex("666666"), FontColor: drawing.ColorFromHex("333333")}
	// go-chart draws the primary y axis on the right; readers look for it on the left, where the
	// secondary axis goes. The hidden primary axis still needs the ticks: its range is taken from
	// them, and go-chart derives the secondary range from the primary ticks too.
	for i := range series {
		cs := series[i].(chart.ContinuousSeries)
		cs.YAxis = chart.YAxisSecondary
		series[i] = cs
	}
	if ms := (markerSeries{Name: svgchart.Text(spec.MarkerName)}); len(spec.Markers) > 0 {
		for _, p := range spec.Markers {
			if svgchart.Finite(p.X) && svgchart.Finite(p.Y) {
				ms.Points = append(ms.Points, p)
			}
		}
		if len(ms.Points) > 0 {
			series = append(series, ms)
		}
	}
	c := chart.Chart{
		Width:      640,
		Height:     300,
		Background: chart.Style{Padding: chart.Box{Top: 40, Left: 16, Right: 24, Bottom: 10}},
		XAxis:      chart.XAxis{Name: svgchart.Text(spec.XName), Style: axisStyle, Ticks: xticks},
		YAxis:      chart.YAxis{Style: chart.Hidden(), Ticks: yticks},
		YAxisSecondary: chart.YAxis{
			Name: svgchart.Text(spec.YName), Style: axisStyle, Ticks: yticks,
			GridLines: gridLines, GridMajorStyle: grid,
		},
		Series: series,
	}
	c.Elements = []chart.Renderable{legend(series)}

	var buf bytes.Buffer
	if err := c.Render(chart.SVG, &buf); err != nil {
		return "", fmt.Errorf("chart %q: %w", spec.Title, err)
	}
	return labelSVG(buf.String(), spec.Title), nil
}

// labelSVG gives a chart an accessible name for screen readers, and a title browsers show on
// hover.
func labelSVG(svg, title string) template.HTML {
	svg = strings.Replace(svg, "<svg ", `<svg role="img" aria-label="`+html.EscapeString(title)+`" `, 1)
	if i := strings.Index(svg, ">"); i >= 0 {
		svg = svg[:i+1] + "<title>" + html.EscapeString(title) + "</title>" + svg[i+1:]
	}
	return template.HTML(svg)
}

// legend draws a key above the plot. go-chart's own legends measure text in Roboto, which the
// browser may not have; its fallback font is wider and the labels then run into the line
// samples. Here each sample comes before its label and labels get generous room.
func legend(series []chart.Series) chart.Renderable {
	return func(r chart.Renderer, cb chart.Box, defaults chart.Style) {
		style := chart.Style{Font: defaults.Font, FontSize: 10, FontColor: drawing.ColorFromHex("333333")}
		style.WriteToRenderer(r)
		x := cb.Left
		y := cb.Top / 2
		for _, s := range series {
			switch cs := s.(type) {
			case chart.ContinuousSeries:
				r.SetStrokeColor(cs.Style.StrokeColor)
				r.SetStrokeWidth(3)
				r.SetStrokeDashArray(cs.Style.StrokeDashArray)
				r.MoveTo(x, y)
				r.LineTo(x+22, y)
				r.Stroke()
			case markerSeries:
				if cs.Name == "" {
					continue
				}
				drawRing(r, x+11, y, drawing.ColorFromHex("333333"))
			case barSeries:
				c := drawing.ColorFromHex(strings.TrimPrefix(cs.Color, "#"))
				r.SetStrokeDashArray(nil)
				r.SetFillColor(c)
				r.SetStrokeColor(c)
				r.SetStrokeWidth(0.5)
				r.MoveTo(x+5, y-6)
				r.LineTo(x+17, y-6)
				r.LineTo(x+17, y+6)
				r.LineTo(x+5, y+6)
				r.Close()
				r.FillStroke()
			default:
				continue
			}
			style.WriteToRenderer(r)
			name := s.GetName()
			tb := r.MeasureText(name)
			r.Text(name, x+28, y+tb.Height()/2)
			x += 28 + tb.Width()*13/10 + 24
		}
	}
}

// markerSeries rings points over the other series. It implements chart.Series itself because
// go-chart's dots are filled discs of the line's size, too like the step dots to stand out.
type markerSeries struct {
	Name   string
	Points []markerPoint
}

func (ms markerSeries) GetName() string           { return ms.Name }
func (ms markerSeries) GetYAxis() chart.YAxisType { return chart.YAxisSecondary }
func (ms markerSeries) GetStyle() chart.Style     { return chart.Style{} }
func (ms markerSeries) Validate() error           { return nil }

func (ms markerSeries) Render(r chart.Renderer, cb chart.Box, xrange, yrange chart.Range, _ chart.Style) {
	for _, p := range ms.Points {
		x := cb.Left + xrange.Translate(p.X)
		y := cb.Bottom - yrange.Translate(p.Y)
		drawRing(r, x, y, drawing.ColorFromHex(strings.TrimPrefix(p.Color, "#")))
	}
}

// drawRing draws a hollow circle with a dot in its middle.
func drawRing(r chart.Renderer, x, y int, c drawing.Color) {
	r.SetStrokeDashArray(nil)
	r.SetFillColor(drawing.ColorWhite.WithAlpha(0))
	r.SetStrokeColor(c)
	r.SetStrokeWidth(2.5)
	r.Circle(7, x, y)
	r.SetFillColor(c)
	r.SetStrokeWidth(1)
	r.Circle(2, x, y)
}

// intervalChart plots one per-interval figure over time, one line per engine, from the run that
// stands for each group. optional drops engines whose figure is all zero: the field was not
// sampled, and a flat line at zero would claim it was measured as zero.
func intervalChart(m *model, gs []*group, yName string, f func(result.Interval) float64, optional bool) (template.HTML, error) {
	spec := intervalSpec(gs, yName, f, optional)
	if yName == "TPS" {
		spec.Markers, spec.MarkerName = faultMarks(gs, spec), "fault injected"
	}
	return lineChart(spec)
}

// intervalSpec is intervalChart's chart before drawing, for charts that add to it.
func intervalSpec(gs []*group, yName string, f func(result.Interval) float64, optional bool) lineSpec {
	spec := lineSpec{Title: yName + " over time", XName: "seconds", YName: yName, XFromZero: true}
	for _, g := range gs {
		if g == nil || g.Rep == nil || len(g.Rep.Intervals) == 0 {
			continue
		}
		s := lineSeries{Name: g.V.Name, Color: colorOf(g.V)}
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
var percentileTicks = []chart.Tick{
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
	spec := lineSpec{Title: "latency by percentile", XName: "percentile", YName: "latency ms", XTicks: percentileTicks}
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
		s := lineSeries{Name: g.V.Name, Color: colorOf(g.V)}
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
	svg, err := lineChart(spec)
	return svg, notes, err
}

// scalabilityChart plots TPS against thread count on a log2 axis, since sweeps usually double
// the thread count at each step.
func scalabilityChart(m *model, w string) (template.HTML, error) {
	ts := m.Threads[w]
	spec := lineSpec{Title: w + " TPS by thread count", XName: "threads", YName: "TPS", Dots: true}
	for _, t := range ts {
		if t <= 0 {
			return "", nil
		}
		spec.XTicks = append(spec.XTicks, chart.Tick{Value: math.Log2(float64(t)), Label: fmtInt(int64(t))})
	}
	for _, v := range m.variantsFor(w) {
		s := lineSeries{Name: v.Name, Color: colorOf(v)}
		for _, t := range ts {
			if g := m.group(v, w, t); g != nil {
				s.X = append(s.X, math.Log2(float64(t)))
				s.Y = append(s.Y, g.TPS)
			}
		}
		spec.Series = append(spec.Series, s)
	}
	return lineChart(spec)
}

// rampChart plots one figure of each engine's ramp against its thread count, ringing the
// saturation point. Ramps add threads in equal steps, so the thread axis is linear. With slo, a
// dashed line marks the p99 SLO the ramps were held to.
func rampChart(gs []*group, title, yName string, f func(*group, result.RampStep) float64, slo bool) (template.HTML, error) {
	spec := lineSpec{Title: title, XName: "threads", YName: yName, XFromZero: true, Dots: true, MarkerName: "saturation point"}
	xmin, xmax := math.Inf(1), math.Inf(-1)
	slos := map[float64]bool{}
	for _, g := range gs {
		if g == nil || g.Ramp == nil || len(g.Ramp.Steps) == 0 {
			continue
		}
		s := lineSeries{Name: g.V.Name, Color: colorOf(g.V)}
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
			spec.Markers = append(spec.Markers, markerPoint{X: float64(st.Threads), Y: f(g, st), Color: colorOf(g.V)})
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
			spec.Series = append(spec.Series, lineSeries{Name: "SLO " + fmtTrim(v) + " ms", Color: "#666666", Dashed: true,
				X: []float64{xmin, xmax}, Y: []float64{v, v}})
		}
	}
	return lineChart(spec)
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
