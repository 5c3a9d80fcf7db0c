package report

import (
	"fmt"
	"sort"
	"strings"

	"github.com/fairbench/fairbench/internal/document"
	"github.com/fairbench/fairbench/internal/history"
)

// HistoryMarkdown renders the lines as one table (`fairbench history`).
func HistoryMarkdown(lines []history.Line) []byte {
	return historyDocument(lines, false).Markdown()
}

// HistoryHTML renders the same table and a chart of TPS and p99 over the runs per workload.
func HistoryHTML(lines []history.Line) ([]byte, error) {
	return historyDocument(lines, true).HTML()
}

func historyDocument(lines []history.Line, charts bool) *document.Doc {
	t := &document.Table{
		Header:  []string{"engine and workload", "run", "started (UTC)", "server version", "fairbench", "fingerprint", "TPS", "p99 ms", "plan changed", "from"},
		Numeric: []bool{false, true, false, false, false, false, true, true, false, false},
		Foot: []string{"The fingerprint hashes the workload's options, threads, rate and the server's own settings: " +
			"rows with the same fingerprint ran the same test, so a change between them is the engine's or the machine's.",
			"On a capacity line (capacity at an objective), TPS is the capacity each search found: the highest arrival rate that met the objective.",
			"Plan changed names the read statements whose plan differs from the previous run that recorded plans (workload files record each read statement's plan at prepare)."},
	}
	for _, l := range lines {
		for i, p := range l.Points {
			head := ""
			if i == 0 {
				head = l.Key.String()
			}
			tps := document.Cell{Text: fmtRate(p.TPS), Incomplete: !p.Complete}
			if !p.Complete {
				tps.Text += " (incomplete)"
			}
			if p.Capacity != "" {
				tps.Text = p.Capacity
			}
			t.Rows = append(t.Rows, []document.Cell{{Text: head, Head: head != ""}, {Text: fmt.Sprint(i + 1)},
				{Text: p.StartedAt}, {Text: p.Version}, {Text: toolBuild(p)}, {Text: p.Fingerprint}, tps, {Text: fmtMS(p.P99MS)},
				{Text: strings.Join(p.PlansChanged, ", ")}, {Text: p.Source}})
		}
	}
	d := &document.Doc{
		Title:    "fairbench history",
		Date:     historySpan(lines),
		Summary:  fmt.Sprintf("%d engine and workload steps across the runs given, oldest first.", len(lines)),
		Sections: []*document.Section{{ID: "history", Heading: "Runs over time", Tables: []*document.Table{t}}},
	}
	if charts {
		if figs := historyFigures(lines); len(figs.Figures) > 0 {
			d.Sections = append(d.Sections, &document.Section{ID: "history-charts", Heading: "Charts", HTMLOnly: true, Figures: []document.FigGroup{figs}})
		}
	}
	return d
}

// toolBuild is the fairbench that measured the point: its version, and its commit when known.
func toolBuild(p history.Point) string {
	if p.ToolCommit == "" {
		return p.ToolVersion
	}
	return p.ToolVersion + " " + p.ToolCommit
}

// historyFigures draws, per workload and label, TPS and p99 by run number with one line per engine.
func historyFigures(lines []history.Line) document.FigGroup {
	byWorkload := map[string][]history.Line{}
	var names []string
	for _, l := range lines {
		w := l.Key.Workload
		if l.Key.Label != "" {
			w += " " + l.Key.Label
		}
		if byWorkload[w] == nil {
			names = append(names, w)
		}
		byWorkload[w] = append(byWorkload[w], l)
	}
	sort.Strings(names)
	var g document.FigGroup
	for _, w := range names {
		for _, m := range []struct {
			y string
			f func(history.Point) float64
		}{{"TPS", func(p history.Point) float64 { return p.TPS }}, {"p99 ms", func(p history.Point) float64 { return p.P99MS }}} {
			spec := document.LineChart{Title: w + ": " + m.y + " by run", XName: "run", YName: m.y, Dots: true, XFromZero: false}
			var kinds []string
			for _, l := range byWorkload[w] {
				kinds = append(kinds, l.Key.Engine)
			}
			colors := document.Colors(kinds)
			for i, l := range byWorkload[w] {
				s := document.Series{Name: l.Key.Engine, Color: colors[i]}
				for j, p := range l.Points {
					s.X = append(s.X, float64(j+1))
					s.Y = append(s.Y, m.f(p))
				}
				spec.Series = append(spec.Series, s)
			}
			svg, err := spec.SVG()
			if err == nil && svg != "" {
				g.Figures = append(g.Figures, document.Figure{Title: spec.Title, SVG: svg})
			}
		}
	}
	return g
}

// historySpan is the first and last start time among the runs.
func historySpan(lines []history.Line) string {
	first, last := "", ""
	for _, l := range lines {
		for _, p := range l.Points {
			if first == "" || p.StartedAt < first {
				first = p.StartedAt
			}
			if p.StartedAt > last {
				last = p.StartedAt
			}
		}
	}
	return "runs from " + first + " to " + last
}
