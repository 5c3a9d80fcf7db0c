package study

import (
	"bytes"
	"fmt"
	"html"
	"html/template"
	"math"
	"strings"

	chart "github.com/wcharczuk/go-chart/v2"
	"github.com/wcharczuk/go-chart/v2/drawing"

	"github.com/fairbench/fairbench/internal/svgchart"
)

// colorFor gives each series its engine's colour (svgchart.EngineColor, the same as in the
// comparison report), lighter for a second scenario of it.
func colorFor(kind string, shade int) string {
	c := svgchart.EngineColor(kind)
	if c == "" {
		c = "#7f7f7f"
	}
	if shade == 0 {
		return c
	}
	col := drawing.ColorFromHex(strings.TrimPrefix(c, "#"))
	mix := func(v uint8) uint8 { return uint8(float64(v) + (255-float64(v))*0.5) }
	return fmt.Sprintf("#%02x%02x%02x", mix(col.R), mix(col.G), mix(col.B))
}

// barSeries is one coloured set of bars, one value per category; NaN leaves a gap.
type barSeries struct {
	Name   string
	Color  string
	Values []float64
}

// categorySeries draws grouped bars or a dotted line over categories at x = 0, 1, 2, ...
// go-chart's own BarChart has no groups, so this draws them itself on a normal chart.
type categorySeries struct {
	name   string
	color  drawing.Color
	values []float64
	bar    bool
	slot   int // this series' place within a group
	slots  int // series per group
}

func (s categorySeries) GetName() string           { return s.name }
func (s categorySeries) GetYAxis() chart.YAxisType { return chart.YAxisSecondary }
func (s categorySeries) GetStyle() chart.Style     { return chart.Style{} }
func (s categorySeries) Validate() error           { return nil }

func (s categorySeries) Render(r chart.Renderer, cb chart.Box, xr, yr chart.Range, _ chart.Style) {
	if s.bar {
		unit := xr.Translate(1) - xr.Translate(0)
		group := float64(unit) * 0.8
		w := group / float64(max(s.slots, 1))
		for i, v := range s.values {
			if !svgchart.Finite(v) {
				continue
			}
			left := float64(cb.Left+xr.Translate(float64(i))) - group/2 + float64(s.slot)*w
			top := cb.Bottom - yr.Translate(v)
			r.SetFillColor(s.color)
			r.SetStrokeColor(s.color)
			r.SetStrokeWidth(0)
			x0, x1 := int(math.Round(left+1)), int(math.Round(left+w-1))
			r.MoveTo(x0, cb.Bottom)
			r.LineTo(x1, cb.Bottom)
			r.LineTo(x1, top)
			r.LineTo(x0, top)
			r.Close()
			r.Fill()
		}
		return
	}
	r.SetStrokeColor(s.color)
	r.SetStrokeWidth(2)
	r.SetStrokeDashArray(nil)
	// The renderer keeps the last fill colour; a line path must not be filled with it.
	r.SetFillColor(drawing.ColorTransparent)
	started := false
	for i, v := range s.values {
		if !svgchart.Finite(v) {
			started = false
			continue
		}
		x, y := cb.Left+xr.Translate(float64(i)), cb.Bottom-yr.Translate(v)
		if started {
			r.LineTo(x, y)
		} else {
			r.MoveTo(x, y)
			started = true
		}
	}
	r.Stroke()
	for i, v := range s.values {
		if svgchart.Finite(v) {
			r.SetFillColor(s.color)
			r.Circle(3.5, cb.Left+xr.Translate(float64(i)), cb.Bottom-yr.Translate(v))
		}
	}
}

