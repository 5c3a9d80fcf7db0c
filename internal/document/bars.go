package document

import (
	"fmt"
	"html/template"
	"math"
	"strconv"

	chart "github.com/wcharczuk/go-chart/v2"
)

// BarChart is grouped bars over named categories, one bar per series in each group (TPC-H's
// seconds per query, a study's pages per phase), or with Lines a dotted line per series.
// go-chart's own BarChart has one bar per value and no groups, so the series draw themselves.
type BarChart struct {
	Title, XName, YName string
	Categories          []string
	Series              []BarSeries
	Lines               bool
	// LogY draws the y axis by powers of ten: when the largest value is many times the
	// smallest, the small ones would be invisible on a linear axis.
	LogY bool
	// Width and Height default to 680 × 300.
	Width, Height int
}

// BarSeries is one engine's values, one per category; NaN leaves a gap. Failed marks the
// categories where it has no valid value rather than none at all: a cross at the bar's foot.
// Lo and Hi, when set, are an interval around each value (NaN: none), drawn as a whisker.
type BarSeries struct {
	Name   string
	Color  string
	Values []float64
	Failed []bool
	Lo, Hi []float64
}

// SVG draws the chart; "" when no series has a value.
func (bc BarChart) SVG() (out template.HTML, err error) {
	defer func() {
		// go-chart panics on some degenerate inputs; one bad chart must not lose the whole page.
		if p := recover(); p != nil {
			out, err = "", fmt.Errorf("chart %q: %v", bc.Title, p)
		}
	}()
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, s := range bc.Series {
		for _, v := range s.Values {
			if Finite(v) {
				lo, hi = math.Min(lo, v), math.Max(hi, v)
			}
		}
	}
	if len(bc.Categories) == 0 || math.IsInf(hi, -1) {
		return "", nil
	}
	yticks, base, tr := bc.yAxis(lo, hi)
	// Category i sits at x = i+1; invisible end ticks leave half a category of room either side.
	xticks := []chart.Tick{{Value: 0.5}}
	for i, c := range bc.Categories {
		xticks = append(xticks, chart.Tick{Value: float64(i + 1), Label: Text(c)})
	}
	xticks = append(xticks, chart.Tick{Value: float64(len(bc.Categories)) + 0.5})
	var series []chart.Series
	for i, s := range bc.Series {
		series = append(series, bc.draw(s, i, base, tr))
	}
	p := plot{Title: bc.Title, Width: bc.Width, Height: bc.Height, Top: 40, YName: bc.YName, YTicks: yticks, Series: series,
		XAxis: chart.XAxis{Name: Text(bc.XName), Style: axisStyle(), Ticks: xticks}}
	if p.Width == 0 {
		p.Width, p.Height = 680, 300
	}
	return p.svg()
}

// yAxis is the y ticks, where bars start and how a value maps onto the axis.
func (bc BarChart) yAxis(lo, hi float64) (ticks []chart.Tick, base float64, tr func(float64) float64) {
	if !bc.LogY || lo <= 0 {
		return NiceTicks(0, math.Max(hi, 0), Fixed), 0, func(v float64) float64 { return v }
	}
	a, b := math.Floor(math.Log10(lo)), math.Ceil(math.Log10(hi))
	if b <= a {
		b = a + 1
	}
	for k := a; k <= b; k++ {
		ticks = append(ticks, chart.Tick{Value: k, Label: GroupDigits(strconv.FormatFloat(math.Pow(10, k), 'f', -1, 64))})
	}
	return ticks, a, math.Log10
}

// draw is series s as go-chart draws it: bars in slot i of every group, or a dotted line.
func (bc BarChart) draw(s BarSeries, i int, base float64, tr func(float64) float64) chart.Series {
	if bc.Lines {
		ls := categoryLine{Name: Text(s.Name), Color: s.Color}
		for c, v := range s.Values {
			ls.X, ls.Y = append(ls.X, float64(c+1)), append(ls.Y, tr(v))
		}
		return ls
	}
	bs := groupBars{Name: Text(s.Name), Color: s.Color, Index: i, Count: len(bc.Series), Base: base}
	for c, v := range s.Values {
		switch {
		case c < len(s.Failed) && s.Failed[c]:
			bs.Failed = append(bs.Failed, float64(c+1))
		case Finite(v):
			bs.X = append(bs.X, float64(c+1))
			bs.Y = append(bs.Y, tr(v))
			lo, hi := math.NaN(), math.NaN()
			if c < len(s.Lo) && c < len(s.Hi) && Finite(s.Lo[c]) && Finite(s.Hi[c]) {
				lo, hi = tr(s.Lo[c]), tr(s.Hi[c])
			}
			bs.Lo, bs.Hi = append(bs.Lo, lo), append(bs.Hi, hi)
		}
	}
	return bs
}

