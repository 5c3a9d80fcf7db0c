package study

import (
	"fmt"
	"strings"
	"time"

	"github.com/fairbench/fairbench/internal/document"
)

// page is a study's report as it is built: a document.Doc whose sections after "About this
// study" are numbered, each followed by its charts (HTML only; Markdown readers get the tables).
type page struct {
	doc document.Doc
	n   int
}

// newPage opens a study's report with the facts about its run, and a warning in the summary
// when it did not finish.
func newPage(title string, facts [][2]string, complete bool, failure string) *page {
	p := &page{doc: document.Doc{Title: title}}
	var bullets []string
	for _, f := range facts {
		bullets = append(bullets, f[0]+": "+f[1])
		if f[0] == "When" {
			p.doc.Date = f[1]
		}
	}
	if !complete {
		if failure == "" {
			failure = "the study did not finish"
		}
		p.doc.Summary = "Incomplete: " + failure
	}
	p.doc.Sections = append(p.doc.Sections, &document.Section{ID: "about", Heading: "About this study", Bullets: bullets})
	return p
}

// add appends a section and, after it, the charts that illustrate it.
func (p *page) add(s *document.Section, charts ...document.Figure) {
	p.n++
	s.ID = fmt.Sprintf("s%d", p.n)
	p.doc.Sections = append(p.doc.Sections, s)
	// AddCharts draws nothing here, so it cannot fail.
	_ = p.doc.AddCharts(s, nil, charts...)
}

// figures is a table of figures: words in the first column, right-aligned numbers in the rest.
func figures(caption string, head ...string) *document.Table {
	return &document.Table{Caption: caption, Header: head, Numeric: document.NumericAfter(1, len(head))}
}

// colorFor gives each series its engine's colour (document.EngineColor, the same as in the
// comparison report), lighter for a second scenario of it.
func colorFor(kind string, shade int) string {
	c := document.EngineColor(kind)
	if c == "" {
		c = "#7f7f7f"
	}
	if shade > 0 {
		c = document.Shade(c)
	}
	return c
}

// barChart draws bars (or with lines, dotted lines) over the categories, leaving out series with
// no value at all; no figure when nothing has one.
func barChart(title, figTitle, yName string, cats []string, series []document.BarSeries, lines bool) ([]document.Figure, error) {
	var kept []document.BarSeries
	for _, s := range series {
		for _, v := range s.Values {
			if document.Finite(v) {
				kept = append(kept, s)
				break
			}
		}
	}
	svg, err := document.BarChart{Title: title, YName: yName, Categories: cats, Series: kept, Lines: lines}.SVG()
	if err != nil || svg == "" {
		return nil, err
	}
	return []document.Figure{{Title: figTitle, SVG: svg}}, nil
}

func timeRange(a, b time.Time) string {
	if b.IsZero() {
		return a.Format(time.RFC3339)
	}
	return a.Format(time.RFC3339) + " to " + b.Format("15:04:05") + " (" + b.Sub(a).Round(time.Second).String() + ")"
}

func engineList(infos []EngineInfo) string {
	var parts []string
	for _, e := range infos {
		s := engineName(e.Kind)
		if e.Version != "" {
			s += " " + e.Version
		}
		if e.PageSize > 0 {
			s += fmt.Sprintf(" (%d KB pages)", e.PageSize/1024)
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, "; ")
}

// scenarioLabel names one engine's scenario in charts and tables.
func scenarioLabel(kind, scenario string) string {
	if kind == "postgres" {
		return engineName(kind) + ", " + scenario
	}
	return engineName(kind)
}

func loadedSizes(doc *MVCC) string {
	var parts []string
	for _, e := range doc.Engines {
		if len(e.Scenarios) > 0 && e.Scenarios[0].DataBytes > 0 {
			parts = append(parts, fmt.Sprintf("%s %s MiB", engineName(e.Kind), mib(e.Scenarios[0].DataBytes)))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return " (loaded: " + strings.Join(parts, ", ") + ")"
}

func lat(avg, p95 float64) string {
	if avg == 0 && p95 == 0 {
		return "–"
	}
	return num(avg) + " / " + num(p95)
}

func perQ(p Phase, v float64) string {
	if p.Queries == 0 {
		return "–"
	}
	return num(v)
}

func perQB(p Phase, v float64) string {
	if p.Queries == 0 {
		return "–"
	}
	return bytesStr(v)
}

func optInt(v *int64) string {
	if v == nil {
		return "–"
	}
	return fmt.Sprint(*v)
}

func history(p Phase) string {
	if p.HistoryListStart == nil {
		return "–"
	}
	return fmt.Sprintf("%d / %d / %d", *p.HistoryListStart, *p.HistoryListMax, *p.HistoryListEnd)
}
