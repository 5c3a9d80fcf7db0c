package document

import (
	"bytes"
	"fmt"
	"html"
	"html/template"
	"strings"

	chart "github.com/wcharczuk/go-chart/v2"
	"github.com/wcharczuk/go-chart/v2/drawing"
)

// plot is what every chart here shares: a y axis on the left with grid lines at its ticks, a
// legend above the plot area, an accessible name.
type plot struct {
	Title              string
	Width, Height, Top int // Top: room above the plot area for one row of legend
	XAxis              chart.XAxis
	YName              string
	YTicks             []chart.Tick
	Series             []chart.Series
}

func axisStyle() chart.Style {
	return chart.Style{FontSize: 10, StrokeColor: drawing.ColorFromHex("666666"), FontColor: drawing.ColorFromHex("333333")}
}

// svg renders the plot. A legend too wide for one row wraps, and the chart grows by the extra
// rows so the plot area keeps its size.
func (p plot) svg() (template.HTML, error) {
	grid := chart.Style{StrokeColor: drawing.ColorFromHex("e5e5e5"), StrokeWidth: 1}
	var gridLines []chart.GridLine
	for _, t := range p.YTicks[1:] {
		gridLines = append(gridLines, chart.GridLine{Value: t.Value, Style: grid})
	}
	// The y axis' labels and name take about yAxisRoom of the width left of the plot area.
	const left, right, yAxisRoom = 16, 24, 64
	keys := layoutLegend(p.Series, p.Width-left-right-yAxisRoom)
	extra := (legendRows(keys) - 1) * legendRowHeight
	c := chart.Chart{
		Width:      p.Width,
		Height:     p.Height + extra,
		Background: chart.Style{Padding: chart.Box{Top: p.Top + extra, Left: left, Right: right, Bottom: 10}},
		XAxis:      p.XAxis,
		// go-chart draws the primary y axis on the right; readers look for it on the left, where
		// the secondary axis goes. The hidden primary axis still needs the ticks: its range is
		// taken from them, and go-chart derives the secondary range from the primary ticks too.
		YAxis: chart.YAxis{Style: chart.Hidden(), Ticks: p.YTicks},
		YAxisSecondary: chart.YAxis{
			Name: Text(p.YName), Style: axisStyle(), Ticks: p.YTicks,
			GridLines: gridLines, GridMajorStyle: grid,
		},
		Series: p.Series,
	}
	c.Elements = []chart.Renderable{legend(keys, extra)}
	var buf bytes.Buffer
	if err := c.Render(chart.SVG, &buf); err != nil {
		return "", fmt.Errorf("chart %q: %w", p.Title, err)
	}
	return labelSVG(buf.String(), p.Title), nil
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

// markerSeries rings points over the other series. It implements chart.Series itself because
// go-chart's dots are filled discs of the line's size, too like the step dots to stand out.
type markerSeries struct {
	Name   string
	Points []Marker
}

func (ms markerSeries) GetName() string           { return ms.Name }
func (ms markerSeries) GetYAxis() chart.YAxisType { return chart.YAxisSecondary }
func (ms markerSeries) GetStyle() chart.Style     { return chart.Style{} }
func (ms markerSeries) Validate() error           { return nil }

func (ms markerSeries) Render(r chart.Renderer, cb chart.Box, xrange, yrange chart.Range, _ chart.Style) {
	for _, p := range ms.Points {
		x := cb.Left + xrange.Translate(p.X)
		y := cb.Bottom - yrange.Translate(p.Y)
		drawRing(r, x, y, hex(p.Color))
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
