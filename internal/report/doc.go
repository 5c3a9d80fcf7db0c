package report

import (
	"fmt"
	"html/template"
	"math"
	"sort"

	chart "github.com/wcharczuk/go-chart/v2"
)

// Doc is a document that other packages (reproduce, and the studies in time) render through
// the report's own Markdown and HTML writers, so every page fairbench writes looks and reads
// the same and the two formats can never disagree on a figure.
type Doc struct {
	Title, Date, Summary string
	Sections             []Section
}

// Section is one heading with its paragraphs, tables, bullets and charts (charts are HTML only):
// line charts drawn here from their data, or figures a package drew itself (the studies' bars).
type Section struct {
	ID, Heading string
	Paras       []string
	Tables      []Table
	Bullets     []string
	Code        string
	Charts      []Chart
	Figures     []Figure
}

// Figure is a chart already drawn as SVG.
type Figure struct {
	Title string
	SVG   template.HTML
}

// Table is a plain table; Numeric marks right-aligned columns; Mark, when set, holds one class
// word per cell ("best", "failed", "incomplete") for emphasis.
type Table struct {
	Caption string
	Header  []string
	Numeric []bool
	Rows    [][]string
	Mark    [][]string
	Foot    []string
}

// Chart is a line chart; a Dashed series is a reference (a published curve beside a measured one).
type Chart struct {
	Title, XName, YName string
	Series              []Series
	// LogX draws the x axis by the log of its values (thread counts 1, 2, 4 ... 512).
	LogX bool
	// Markers are points ringed over the lines (a saturation point); MarkerName is their legend entry.
	Markers    []Marker
	MarkerName string
}

// Marker is one ringed point; Color is its series' colour.
type Marker struct {
	X, Y  float64
	Color string
}

// Series is one line; Color, when set, is its engine's (svgchart.EngineColor), else the palette's next.
type Series struct {
	Name   string
	X, Y   []float64
	Dashed bool
	Color  string
}

// RenderDoc writes d as Markdown and as one self-contained HTML page.
func RenderDoc(d Doc) (md, html []byte, err error) {
	doc := &document{Title: d.Title, Date: d.Date, Summary: d.Summary}
	for _, s := range d.Sections {
		sec := &section{ID: s.ID, Heading: s.Heading, Paras: s.Paras, Bullets: s.Bullets, Code: s.Code}
		for _, t := range s.Tables {
			sec.Tables = append(sec.Tables, toTable(t))
		}
		doc.Sections = append(doc.Sections, sec)
		figs, err := toFigures(s.Charts)
		if err != nil {
			return nil, nil, err
		}
		for _, f := range s.Figures {
			figs.Figures = append(figs.Figures, figure(f))
		}
		if len(figs.Figures) > 0 {
			doc.Sections = append(doc.Sections, &section{ID: s.ID + "-charts", Heading: s.Heading + ": charts", HTMLOnly: true, Figures: []figGroup{figs}})
		}
	}
	md = renderMarkdown(doc)
	html, err = renderHTML(doc)
	return md, html, err
}

func toTable(t Table) *table {
	out := &table{Caption: t.Caption, Header: t.Header, Numeric: t.Numeric, Foot: t.Foot}
	for i, row := range t.Rows {
		var cells []cell
		for j, text := range row {
			c := cell{Text: text}
			if i < len(t.Mark) && j < len(t.Mark[i]) {
				switch t.Mark[i][j] {
				case "best":
					c.Best = true
				case "failed":
					c.Failed = true
				case "incomplete":
					c.Incomplete = true
				}
			}
			cells = append(cells, c)
		}
		out.Rows = append(out.Rows, cells)
	}
	return out
}

func toFigures(charts []Chart) (figGroup, error) {
	var g figGroup
	for _, c := range charts {
		spec := lineSpec{Title: c.Title, XName: c.XName, YName: c.YName, Dots: true, MarkerName: c.MarkerName}
		for _, m := range c.Markers {
			x := m.X
			if c.LogX {
				x = log2(x)
			}
			spec.Markers = append(spec.Markers, markerPoint{X: x, Y: m.Y, Color: m.Color})
		}
		for _, s := range c.Series {
			ls := lineSeries{Name: s.Name, Dashed: s.Dashed, Color: s.Color}
			for i := range s.X {
				x := s.X[i]
				if c.LogX {
					x = log2(x)
				}
				ls.X = append(ls.X, x)
			}
			ls.Y = s.Y
			spec.Series = append(spec.Series, ls)
		}
		if c.LogX {
			spec.XTicks = log2Ticks(c.Series)
		}
		svg, err := lineChart(spec)
		if err != nil {
			return g, err
		}
		if svg != "" {
			g.Figures = append(g.Figures, figure{Title: c.Title, SVG: svg})
		}
	}
	return g, nil
}

func log2(x float64) float64 { return math.Log2(max(x, 1)) }

// log2Ticks labels a log2 axis with the x values themselves (1, 2, 4 ...).
func log2Ticks(series []Series) (ticks []chart.Tick) {
	seen := map[float64]bool{}
	for _, s := range series {
		for _, x := range s.X {
			if !seen[x] {
				seen[x] = true
				ticks = append(ticks, chart.Tick{Value: log2(x), Label: fmt.Sprint(x)})
			}
		}
	}
	sort.Slice(ticks, func(i, j int) bool { return ticks[i].Value < ticks[j].Value })
	return ticks
}
