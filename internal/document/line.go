package document

import (
	"fmt"
	"html/template"
	"math"
	"sort"

	chart "github.com/wcharczuk/go-chart/v2"
)

// LineChart is a line chart before drawing. Its axes' ticks are computed here: go-chart fails on
// a zero range (one point, or all values equal), and fixed ticks also keep the output
// byte-stable.
type LineChart struct {
	Title, XName, YName string
	Series              []Series
	XTicks              []Tick // fixed ticks, for axes that are not linear in what they show
	XFromZero           bool
	// LogX draws the x axis by the log2 of its values (thread counts 1, 2, 4 ... 512), labelled
	// with the values themselves.
	LogX bool
	Dots bool // a dot at every point, not only at lone ones
	// Markers are points ringed over the lines (a saturation point); MarkerName is their legend entry.
	Markers    []Marker
	MarkerName string
}

// Tick is one labelled place on an axis.
type Tick = chart.Tick

// Series is one line; Color, when set, is its engine's (EngineColor), else the palette's next.
// A Dashed series is a reference (an SLO, a published curve beside a measured one).
type Series struct {
	Name   string
	Color  string
	X, Y   []float64
	Dashed bool
}

// Marker is one ringed point; Color is its series' colour.
type Marker struct {
	X, Y  float64
	Color string
}

// SVG draws the chart; "" when no series has a point to draw.
func (lc LineChart) SVG() (out template.HTML, err error) {
	defer func() {
		// go-chart panics on some degenerate inputs; one bad chart must not lose the whole page.
		if p := recover(); p != nil {
			out, err = "", fmt.Errorf("chart %q: %v", lc.Title, p)
		}
	}()
	if lc.LogX {
		lc = lc.log2X()
	}
	series, xmin, xmax, ymax := lc.lines()
	if len(series) == 0 {
		return "", nil
	}
	if ms := lc.markers(); ms != nil {
		series = append(series, *ms)
	}
	xticks := lc.XTicks
	if len(xticks) < 2 {
		xticks = lc.xTicks(xmin, xmax)
	}
	// Throughput, latency and resource axes start at zero so bar-less lines are not read as
	// differences bigger than they are.
	if ymax <= 0 {
		ymax = 1
	}
	p := plot{Title: lc.Title, Width: 640, Height: 300, Top: 40, YName: lc.YName, YTicks: NiceTicks(0, ymax, Fixed), Series: series,
		XAxis: chart.XAxis{Name: Text(lc.XName), Style: axisStyle(), Ticks: xticks}}
	return p.svg()
}

// lines turns the series into go-chart's, dropping points it cannot place, and returns the
// range of what is left.
func (lc LineChart) lines() (series []chart.Series, xmin, xmax, ymax float64) {
	xmin, xmax = math.Inf(1), math.Inf(-1)
	for si, s := range lc.Series {
		if s.Color == "" {
			s.Color = Palette[si%len(Palette)]
		}
		var xs, ys []float64
		for i := range s.X {
			if i >= len(s.Y) || !Finite(s.X[i]) || !Finite(s.Y[i]) {
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
		style := chart.Style{StrokeColor: hex(s.Color), StrokeWidth: 2}
		if s.Dashed {
			style.StrokeWidth = 1.5
			style.StrokeDashArray = []float64{6, 4}
		} else if lc.Dots || len(xs) == 1 {
			// A lone point draws no line segment; a dot keeps it visible.
			style.DotWidth = 3
			style.DotColor = style.StrokeColor
		}
		// go-chart draws the primary y axis on the right; see plot.
		series = append(series, chart.ContinuousSeries{Name: Text(s.Name), Style: style, XValues: xs, YValues: ys, YAxis: chart.YAxisSecondary})
	}
	return series, xmin, xmax, ymax
}

// markers is the ringed points that go-chart can place; nil when there are none.
func (lc LineChart) markers() *markerSeries {
	ms := markerSeries{Name: Text(lc.MarkerName)}
	for _, p := range lc.Markers {
		if Finite(p.X) && Finite(p.Y) {
			ms.Points = append(ms.Points, p)
		}
	}
	if len(ms.Points) == 0 {
		return nil
	}
	return &ms
}

// xTicks spans the points' x range, from zero when asked; a single x gets room either side.
func (lc LineChart) xTicks(xmin, xmax float64) []chart.Tick {
	if lc.XFromZero {
		xmin = math.Min(0, xmin)
	}
	if xmax <= xmin {
		xmin, xmax = xmin-1, xmax+1
		if lc.XFromZero && xmin < 0 {
			xmin, xmax = 0, xmax+1
		}
	}
	return NiceTicks(xmin, xmax, Fixed)
}

// log2X is the chart with every x replaced by its log2 and, unless it has its own, ticks labelled
// with the x values themselves.
func (lc LineChart) log2X() LineChart {
	seen := map[float64]bool{}
	var ticks []chart.Tick
	series := make([]Series, len(lc.Series))
	for i, s := range lc.Series {
		s.X = append([]float64(nil), s.X...)
		for j, x := range s.X {
			if !seen[x] {
				seen[x] = true
				ticks = append(ticks, chart.Tick{Value: log2(x), Label: fmt.Sprint(x)})
			}
			s.X[j] = log2(x)
		}
		series[i] = s
	}
	sort.Slice(ticks, func(i, j int) bool { return ticks[i].Value < ticks[j].Value })
	markers := make([]Marker, len(lc.Markers))
	for i, m := range lc.Markers {
		m.X = log2(m.X)
		markers[i] = m
	}
	lc.Series, lc.Markers, lc.LogX = series, markers, false
	if len(lc.XTicks) == 0 {
		lc.XTicks = ticks
	}
	return lc
}

func log2(x float64) float64 { return math.Log2(max(x, 1)) }