// categoryChart renders bars (bar=true) or lines over named categories as an SVG for inlining.
func categoryChart(title, yName string, cats []string, series []barSeries, bar bool) (out template.HTML, err error) {
	defer func() {
		// go-chart panics on some degenerate inputs; one bad chart must not lose the report.
		if p := recover(); p != nil {
			out, err = "", fmt.Errorf("chart %q: %v", title, p)
		}
	}()
	if len(cats) == 0 {
		return "", nil
	}
	var cs []chart.Series
	ymax := 0.0
	slot := 0
	for _, s := range series {
		has := false
		for _, v := range s.Values {
			if svgchart.Finite(v) {
				has = true
				ymax = math.Max(ymax, v)
			}
		}
		if !has {
			continue
		}
		cs = append(cs, categorySeries{name: svgchart.Text(s.Name), color: drawing.ColorFromHex(strings.TrimPrefix(s.Color, "#")),
			values: s.Values, bar: bar, slot: slot})
		slot++
	}
	if len(cs) == 0 {
		return "", nil
	}
	for i := range cs {
		c := cs[i].(categorySeries)
		c.slots = slot
		cs[i] = c
	}
	if ymax <= 0 {
		ymax = 1
	}
	yticks := svgchart.NiceTicks(0, ymax, nil)
	// Invisible end ticks leave half a category of room either side.
	xticks := []chart.Tick{{Value: -0.5, Label: ""}}
	for i, c := range cats {
		xticks = append(xticks, chart.Tick{Value: float64(i), Label: svgchart.Text(c)})
	}
	xticks = append(xticks, chart.Tick{Value: float64(len(cats)) - 0.5, Label: ""})

	grid := chart.Style{StrokeColor: drawing.ColorFromHex("e5e5e5"), StrokeWidth: 1}
	var gridLines []chart.GridLine
	for _, t := range yticks[1:] {
		gridLines = append(gridLines, chart.GridLine{Value: t.Value, Style: grid})
	}
	axisStyle := chart.Style{FontSize: 10, StrokeColor: drawing.ColorFromHex("666666"), FontColor: drawing.ColorFromHex("333333")}
	c := chart.Chart{
		Width:      680,
		Height:     300,
		Background: chart.Style{Padding: chart.Box{Top: 48, Left: 16, Right: 24, Bottom: 10}},
		XAxis:      chart.XAxis{Style: axisStyle, Ticks: xticks},
		// The primary axis is hidden: readers look for the y axis on the left, where go-chart
		// puts the secondary one. Both need the ticks, since ranges come from them.
		YAxis: chart.YAxis{Style: chart.Hidden(), Ticks: yticks},
		YAxisSecondary: chart.YAxis{Name: svgchart.Text(yName), Style: axisStyle, Ticks: yticks,
			GridLines: gridLines, GridMajorStyle: grid},
		Series: cs,
	}
	c.Elements = []chart.Renderable{legend(cs)}
	var buf bytes.Buffer
	if err := c.Render(chart.SVG, &buf); err != nil {
		return "", fmt.Errorf("chart %q: %w", title, err)
	}
	svg := buf.String()
	svg = strings.Replace(svg, "<svg ", `<svg role="img" aria-label="`+html.EscapeString(title)+`" `, 1)
	if i := strings.Index(svg, ">"); i >= 0 {
		svg = svg[:i+1] + "<title>" + html.EscapeString(title) + "</title>" + svg[i+1:]
	}
	return template.HTML(svg), nil
}

// legend draws a key above the plot with a swatch before each label, measured generously since
// the browser's font may be wider than the one go-chart measures with.
func legend(series []chart.Series) chart.Renderable {
	return func(r chart.Renderer, cb chart.Box, defaults chart.Style) {
		style := chart.Style{Font: defaults.Font, FontSize: 10, FontColor: drawing.ColorFromHex("333333")}
		style.WriteToRenderer(r)
		x, y := cb.Left, 12
		for _, s := range series {
			cs, ok := s.(categorySeries)
			if !ok {
				continue
			}
			tb := r.MeasureText(cs.name)
			w := 20 + tb.Width()*13/10 + 20
			// Wrap rather than run off the right edge; the top padding has room for two rows.
			if x > cb.Left && x+w-20 > cb.Right {
				x, y = cb.Left, y+16
			}
			r.SetFillColor(cs.color)
			r.SetStrokeColor(cs.color)
			r.SetStrokeWidth(0)
			r.MoveTo(x, y-5)
			r.LineTo(x+14, y-5)
			r.LineTo(x+14, y+5)
			r.LineTo(x, y+5)
			r.Close()
			r.Fill()
			style.WriteToRenderer(r)
			r.Text(cs.name, x+20, y+tb.Height()/2)
			x += w
		}
	}
}
