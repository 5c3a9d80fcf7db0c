package document

import (
	chart "github.com/wcharczuk/go-chart/v2"
	"github.com/wcharczuk/go-chart/v2/drawing"
)

// legendRowHeight is the distance between two rows of a wrapped legend, in pixels.
const legendRowHeight = 16

// legendEntry is one key of the legend: where its sample starts, on which row.
type legendEntry struct {
	series chart.Series
	name   string
	x, row int
}

// legendLayout places each series' key left to right, wrapping to a new row where a label would
// run past the plot's right edge (five engines with versions do not fit on one row). Labels are
// measured generously: go-chart measures text in Roboto, which the browser may not have, and its
// fallback font is wider.
func legendLayout(r chart.Renderer, series []chart.Series, left, right int) []legendEntry {
	var out []legendEntry
	x, row := left, 0
	for _, s := range series {
		if ms, ok := s.(markerSeries); ok && ms.Name == "" {
			continue
		}
		switch s.(type) {
		case chart.ContinuousSeries, markerSeries, groupBars, categoryLine:
		default:
			continue
		}
		name := s.GetName()
		w := r.MeasureText(name).Width() * 13 / 10
		if x > left && x+28+w > right {
			x, row = left, row+1
		}
		out = append(out, legendEntry{series: s, name: name, x: x, row: row})
		x += 28 + w + 24
	}
	return out
}

// legendFont sets the legend's text style on r.
func legendFont(r chart.Renderer, font chart.Style) chart.Style {
	style := chart.Style{Font: font.Font, FontSize: 10, FontColor: drawing.ColorFromHex("333333")}
	style.WriteToRenderer(r)
	return style
}

// layoutLegend places the legend's keys for a plot area about width wide. go-chart only knows
// where the plot area starts once the chart is drawn, while the room for a second row must be
// asked for before, so the keys are placed first, from the chart's own left edge.
func layoutLegend(series []chart.Series, width int) []legendEntry {
	r, err := chart.SVG(width, 100)
	font, ferr := chart.GetDefaultFont()
	if err != nil || ferr != nil {
		return nil
	}
	r.SetDPI(chart.DefaultDPI)
	legendFont(r, chart.Style{Font: font})
	return legendLayout(r, series, 0, width)
}

// legendRows is how many rows the placed keys take.
func legendRows(entries []legendEntry) int {
	rows := 1
	for _, e := range entries {
		rows = max(rows, e.row+1)
	}
	return rows
}

// legend draws the placed keys above the plot, each sample before its label. extra is the room
// added above the plot for rows after the first.
func legend(entries []legendEntry, extra int) chart.Renderable {
	return func(r chart.Renderer, cb chart.Box, defaults chart.Style) {
		style := legendFont(r, defaults)
		top := (cb.Top - extra) / 2
		for _, e := range entries {
			x, y := cb.Left+e.x, top+e.row*legendRowHeight
			drawKey(r, e.series, x, y)
			style.WriteToRenderer(r)
			tb := r.MeasureText(e.name)
			r.Text(e.name, x+28, y+tb.Height()/2)
		}
	}
}

// drawKey draws a series' sample: a stretch of its line, its ring, or a square of its colour.
func drawKey(r chart.Renderer, s chart.Series, x, y int) {
	switch cs := s.(type) {
	case chart.ContinuousSeries:
		r.SetStrokeColor(cs.Style.StrokeColor)
		r.SetStrokeWidth(3)
		r.SetStrokeDashArray(cs.Style.StrokeDashArray)
		r.MoveTo(x, y)
		r.LineTo(x+22, y)
		r.Stroke()
	case markerSeries:
		drawRing(r, x+11, y, drawing.ColorFromHex("333333"))
	case groupBars, categoryLine:
		c := s.GetStyle().StrokeColor
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
	}
}
