// Package document is every page fairbench writes, independent of format: the comparison
// report, history, the studies and the reproductions build a Doc, and Markdown and HTML both
// render it, so the two formats state the same facts and every page reads and looks the same.
// HTML adds the charts, drawn here too with go-chart, each engine kind in its own colour.
package document

import (
	"fmt"
	"html/template"
)

// Doc is one page: a title, a date, a summary and its sections.
type Doc struct {
	Title   string
	Date    string
	Summary string
	// Legend is the row of colour swatches under the summary (HTML only): one per engine.
	Legend   []Swatch
	Sections []*Section
}

// Swatch is one legend entry.
type Swatch struct {
	Name, Color string
}

// Section is one heading with its paragraphs, tables, bullets, shell code and figures.
type Section struct {
	ID       string
	Heading  string
	Paras    []string
	Tables   []*Table
	Bullets  []string
	Code     string
	Figures  []FigGroup
	HTMLOnly bool // charts only: Markdown readers are told the charts are in the HTML page
}

// Table is a plain table; Numeric marks right-aligned columns.
type Table struct {
	Caption string
	Header  []string
	Numeric []bool // per column: right-aligned
	Rows    [][]Cell
	Foot    []string
}

// Cell is one table cell and how it is emphasised.
type Cell struct {
	Text       string
	Best       bool
	Incomplete bool
	Head       bool // row header, such as the workload name opening a block of rows
	// Saturation marks the step of a ramp where its engine saturated: bold in Markdown, its own
	// class in HTML.
	Saturation bool
	// Failed marks a figure that is not a valid measurement, such as a TPC-H query whose answer
	// was wrong; its text says so in Markdown, HTML also colours it.
	Failed bool
}

// FigGroup is a set of figures shown side by side under an optional sub-heading.
type FigGroup struct {
	Title   string
	Figures []Figure
	Wide    bool // one figure across the page: too much detail for half its width
}

// Figure is a chart already drawn as SVG.
type Figure struct {
	Title string
	SVG   template.HTML
}

// Row is a table row of plain cells.
func Row(texts ...string) []Cell {
	cells := make([]Cell, len(texts))
	for i, t := range texts {
		cells[i] = Cell{Text: t}
	}
	return cells
}

// NumericAfter marks every column from the given one on as numeric: tables of figures with
// words in their first columns.
func NumericAfter(first, columns int) []bool {
	out := make([]bool, columns)
	for i := first; i < columns; i++ {
		out[i] = true
	}
	return out
}

// AddCharts draws the charts and appends them, with figures drawn already, as an HTML-only
// section "HEADING: charts" right after the section they illustrate. Nothing is added when
// there is nothing to show.
func (d *Doc) AddCharts(after *Section, charts []LineChart, figures ...Figure) error {
	var g FigGroup
	for _, c := range charts {
		svg, err := c.SVG()
		if err != nil {
			return err
		}
		if svg != "" {
			g.Figures = append(g.Figures, Figure{Title: c.Title, SVG: svg})
		}
	}
	g.Figures = append(g.Figures, figures...)
	if len(g.Figures) == 0 {
		return nil
	}
	d.Sections = append(d.Sections, &Section{ID: after.ID + "-charts", Heading: after.Heading + ": charts", HTMLOnly: true, Figures: []FigGroup{g}})
	return nil
}

// Render writes d as Markdown and as one self-contained HTML page. Both are rendered before
// either is written, so a failure cannot leave a new report.md beside an old report.html.
func (d *Doc) Render() (md, html []byte, err error) {
	html, err = d.HTML()
	if err != nil {
		return nil, nil, err
	}
	return d.Markdown(), html, nil
}

// Add puts a drawn chart in the group, or a note where it could not be drawn: one bad chart
// must not lose the page.
func (fg *FigGroup) Add(notes *[]string, title string, svg template.HTML, err error) {
	switch {
	case err != nil:
		*notes = append(*notes, fmt.Sprintf("%s: %s: chart not drawn: %v", fg.Title, title, err))
	case svg != "":
		fg.Figures = append(fg.Figures, Figure{Title: title, SVG: svg})
	}
}