// groupBars draws one series of a grouped bar chart: slot Index of Count in each group.
type groupBars struct {
	Name         string
	Color        string
	Index, Count int
	X, Y         []float64 // group centres and bar tops, in axis units
	Lo, Hi       []float64 // per bar, its interval's ends in axis units (NaN: none)
	Base         float64   // where bars start, in axis units
	Failed       []float64 // group centres where this series has no valid value
}

func (bs groupBars) GetName() string           { return bs.Name }
func (bs groupBars) GetYAxis() chart.YAxisType { return chart.YAxisSecondary }
func (bs groupBars) GetStyle() chart.Style     { return chart.Style{StrokeColor: hex(bs.Color)} }
func (bs groupBars) Validate() error           { return nil }

// slot is the x span of this series' bar in the group centred at x.
func (bs groupBars) slot(x float64) (float64, float64) {
	const groupWidth = 0.8
	w := groupWidth / float64(bs.Count)
	left := x - groupWidth/2 + w*float64(bs.Index)
	return left, left + w
}

func (bs groupBars) Render(r chart.Renderer, cb chart.Box, xrange, yrange chart.Range, _ chart.Style) {
	c := hex(bs.Color)
	y0 := cb.Bottom - yrange.Translate(bs.Base)
	for i, x := range bs.X {
		l, rt := bs.slot(x)
		x0, x1 := cb.Left+xrange.Translate(l), cb.Left+xrange.Translate(rt)
		if x1-x0 > 2 {
			x1-- // a hairline gap keeps neighbouring bars apart
		}
		y1 := cb.Bottom - yrange.Translate(bs.Y[i])
		r.SetStrokeDashArray(nil)
		r.SetFillColor(c)
		r.SetStrokeColor(c)
		r.SetStrokeWidth(0.5)
		r.MoveTo(x0, y0)
		r.LineTo(x0, y1)
		r.LineTo(x1, y1)
		r.LineTo(x1, y0)
		r.Close()
		r.FillStroke()
		if i < len(bs.Lo) && Finite(bs.Lo[i]) {
			bs.whisker(r, (x0+x1)/2, cb.Bottom-yrange.Translate(bs.Lo[i]), cb.Bottom-yrange.Translate(bs.Hi[i]))
		}
	}
	// A cross at the foot of a missing bar says there is no valid value rather than a tiny one.
	for _, x := range bs.Failed {
		l, rt := bs.slot(x)
		xm := cb.Left + xrange.Translate((l+rt)/2)
		r.SetStrokeDashArray(nil)
		r.SetStrokeColor(c)
		r.SetStrokeWidth(1.5)
		r.MoveTo(xm-3, y0-9)
		r.LineTo(xm+3, y0-3)
		r.Stroke()
		r.MoveTo(xm-3, y0-3)
		r.LineTo(xm+3, y0-9)
		r.Stroke()
	}
}

// whisker draws an interval from yLo to yHi at x, in a dark grey that shows on any bar colour.
func (bs groupBars) whisker(r chart.Renderer, x, yLo, yHi int) {
	r.SetStrokeDashArray(nil)
	r.SetStrokeColor(hex("#333333"))
	r.SetStrokeWidth(1.5)
	r.MoveTo(x, yLo)
	r.LineTo(x, yHi)
	r.Stroke()
	for _, y := range []int{yLo, yHi} {
		r.MoveTo(x-4, y)
		r.LineTo(x+4, y)
		r.Stroke()
	}
}

// categoryLine is a line over categories with a dot at each value; unlike go-chart's lines it
// breaks at a gap (NaN) rather than joining across a category that has no value.
type categoryLine struct {
	Name, Color string
	X, Y        []float64
}

func (s categoryLine) GetName() string           { return s.Name }
func (s categoryLine) GetYAxis() chart.YAxisType { return chart.YAxisSecondary }
func (s categoryLine) GetStyle() chart.Style     { return chart.Style{StrokeColor: hex(s.Color)} }
func (s categoryLine) Validate() error           { return nil }

func (s categoryLine) Render(r chart.Renderer, cb chart.Box, xr, yr chart.Range, _ chart.Style) {
	c := hex(s.Color)
	r.SetStrokeColor(c)
	r.SetStrokeWidth(2)
	r.SetStrokeDashArray(nil)
	// The renderer keeps the last fill colour; a line path must not be filled with it.
	r.SetFillColor(c.WithAlpha(0))
	started := false
	for i, v := range s.Y {
		if !Finite(v) {
			started = false
			continue
		}
		x, y := cb.Left+xr.Translate(s.X[i]), cb.Bottom-yr.Translate(v)
		if started {
			r.LineTo(x, y)
		} else {
			r.MoveTo(x, y)
			started = true
		}
	}
	r.Stroke()
	for i, v := range s.Y {
		if Finite(v) {
			r.SetFillColor(c)
			r.Circle(3.5, cb.Left+xr.Translate(s.X[i]), cb.Bottom-yr.Translate(v))
		}
	}
}
